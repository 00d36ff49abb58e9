from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

from ..models.org_role import OrgRole
from ..types import UNSET, Unset

T = TypeVar("T", bound="ServiceAccountCreate")


@_attrs_define
class ServiceAccountCreate:
    """
    Attributes:
        name (str): A DNS label: 1-63 lowercase letters, digits or '-', starting with a
            letter, not ending with '-'.
        role (OrgRole): A role a principal holds in an organization.

            Users hold one through their membership; service accounts hold one
            of their own.
        description (str | Unset): At most 500 characters.
    """

    name: str
    role: OrgRole
    description: str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        name = self.name

        role = self.role.value

        description = self.description

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "name": name,
                "role": role,
            }
        )
        if description is not UNSET:
            field_dict["description"] = description

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        name = d.pop("name")

        role = OrgRole(d.pop("role"))

        description = d.pop("description", UNSET)

        service_account_create = cls(
            name=name,
            role=role,
            description=description,
        )

        return service_account_create
