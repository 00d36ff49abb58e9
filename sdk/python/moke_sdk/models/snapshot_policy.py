from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="SnapshotPolicy")


@_attrs_define
class SnapshotPolicy:
    """How often the control plane's etcd is snapshotted, and how many
    snapshots (scheduled and on-demand together) are kept: the oldest go first.

        Attributes:
            every_hours (int): Hours between scheduled snapshots, 1 to 168 (a week).
            keep (int): Snapshots kept, 1 to 50.
    """

    every_hours: int
    keep: int

    def to_dict(self) -> dict[str, Any]:
        every_hours = self.every_hours

        keep = self.keep

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "every_hours": every_hours,
                "keep": keep,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        every_hours = d.pop("every_hours")

        keep = d.pop("keep")

        snapshot_policy = cls(
            every_hours=every_hours,
            keep=keep,
        )

        return snapshot_policy
