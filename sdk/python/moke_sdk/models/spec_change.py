from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="SpecChange")


@_attrs_define
class SpecChange:
    """One value that differs between two specs.

    Attributes:
        path (str): Where, as a JSON Pointer (RFC 6901) into the spec, e.g. `/kubernetes_version` or `/taints/0/effect`.
        before (Any | Unset): The value before; absent when it was absent or null.
        after (Any | Unset): The value after; absent when it is absent or null.
    """

    path: str
    before: Any | Unset = UNSET
    after: Any | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        path = self.path

        before = self.before

        after = self.after

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "path": path,
            }
        )
        if before is not UNSET:
            field_dict["before"] = before
        if after is not UNSET:
            field_dict["after"] = after

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        path = d.pop("path")

        before = d.pop("before", UNSET)

        after = d.pop("after", UNSET)

        spec_change = cls(
            path=path,
            before=before,
            after=after,
        )

        spec_change.additional_properties = d
        return spec_change

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
