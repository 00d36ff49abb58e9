from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="SessionView")


@_attrs_define
class SessionView:
    """One of your sign-in sessions.

    Attributes:
        id (str): session id, `ses_` followed by 32 hex digits
        current (bool): The session making this request.
        method (str): `password` or `sso`.
        organization (str): organization id, `org_` followed by 32 hex digits
        organization_name (str):
        created_at (datetime.datetime):
        expires_at (datetime.datetime):
        last_used_at (datetime.datetime | None | Unset): The last sign-in or token refresh.
        created_from_ip (None | str | Unset):
        last_ip (None | str | Unset):
        user_agent (None | str | Unset):
    """

    id: str
    current: bool
    method: str
    organization: str
    organization_name: str
    created_at: datetime.datetime
    expires_at: datetime.datetime
    last_used_at: datetime.datetime | None | Unset = UNSET
    created_from_ip: None | str | Unset = UNSET
    last_ip: None | str | Unset = UNSET
    user_agent: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        id = self.id

        current = self.current

        method = self.method

        organization = self.organization

        organization_name = self.organization_name

        created_at = self.created_at.isoformat()

        expires_at = self.expires_at.isoformat()

        last_used_at: None | str | Unset
        if isinstance(self.last_used_at, Unset):
            last_used_at = UNSET
        elif isinstance(self.last_used_at, datetime.datetime):
            last_used_at = self.last_used_at.isoformat()
        else:
            last_used_at = self.last_used_at

        created_from_ip: None | str | Unset
        if isinstance(self.created_from_ip, Unset):
            created_from_ip = UNSET
        else:
            created_from_ip = self.created_from_ip

        last_ip: None | str | Unset
        if isinstance(self.last_ip, Unset):
            last_ip = UNSET
        else:
            last_ip = self.last_ip

        user_agent: None | str | Unset
        if isinstance(self.user_agent, Unset):
            user_agent = UNSET
        else:
            user_agent = self.user_agent

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "id": id,
                "current": current,
                "method": method,
                "organization": organization,
                "organization_name": organization_name,
                "created_at": created_at,
                "expires_at": expires_at,
            }
        )
        if last_used_at is not UNSET:
            field_dict["last_used_at"] = last_used_at
        if created_from_ip is not UNSET:
            field_dict["created_from_ip"] = created_from_ip
        if last_ip is not UNSET:
            field_dict["last_ip"] = last_ip
        if user_agent is not UNSET:
            field_dict["user_agent"] = user_agent

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        id = d.pop("id")

        current = d.pop("current")

        method = d.pop("method")

        organization = d.pop("organization")

        organization_name = d.pop("organization_name")

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        expires_at = datetime.datetime.fromisoformat(d.pop("expires_at"))

        def _parse_last_used_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                last_used_at_type_0 = datetime.datetime.fromisoformat(data)

                return last_used_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        last_used_at = _parse_last_used_at(d.pop("last_used_at", UNSET))

        def _parse_created_from_ip(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        created_from_ip = _parse_created_from_ip(d.pop("created_from_ip", UNSET))

        def _parse_last_ip(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        last_ip = _parse_last_ip(d.pop("last_ip", UNSET))

        def _parse_user_agent(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        user_agent = _parse_user_agent(d.pop("user_agent", UNSET))

        session_view = cls(
            id=id,
            current=current,
            method=method,
            organization=organization,
            organization_name=organization_name,
            created_at=created_at,
            expires_at=expires_at,
            last_used_at=last_used_at,
            created_from_ip=created_from_ip,
            last_ip=last_ip,
            user_agent=user_agent,
        )

        session_view.additional_properties = d
        return session_view

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
