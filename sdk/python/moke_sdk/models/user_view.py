from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="UserView")


@_attrs_define
class UserView:
    """
    Attributes:
        id (str): user id, `usr_` followed by 32 hex digits
        email (str):
        display_name (str):
        email_verified (bool):
        created_at (datetime.datetime):
    """

    id: str
    email: str
    display_name: str
    email_verified: bool
    created_at: datetime.datetime
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        id = self.id

        email = self.email

        display_name = self.display_name

        email_verified = self.email_verified

        created_at = self.created_at.isoformat()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "id": id,
                "email": email,
                "display_name": display_name,
                "email_verified": email_verified,
                "created_at": created_at,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        id = d.pop("id")

        email = d.pop("email")

        display_name = d.pop("display_name")

        email_verified = d.pop("email_verified")

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        user_view = cls(
            id=id,
            email=email,
            display_name=display_name,
            email_verified=email_verified,
            created_at=created_at,
        )

        user_view.additional_properties = d
        return user_view

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
