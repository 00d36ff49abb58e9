from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.label_map import LabelMap
    from ..models.project_spec import ProjectSpec


T = TypeVar("T", bound="ProjectUpdate")


@_attrs_define
class ProjectUpdate:
    """
    Attributes:
        name (None | str | Unset): A new name (renames the project): a DNS label, 1–63 characters,
            unique in the organization. Paths that used the old name stop
            finding it; ids never change.
        labels (LabelMap | None | Unset):
        spec (None | ProjectSpec | Unset):
    """

    name: None | str | Unset = UNSET
    labels: LabelMap | None | Unset = UNSET
    spec: None | ProjectSpec | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.label_map import LabelMap  # noqa: PLC0415
        from ..models.project_spec import ProjectSpec  # noqa: PLC0415

        name: None | str | Unset
        if isinstance(self.name, Unset):
            name = UNSET
        else:
            name = self.name

        labels: dict[str, Any] | None | Unset
        if isinstance(self.labels, Unset):
            labels = UNSET
        elif isinstance(self.labels, LabelMap):
            labels = self.labels.to_dict()
        else:
            labels = self.labels

        spec: dict[str, Any] | None | Unset
        if isinstance(self.spec, Unset):
            spec = UNSET
        elif isinstance(self.spec, ProjectSpec):
            spec = self.spec.to_dict()
        else:
            spec = self.spec

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if name is not UNSET:
            field_dict["name"] = name
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

        def _parse_name(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        name = _parse_name(d.pop("name", UNSET))

        def _parse_labels(data: object) -> LabelMap | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                labels_type_1 = LabelMap.from_dict(data)

                return labels_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(LabelMap | None | Unset, data)

        labels = _parse_labels(d.pop("labels", UNSET))

        def _parse_spec(data: object) -> None | ProjectSpec | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                spec_type_1 = ProjectSpec.from_dict(data)

                return spec_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | ProjectSpec | Unset, data)

        spec = _parse_spec(d.pop("spec", UNSET))

        project_update = cls(
            name=name,
            labels=labels,
            spec=spec,
        )

        return project_update
