from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.org_role import OrgRole

T = TypeVar("T", bound="ServiceAccountView")


@_attrs_define
class ServiceAccountView:
    """
    Attributes:
        id (str): service account id, `sa_` followed by 32 hex digits
        name (str):
        description (str):
        role (OrgRole): A role a principal holds in an organization.

            Users hold one through their membership; service accounts hold one
            of their own.
        created_at (datetime.datetime):
    """

    id: str
    name: str
    description: str
    role: OrgRole
    created_at: datetime.datetime
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        id = self.id

        name = self.name

        description = self.description

        role = self.role.value

        created_at = self.created_at.isoformat()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "id": id,
                "name": name,
                "description": description,
                "role": role,
                "created_at": created_at,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        id = d.pop("id")

        name = d.pop("name")

        description = d.pop("description")

        role = OrgRole(d.pop("role"))

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        service_account_view = cls(
            id=id,
            name=name,
            description=description,
            role=role,
            created_at=created_at,
        )

        service_account_view.additional_properties = d
        return service_account_view

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
