from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.org_role import OrgRole

T = TypeVar("T", bound="MemberView")


@_attrs_define
class MemberView:
    """
    Attributes:
        user (str): user id, `usr_` followed by 32 hex digits
        email (str):
        display_name (str):
        role (OrgRole): A role a principal holds in an organization.

            Users hold one through their membership; service accounts hold one
            of their own.
        etag (str): Send as `If-Match` to update.
        joined_at (datetime.datetime):
    """

    user: str
    email: str
    display_name: str
    role: OrgRole
    etag: str
    joined_at: datetime.datetime
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        user = self.user

        email = self.email

        display_name = self.display_name

        role = self.role.value

        etag = self.etag

        joined_at = self.joined_at.isoformat()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "user": user,
                "email": email,
                "display_name": display_name,
                "role": role,
                "etag": etag,
                "joined_at": joined_at,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        user = d.pop("user")

        email = d.pop("email")

        display_name = d.pop("display_name")

        role = OrgRole(d.pop("role"))

        etag = d.pop("etag")

        joined_at = datetime.datetime.fromisoformat(d.pop("joined_at"))

        member_view = cls(
            user=user,
            email=email,
            display_name=display_name,
            role=role,
            etag=etag,
            joined_at=joined_at,
        )

        member_view.additional_properties = d
        return member_view

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
