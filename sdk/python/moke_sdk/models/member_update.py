from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

from ..models.org_role import OrgRole

T = TypeVar("T", bound="MemberUpdate")


@_attrs_define
class MemberUpdate:
    """
    Attributes:
        role (OrgRole): A role a principal holds in an organization.

            Users hold one through their membership; service accounts hold one
            of their own.
    """

    role: OrgRole

    def to_dict(self) -> dict[str, Any]:
        role = self.role.value

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "role": role,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        role = OrgRole(d.pop("role"))

        member_update = cls(
            role=role,
        )

        return member_update
