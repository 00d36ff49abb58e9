from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.operation_target import OperationTarget
    from ..models.spec_change import SpecChange


T = TypeVar("T", bound="PlannedOperation")


@_attrs_define
class PlannedOperation:
    """An Operation a dry run would have started.

    Attributes:
        kind (str): e.g. `cluster_upgrade`, `node_pool_update`.
        target (OperationTarget): What an operation acts on.
        needs_region (bool): False when the gateway alone would complete it (labels only):
            nothing would reach the region.
        diff (list[SpecChange]): What the target's spec would become, against its spec now, for
            clusters and node pools (which keep spec revisions); empty otherwise.
        steps (list[str]): The steps the Operation would go through, in order.
    """

    kind: str
    target: OperationTarget
    needs_region: bool
    diff: list[SpecChange]
    steps: list[str]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        kind = self.kind

        target = self.target.to_dict()

        needs_region = self.needs_region

        diff = []
        for diff_item_data in self.diff:
            diff_item = diff_item_data.to_dict()
            diff.append(diff_item)

        steps = self.steps

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "kind": kind,
                "target": target,
                "needs_region": needs_region,
                "diff": diff,
                "steps": steps,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.operation_target import OperationTarget  # noqa: PLC0415
        from ..models.spec_change import SpecChange  # noqa: PLC0415

        d = dict(src_dict)
        kind = d.pop("kind")

        target = OperationTarget.from_dict(d.pop("target"))

        needs_region = d.pop("needs_region")

        diff = []
        _diff = d.pop("diff")
        for diff_item_data in _diff:
            diff_item = SpecChange.from_dict(diff_item_data)

            diff.append(diff_item)

        steps = cast(list[str], d.pop("steps"))

        planned_operation = cls(
            kind=kind,
            target=target,
            needs_region=needs_region,
            diff=diff,
            steps=steps,
        )

        planned_operation.additional_properties = d
        return planned_operation

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
