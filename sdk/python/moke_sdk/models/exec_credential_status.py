from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="ExecCredentialStatus")


@_attrs_define
class ExecCredentialStatus:
    """
    Attributes:
        client_certificate_data (str):
        client_key_data (str):
        expiration_timestamp (datetime.datetime):
    """

    client_certificate_data: str
    client_key_data: str
    expiration_timestamp: datetime.datetime
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        client_certificate_data = self.client_certificate_data

        client_key_data = self.client_key_data

        expiration_timestamp = self.expiration_timestamp.isoformat()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "clientCertificateData": client_certificate_data,
                "clientKeyData": client_key_data,
                "expirationTimestamp": expiration_timestamp,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        client_certificate_data = d.pop("clientCertificateData")

        client_key_data = d.pop("clientKeyData")

        expiration_timestamp = datetime.datetime.fromisoformat(d.pop("expirationTimestamp"))

        exec_credential_status = cls(
            client_certificate_data=client_certificate_data,
            client_key_data=client_key_data,
            expiration_timestamp=expiration_timestamp,
        )

        exec_credential_status.additional_properties = d
        return exec_credential_status

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
