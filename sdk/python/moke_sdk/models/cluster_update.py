from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.cluster_spec_patch import ClusterSpecPatch
    from ..models.label_map import LabelMap


T = TypeVar("T", bound="ClusterUpdate")


@_attrs_define
class ClusterUpdate:
    """A change to a cluster; omitted fields stay as they are.

    Attributes:
        labels (LabelMap | None | Unset):
        spec (ClusterSpecPatch | None | Unset):
    """

    labels: LabelMap | None | Unset = UNSET
    spec: ClusterSpecPatch | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.cluster_spec_patch import ClusterSpecPatch  # noqa: PLC0415
        from ..models.label_map import LabelMap  # noqa: PLC0415

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
        elif isinstance(self.spec, ClusterSpecPatch):
            spec = self.spec.to_dict()
        else:
            spec = self.spec

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if labels is not UNSET:
            field_dict["labels"] = labels
        if spec is not UNSET:
            field_dict["spec"] = spec

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.cluster_spec_patch import ClusterSpecPatch  # noqa: PLC0415
        from ..models.label_map import LabelMap  # noqa: PLC0415

        d = dict(src_dict)

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

        def _parse_spec(data: object) -> ClusterSpecPatch | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                spec_type_1 = ClusterSpecPatch.from_dict(data)

                return spec_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(ClusterSpecPatch | None | Unset, data)

        spec = _parse_spec(d.pop("spec", UNSET))

        cluster_update = cls(
            labels=labels,
            spec=spec,
        )

        return cluster_update
