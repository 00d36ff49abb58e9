from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.label_map import LabelMap
    from ..models.node_pool_spec_input import NodePoolSpecInput


T = TypeVar("T", bound="NodePoolCreate")


@_attrs_define
class NodePoolCreate:
    """
    Attributes:
        name (str): DNS label, unique in the cluster; `estimate` is reserved (`POST …/node-pools/estimate`).
        spec (NodePoolSpecInput):
        labels (LabelMap | Unset): Kubernetes-style labels: at most 64, keys `[prefix/]name`, values up to 63
            characters.
    """

    name: str
    spec: NodePoolSpecInput
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
        from ..models.label_map import LabelMap  # noqa: PLC0415
        from ..models.node_pool_spec_input import NodePoolSpecInput  # noqa: PLC0415

        d = dict(src_dict)
        name = d.pop("name")

        spec = NodePoolSpecInput.from_dict(d.pop("spec"))

        _labels = d.pop("labels", UNSET)
        labels: LabelMap | Unset
        if isinstance(_labels, Unset):
            labels = UNSET
        else:
            labels = LabelMap.from_dict(_labels)

        node_pool_create = cls(
            name=name,
            spec=spec,
            labels=labels,
        )

        return node_pool_create
