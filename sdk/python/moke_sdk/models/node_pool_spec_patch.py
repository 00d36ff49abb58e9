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


T = TypeVar("T", bound="NodePoolSpecPatch")


@_attrs_define
class NodePoolSpecPatch:
    """
    Attributes:
        machine_type (None | str | Unset): A machine type from `GET /v1/machine-types`: the nodes are replaced
            onto it as `upgrade_policy` says (surge nodes first, then old ones
            cordoned and drained), so pods move rather than stop.
        count (int | None | Unset):
        autoscaling (Autoscaling | None | Unset):
        zones (list[str] | None | Unset): Immutable.
        node_labels (LabelMap | None | Unset):
        taints (list[Taint] | None | Unset):
        upgrade_policy (None | Unset | UpgradePolicy):
    """

    machine_type: None | str | Unset = UNSET
    count: int | None | Unset = UNSET
    autoscaling: Autoscaling | None | Unset = UNSET
    zones: list[str] | None | Unset = UNSET
    node_labels: LabelMap | None | Unset = UNSET
    taints: list[Taint] | None | Unset = UNSET
    upgrade_policy: None | Unset | UpgradePolicy = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.autoscaling import Autoscaling  # noqa: PLC0415
        from ..models.label_map import LabelMap  # noqa: PLC0415
        from ..models.upgrade_policy import UpgradePolicy  # noqa: PLC0415

        machine_type: None | str | Unset
        if isinstance(self.machine_type, Unset):
            machine_type = UNSET
        else:
            machine_type = self.machine_type

        count: int | None | Unset
        if isinstance(self.count, Unset):
            count = UNSET
        else:
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

        node_labels: dict[str, Any] | None | Unset
        if isinstance(self.node_labels, Unset):
            node_labels = UNSET
        elif isinstance(self.node_labels, LabelMap):
            node_labels = self.node_labels.to_dict()
        else:
            node_labels = self.node_labels

        taints: list[dict[str, Any]] | None | Unset
        if isinstance(self.taints, Unset):
            taints = UNSET
        elif isinstance(self.taints, list):
            taints = []
            for taints_type_0_item_data in self.taints:
                taints_type_0_item = taints_type_0_item_data.to_dict()
                taints.append(taints_type_0_item)

        else:
            taints = self.taints

        upgrade_policy: dict[str, Any] | None | Unset
        if isinstance(self.upgrade_policy, Unset):
            upgrade_policy = UNSET
        elif isinstance(self.upgrade_policy, UpgradePolicy):
            upgrade_policy = self.upgrade_policy.to_dict()
        else:
            upgrade_policy = self.upgrade_policy

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if machine_type is not UNSET:
            field_dict["machine_type"] = machine_type
        if count is not UNSET:
            field_dict["count"] = count
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

        def _parse_machine_type(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        machine_type = _parse_machine_type(d.pop("machine_type", UNSET))

        def _parse_count(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        count = _parse_count(d.pop("count", UNSET))

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

        def _parse_node_labels(data: object) -> LabelMap | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                node_labels_type_1 = LabelMap.from_dict(data)

                return node_labels_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(LabelMap | None | Unset, data)

        node_labels = _parse_node_labels(d.pop("node_labels", UNSET))

        def _parse_taints(data: object) -> list[Taint] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                taints_type_0 = []
                _taints_type_0 = data
                for taints_type_0_item_data in _taints_type_0:
                    taints_type_0_item = Taint.from_dict(taints_type_0_item_data)

                    taints_type_0.append(taints_type_0_item)

                return taints_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[Taint] | None | Unset, data)

        taints = _parse_taints(d.pop("taints", UNSET))

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

        node_pool_spec_patch = cls(
            machine_type=machine_type,
            count=count,
            autoscaling=autoscaling,
            zones=zones,
            node_labels=node_labels,
            taints=taints,
            upgrade_policy=upgrade_policy,
        )

        return node_pool_spec_patch
