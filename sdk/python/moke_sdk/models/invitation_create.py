from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

from ..models.org_role import OrgRole

T = TypeVar("T", bound="InvitationCreate")


@_attrs_define
class InvitationCreate:
    """
    Attributes:
        email (str): An e-mail address: one `@`, a domain with a `.` not at either end, no
            whitespace or control characters, at most 254 characters. Surrounding
            whitespace is ignored and the address is lower-cased.
        role (OrgRole): A role a principal holds in an organization.

            Users hold one through their membership; service accounts hold one
            of their own.
    """

    email: str
    role: OrgRole

    def to_dict(self) -> dict[str, Any]:
        email = self.email

        role = self.role.value

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "email": email,
                "role": role,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        email = d.pop("email")

        role = OrgRole(d.pop("role"))

        invitation_create = cls(
            email=email,
            role=role,
        )

        return invitation_create
