from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

from ..models.project_role import ProjectRole

T = TypeVar("T", bound="ProjectMemberSet")


@_attrs_define
class ProjectMemberSet:
    """
    Attributes:
        role (ProjectRole): A role a principal holds in one project, on top of its organization role.
    """

    role: ProjectRole

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
        role = ProjectRole(d.pop("role"))

        project_member_set = cls(
            role=role,
        )

        return project_member_set
