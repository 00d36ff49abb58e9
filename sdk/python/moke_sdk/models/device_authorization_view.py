from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="DeviceAuthorizationView")


@_attrs_define
class DeviceAuthorizationView:
    """A device sign-in as the person who decided it sees it.

    Attributes:
        id (str): device sign-in id, `dva_` followed by 32 hex digits
        user_code (str): `XXXX-XXXX`.
        status (str): `approved` (the device's next poll receives a token) or `denied`.
        created_at (datetime.datetime):
        expires_at (datetime.datetime):
        client_name (None | str | Unset): What the device said it is.
        organization (None | str | Unset):
    """

    id: str
    user_code: str
    status: str
    created_at: datetime.datetime
    expires_at: datetime.datetime
    client_name: None | str | Unset = UNSET
    organization: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        id = self.id

        user_code = self.user_code

        status = self.status

        created_at = self.created_at.isoformat()

        expires_at = self.expires_at.isoformat()

        client_name: None | str | Unset
        if isinstance(self.client_name, Unset):
            client_name = UNSET
        else:
            client_name = self.client_name

        organization: None | str | Unset
        if isinstance(self.organization, Unset):
            organization = UNSET
        else:
            organization = self.organization

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "id": id,
                "user_code": user_code,
                "status": status,
                "created_at": created_at,
                "expires_at": expires_at,
            }
        )
        if client_name is not UNSET:
            field_dict["client_name"] = client_name
        if organization is not UNSET:
            field_dict["organization"] = organization

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        id = d.pop("id")

        user_code = d.pop("user_code")

        status = d.pop("status")

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        expires_at = datetime.datetime.fromisoformat(d.pop("expires_at"))

        def _parse_client_name(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        client_name = _parse_client_name(d.pop("client_name", UNSET))

        def _parse_organization(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        organization = _parse_organization(d.pop("organization", UNSET))

        device_authorization_view = cls(
            id=id,
            user_code=user_code,
            status=status,
            created_at=created_at,
            expires_at=expires_at,
            client_name=client_name,
            organization=organization,
        )

        device_authorization_view.additional_properties = d
        return device_authorization_view

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
