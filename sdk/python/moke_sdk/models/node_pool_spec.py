from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.autoscaling import Autoscaling
    from ..models.label_map import LabelMap
    from ..models.taint import Taint
    from ..models.upgrade_policy import UpgradePolicy


T = TypeVar("T", bound="NodePoolSpec")


@_attrs_define
class NodePoolSpec:
    """
    Attributes:
        machine_type (str):
        count (int):
        zones (list[str]):
        node_labels (LabelMap): Kubernetes-style labels: at most 64, keys `[prefix/]name`, values up to 63 characters.
        taints (list[Taint]):
        upgrade_policy (UpgradePolicy): How a pool's nodes are replaced (upgrades, machine-type, label and
            taint changes, recycles), Scaleway's `upgrade_policy`: up to
            `max_surge` new nodes beyond the pool's count come first, and up to
            `max_unavailable` nodes below it may be draining at once. Not both 0.
            Surge nodes beyond the first count against the node and vCPU quotas.
        autoscaling (Autoscaling | None | Unset):
    """

    machine_type: str
    count: int
    zones: list[str]
    node_labels: LabelMap
    taints: list[Taint]
    upgrade_policy: UpgradePolicy
    autoscaling: Autoscaling | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.autoscaling import Autoscaling  # noqa: PLC0415

        machine_type = self.machine_type

        count = self.count

        zones = self.zones

        node_labels = self.node_labels.to_dict()

        taints = []
        for taints_item_data in self.taints:
            taints_item = taints_item_data.to_dict()
            taints.append(taints_item)

        upgrade_policy = self.upgrade_policy.to_dict()

        autoscaling: dict[str, Any] | None | Unset
        if isinstance(self.autoscaling, Unset):
            autoscaling = UNSET
        elif isinstance(self.autoscaling, Autoscaling):
            autoscaling = self.autoscaling.to_dict()
        else:
            autoscaling = self.autoscaling

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "machine_type": machine_type,
                "count": count,
                "zones": zones,
                "node_labels": node_labels,
                "taints": taints,
                "upgrade_policy": upgrade_policy,
            }
        )
        if autoscaling is not UNSET:
            field_dict["autoscaling"] = autoscaling

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.autoscaling import Autoscaling  # noqa: PLC0415
        from ..models.label_map import LabelMap  # noqa: PLC0415
        from ..models.taint import Taint  # noqa: PLC0415
        from ..models.upgrade_policy import UpgradePolicy  # noqa: PLC0415

        d = dict(src_dict)
        machine_type = d.pop("machine_type")

        count = d.pop("count")

        zones = cast(list[str], d.pop("zones"))

        node_labels = LabelMap.from_dict(d.pop("node_labels"))

        taints = []
        _taints = d.pop("taints")
        for taints_item_data in _taints:
            taints_item = Taint.from_dict(taints_item_data)

            taints.append(taints_item)

        upgrade_policy = UpgradePolicy.from_dict(d.pop("upgrade_policy"))

        def _parse_autoscaling(data: object) -> Autoscaling | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                autoscaling_type_1 = Autoscaling.from_dict(data)

                return autoscaling_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(Autoscaling | None | Unset, data)

        autoscaling = _parse_autoscaling(d.pop("autoscaling", UNSET))

        node_pool_spec = cls(
            machine_type=machine_type,
            count=count,
            zones=zones,
            node_labels=node_labels,
            taints=taints,
            upgrade_policy=upgrade_policy,
            autoscaling=autoscaling,
        )

        node_pool_spec.additional_properties = d
        return node_pool_spec

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
