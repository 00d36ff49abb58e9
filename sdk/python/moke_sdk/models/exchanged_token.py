from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="ExchangedToken")


@_attrs_define
class ExchangedToken:
    """
    Attributes:
        access_token (str):
        token_type (str):
        expires_in (int):
        service_account (str): service account id, `sa_` followed by 32 hex digits
        organization (str): organization id, `org_` followed by 32 hex digits
    """

    access_token: str
    token_type: str
    expires_in: int
    service_account: str
    organization: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        access_token = self.access_token

        token_type = self.token_type

        expires_in = self.expires_in

        service_account = self.service_account

        organization = self.organization

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "access_token": access_token,
                "token_type": token_type,
                "expires_in": expires_in,
                "service_account": service_account,
                "organization": organization,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        access_token = d.pop("access_token")

        token_type = d.pop("token_type")

        expires_in = d.pop("expires_in")

        service_account = d.pop("service_account")

        organization = d.pop("organization")

        exchanged_token = cls(
            access_token=access_token,
            token_type=token_type,
            expires_in=expires_in,
            service_account=service_account,
            organization=organization,
        )

        exchanged_token.additional_properties = d
        return exchanged_token

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
