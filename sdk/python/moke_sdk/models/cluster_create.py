from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.cluster_spec_input import ClusterSpecInput
    from ..models.label_map import LabelMap


T = TypeVar("T", bound="ClusterCreate")


@_attrs_define
class ClusterCreate:
    """
    Attributes:
        name (str): DNS label, unique in the project; `estimate` is reserved (`POST …/clusters/estimate`).
        spec (ClusterSpecInput): The desired cluster as a client writes it; omitted fields get defaults.
        labels (LabelMap | Unset): Kubernetes-style labels: at most 64, keys `[prefix/]name`, values up to 63
            characters.
    """

    name: str
    spec: ClusterSpecInput
    labels: LabelMap | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        name = self.name

        spec = self.spec.to_dict()

        labels: dict[str, Any] | Unset = UNSET
        if not isinstance(self.labels, Unset):
            labels = self.labels.to_dict()

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "name": name,
                "spec": spec,
            }
        )
        if labels is not UNSET:
            field_dict["labels"] = labels

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.cluster_spec_input import ClusterSpecInput  # noqa: PLC0415
        from ..models.label_map import LabelMap  # noqa: PLC0415

        d = dict(src_dict)
        name = d.pop("name")

        spec = ClusterSpecInput.from_dict(d.pop("spec"))

        _labels = d.pop("labels", UNSET)
        labels: LabelMap | Unset
        if isinstance(_labels, Unset):
            labels = UNSET
        else:
            labels = LabelMap.from_dict(_labels)

        cluster_create = cls(
            name=name,
            spec=spec,
            labels=labels,
        )

        return cluster_create
