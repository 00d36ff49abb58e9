from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="DeviceToken")


@_attrs_define
class DeviceToken:
    """The credential of an approved device sign-in: a personal API token
    acting as the person who approved it, in the organization they chose.
    Given once.

        Attributes:
            access_token (str): `moke_pat_…`; send as `Authorization: Bearer …`. Shown only in this answer.
            token_type (str): Always `Bearer`.
            token_id (str): API token id, `tok_` followed by 32 hex digits
            organization (str): organization id, `org_` followed by 32 hex digits
            user (str): user id, `usr_` followed by 32 hex digits
            expires_at (datetime.datetime | None | Unset): When the token stops working (the organization's credential
                policy), if it does.
    """

    access_token: str
    token_type: str
    token_id: str
    organization: str
    user: str
    expires_at: datetime.datetime | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        access_token = self.access_token

        token_type = self.token_type

        token_id = self.token_id

        organization = self.organization

        user = self.user

        expires_at: None | str | Unset
        if isinstance(self.expires_at, Unset):
            expires_at = UNSET
        elif isinstance(self.expires_at, datetime.datetime):
            expires_at = self.expires_at.isoformat()
        else:
            expires_at = self.expires_at

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "access_token": access_token,
                "token_type": token_type,
                "token_id": token_id,
                "organization": organization,
                "user": user,
            }
        )
        if expires_at is not UNSET:
            field_dict["expires_at"] = expires_at

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        access_token = d.pop("access_token")

        token_type = d.pop("token_type")

        token_id = d.pop("token_id")

        organization = d.pop("organization")

        user = d.pop("user")

        def _parse_expires_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                expires_at_type_0 = datetime.datetime.fromisoformat(data)

                return expires_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        expires_at = _parse_expires_at(d.pop("expires_at", UNSET))

        device_token = cls(
            access_token=access_token,
            token_type=token_type,
            token_id=token_id,
            organization=organization,
            user=user,
            expires_at=expires_at,
        )

        device_token.additional_properties = d
        return device_token

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
