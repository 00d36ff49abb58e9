from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.project_role import ProjectRole

T = TypeVar("T", bound="ProjectMemberView")


@_attrs_define
class ProjectMemberView:
    """
    Attributes:
        principal (str): `usr_…` or `sa_…`.
        role (ProjectRole): A role a principal holds in one project, on top of its organization role.
        etag (str): Send as `If-Match` to update.
        created_at (datetime.datetime):
    """

    principal: str
    role: ProjectRole
    etag: str
    created_at: datetime.datetime
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        principal = self.principal

        role = self.role.value

        etag = self.etag

        created_at = self.created_at.isoformat()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "principal": principal,
                "role": role,
                "etag": etag,
                "created_at": created_at,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        principal = d.pop("principal")

        role = ProjectRole(d.pop("role"))

        etag = d.pop("etag")

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        project_member_view = cls(
            principal=principal,
            role=role,
            etag=etag,
            created_at=created_at,
        )

        project_member_view.additional_properties = d
        return project_member_view

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
