from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="UpgradePolicy")


@_attrs_define
class UpgradePolicy:
    """How a pool's nodes are replaced (upgrades, machine-type, label and
    taint changes, recycles), Scaleway's `upgrade_policy`: up to
    `max_surge` new nodes beyond the pool's count come first, and up to
    `max_unavailable` nodes below it may be draining at once. Not both 0.
    Surge nodes beyond the first count against the node and vCPU quotas.

        Attributes:
            max_surge (int): Extra nodes at once, 0 to 10.
            max_unavailable (int): Nodes below the count at once, 0 to 10.
    """

    max_surge: int
    max_unavailable: int

    def to_dict(self) -> dict[str, Any]:
        max_surge = self.max_surge

        max_unavailable = self.max_unavailable

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "max_surge": max_surge,
                "max_unavailable": max_unavailable,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        max_surge = d.pop("max_surge")

        max_unavailable = d.pop("max_unavailable")

        upgrade_policy = cls(
            max_surge=max_surge,
            max_unavailable=max_unavailable,
        )

        return upgrade_policy
