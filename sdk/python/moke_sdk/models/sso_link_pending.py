from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="SsoLinkPending")


@_attrs_define
class SsoLinkPending:
    """An SSO identity matched an existing account by its address: it signs in
    only once the account's owner confirms.

        Attributes:
            link_token (str): Confirm with this while signed in to the account (`POST /v1/me/sso-links/confirm`).
            detail (str):
    """

    link_token: str
    detail: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        link_token = self.link_token

        detail = self.detail

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "link_token": link_token,
                "detail": detail,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        link_token = d.pop("link_token")

        detail = d.pop("detail")

        sso_link_pending = cls(
            link_token=link_token,
            detail=detail,
        )

        sso_link_pending.additional_properties = d
        return sso_link_pending

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
