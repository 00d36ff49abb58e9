from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.autoscaling import Autoscaling
    from ..models.label_map import LabelMap
    from ..models.taint import Taint
    from ..models.upgrade_policy import UpgradePolicy


T = TypeVar("T", bound="NodePoolSpecInput")


@_attrs_define
class NodePoolSpecInput:
    """
    Attributes:
        machine_type (str): A machine type from `GET /v1/machine-types`. A change later replaces
            the nodes onto the new type as `upgrade_policy` says (surge, cordon, drain).
        count (int): Nodes to run, 0 to 500 (within the autoscaling range when set; with
            autoscaling, only the size to start at).
        autoscaling (Autoscaling | None | Unset):
        zones (list[str] | None | Unset): Zones of the cluster's region to spread over; all of them if omitted. Cannot
            change later.
        node_labels (LabelMap | Unset): Kubernetes-style labels: at most 64, keys `[prefix/]name`, values up to 63
            characters.
        taints (list[Taint] | Unset):
        upgrade_policy (None | Unset | UpgradePolicy):
    """

    machine_type: str
    count: int
    autoscaling: Autoscaling | None | Unset = UNSET
    zones: list[str] | None | Unset = UNSET
    node_labels: LabelMap | Unset = UNSET
    taints: list[Taint] | Unset = UNSET
    upgrade_policy: None | Unset | UpgradePolicy = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.autoscaling import Autoscaling  # noqa: PLC0415
        from ..models.upgrade_policy import UpgradePolicy  # noqa: PLC0415

        machine_type = self.machine_type

        count = self.count

        autoscaling: dict[str, Any] | None | Unset
        if isinstance(self.autoscaling, Unset):
            autoscaling = UNSET
        elif isinstance(self.autoscaling, Autoscaling):
            autoscaling = self.autoscaling.to_dict()
        else:
            autoscaling = self.autoscaling

        zones: list[str] | None | Unset
        if isinstance(self.zones, Unset):
            zones = UNSET
        elif isinstance(self.zones, list):
            zones = self.zones

        else:
            zones = self.zones

        node_labels: dict[str, Any] | Unset = UNSET
        if not isinstance(self.node_labels, Unset):
            node_labels = self.node_labels.to_dict()

        taints: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.taints, Unset):
            taints = []
            for taints_item_data in self.taints:
                taints_item = taints_item_data.to_dict()
                taints.append(taints_item)

        upgrade_policy: dict[str, Any] | None | Unset
        if isinstance(self.upgrade_policy, Unset):
            upgrade_policy = UNSET
        elif isinstance(self.upgrade_policy, UpgradePolicy):
            upgrade_policy = self.upgrade_policy.to_dict()
        else:
            upgrade_policy = self.upgrade_policy

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "machine_type": machine_type,
                "count": count,
            }
        )
        if autoscaling is not UNSET:
            field_dict["autoscaling"] = autoscaling
        if zones is not UNSET:
            field_dict["zones"] = zones
        if node_labels is not UNSET:
            field_dict["node_labels"] = node_labels
        if taints is not UNSET:
            field_dict["taints"] = taints
        if upgrade_policy is not UNSET:
            field_dict["upgrade_policy"] = upgrade_policy

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

        def _parse_zones(data: object) -> list[str] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                zones_type_0 = cast(list[str], data)

                return zones_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[str] | None | Unset, data)

        zones = _parse_zones(d.pop("zones", UNSET))

        _node_labels = d.pop("node_labels", UNSET)
        node_labels: LabelMap | Unset
        if isinstance(_node_labels, Unset):
            node_labels = UNSET
        else:
            node_labels = LabelMap.from_dict(_node_labels)

        _taints = d.pop("taints", UNSET)
        taints: list[Taint] | Unset = UNSET
        if _taints is not UNSET:
            taints = []
            for taints_item_data in _taints:
                taints_item = Taint.from_dict(taints_item_data)

                taints.append(taints_item)

        def _parse_upgrade_policy(data: object) -> None | Unset | UpgradePolicy:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                upgrade_policy_type_1 = UpgradePolicy.from_dict(data)

                return upgrade_policy_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Unset | UpgradePolicy, data)

        upgrade_policy = _parse_upgrade_policy(d.pop("upgrade_policy", UNSET))

        node_pool_spec_input = cls(
            machine_type=machine_type,
            count=count,
            autoscaling=autoscaling,
            zones=zones,
            node_labels=node_labels,
            taints=taints,
            upgrade_policy=upgrade_policy,
        )

        return node_pool_spec_input
