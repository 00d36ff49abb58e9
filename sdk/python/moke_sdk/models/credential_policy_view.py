from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="CredentialPolicyView")


@_attrs_define
class CredentialPolicyView:
    """An organization's credential policy.

    Attributes:
        require_sso (bool):
        require_verified_email (bool):
        etag (str): Send as `If-Match` to update.
        max_token_lifetime_seconds (int | None | Unset):
        updated_at (datetime.datetime | None | Unset): Null while the organization has never set one.
    """

    require_sso: bool
    require_verified_email: bool
    etag: str
    max_token_lifetime_seconds: int | None | Unset = UNSET
    updated_at: datetime.datetime | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        require_sso = self.require_sso

        require_verified_email = self.require_verified_email

        etag = self.etag

        max_token_lifetime_seconds: int | None | Unset
        if isinstance(self.max_token_lifetime_seconds, Unset):
            max_token_lifetime_seconds = UNSET
        else:
            max_token_lifetime_seconds = self.max_token_lifetime_seconds

        updated_at: None | str | Unset
        if isinstance(self.updated_at, Unset):
            updated_at = UNSET
        elif isinstance(self.updated_at, datetime.datetime):
            updated_at = self.updated_at.isoformat()
        else:
            updated_at = self.updated_at

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "require_sso": require_sso,
                "require_verified_email": require_verified_email,
                "etag": etag,
            }
        )
        if max_token_lifetime_seconds is not UNSET:
            field_dict["max_token_lifetime_seconds"] = max_token_lifetime_seconds
        if updated_at is not UNSET:
            field_dict["updated_at"] = updated_at

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        require_sso = d.pop("require_sso")

        require_verified_email = d.pop("require_verified_email")

        etag = d.pop("etag")

        def _parse_max_token_lifetime_seconds(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        max_token_lifetime_seconds = _parse_max_token_lifetime_seconds(d.pop("max_token_lifetime_seconds", UNSET))

        def _parse_updated_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                updated_at_type_0 = datetime.datetime.fromisoformat(data)

                return updated_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        updated_at = _parse_updated_at(d.pop("updated_at", UNSET))

        credential_policy_view = cls(
            require_sso=require_sso,
            require_verified_email=require_verified_email,
            etag=etag,
            max_token_lifetime_seconds=max_token_lifetime_seconds,
            updated_at=updated_at,
        )

        credential_policy_view.additional_properties = d
        return credential_policy_view

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
