from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.label_map import LabelMap
    from ..models.project_spec import ProjectSpec


T = TypeVar("T", bound="ProjectView")


@_attrs_define
class ProjectView:
    """
    Attributes:
        id (str): project id, `prj_` followed by 32 hex digits
        org_id (str): organization id, `org_` followed by 32 hex digits
        name (str):
        labels (LabelMap): Kubernetes-style labels: at most 64, keys `[prefix/]name`, values up to 63 characters.
        spec (ProjectSpec):
        generation (int):
        etag (str):
        created_at (datetime.datetime):
        updated_at (datetime.datetime):
    """

    id: str
    org_id: str
    name: str
    labels: LabelMap
    spec: ProjectSpec
    generation: int
    etag: str
    created_at: datetime.datetime
    updated_at: datetime.datetime
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        id = self.id

        org_id = self.org_id

        name = self.name

        labels = self.labels.to_dict()

        spec = self.spec.to_dict()

        generation = self.generation

        etag = self.etag

        created_at = self.created_at.isoformat()

        updated_at = self.updated_at.isoformat()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "id": id,
                "org_id": org_id,
                "name": name,
                "labels": labels,
                "spec": spec,
                "generation": generation,
                "etag": etag,
                "created_at": created_at,
                "updated_at": updated_at,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.label_map import LabelMap  # noqa: PLC0415
        from ..models.project_spec import ProjectSpec  # noqa: PLC0415

        d = dict(src_dict)
        id = d.pop("id")

        org_id = d.pop("org_id")

        name = d.pop("name")

        labels = LabelMap.from_dict(d.pop("labels"))

        spec = ProjectSpec.from_dict(d.pop("spec"))

        generation = d.pop("generation")

        etag = d.pop("etag")

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        updated_at = datetime.datetime.fromisoformat(d.pop("updated_at"))

        project_view = cls(
            id=id,
            org_id=org_id,
            name=name,
            labels=labels,
            spec=spec,
            generation=generation,
            etag=etag,
            created_at=created_at,
            updated_at=updated_at,
        )

        project_view.additional_properties = d
        return project_view

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
