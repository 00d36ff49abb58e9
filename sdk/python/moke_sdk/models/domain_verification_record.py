from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="DomainVerificationRecord")


@_attrs_define
class DomainVerificationRecord:
    """The DNS record that proves a domain.

    Attributes:
        name (str): e.g. `_moke-challenge.example.com`.
        record_type (str): Always `TXT`.
        value (str): The record's text, `moke-domain-verification=…`.
    """

    name: str
    record_type: str
    value: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        name = self.name

        record_type = self.record_type

        value = self.value

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "name": name,
                "record_type": record_type,
                "value": value,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        name = d.pop("name")

        record_type = d.pop("record_type")

        value = d.pop("value")

        domain_verification_record = cls(
            name=name,
            record_type=record_type,
            value=value,
        )

        domain_verification_record.additional_properties = d
        return domain_verification_record

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
