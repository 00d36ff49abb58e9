from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.label_map import LabelMap
    from ..models.project_spec import ProjectSpec


T = TypeVar("T", bound="ProjectCreate")


@_attrs_define
class ProjectCreate:
    """
    Attributes:
        name (str): DNS label: lowercase letters, digits and `-`, 1–63 characters, unique in the organization.
        labels (LabelMap | Unset): Kubernetes-style labels: at most 64, keys `[prefix/]name`, values up to 63
            characters.
        spec (ProjectSpec | Unset):
    """

    name: str
    labels: LabelMap | Unset = UNSET
    spec: ProjectSpec | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        name = self.name

        labels: dict[str, Any] | Unset = UNSET
        if not isinstance(self.labels, Unset):
            labels = self.labels.to_dict()

        spec: dict[str, Any] | Unset = UNSET
        if not isinstance(self.spec, Unset):
            spec = self.spec.to_dict()

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "name": name,
            }
        )
        if labels is not UNSET:
            field_dict["labels"] = labels
        if spec is not UNSET:
            field_dict["spec"] = spec

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.label_map import LabelMap  # noqa: PLC0415
        from ..models.project_spec import ProjectSpec  # noqa: PLC0415

        d = dict(src_dict)
        name = d.pop("name")

        _labels = d.pop("labels", UNSET)
        labels: LabelMap | Unset
        if isinstance(_labels, Unset):
            labels = UNSET
        else:
            labels = LabelMap.from_dict(_labels)

        _spec = d.pop("spec", UNSET)
        spec: ProjectSpec | Unset
        if isinstance(_spec, Unset):
            spec = UNSET
        else:
            spec = ProjectSpec.from_dict(_spec)

        project_create = cls(
            name=name,
            labels=labels,
            spec=spec,
        )

        return project_create
