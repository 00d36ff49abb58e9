from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="DisruptionLimits")


@_attrs_define
class DisruptionLimits:
    """How many disruptive Operations may run at once: cluster upgrades,
    etcd restores, node-pool recycles, node removals, and node-pool and
    cluster deletions, from when they are queued until they finish. A change
    past a limit is refused (409 `policy_limit`, naming the rule).

        Attributes:
            max_per_cluster (int | None | Unset): At most this many in one cluster: 1 to 50; none: no limit.
            max_per_region (int | None | Unset): At most this many across the organization's clusters in one region:
                1 to 1000; none: no limit.
    """

    max_per_cluster: int | None | Unset = UNSET
    max_per_region: int | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        max_per_cluster: int | None | Unset
        if isinstance(self.max_per_cluster, Unset):
            max_per_cluster = UNSET
        else:
            max_per_cluster = self.max_per_cluster

        max_per_region: int | None | Unset
        if isinstance(self.max_per_region, Unset):
            max_per_region = UNSET
        else:
            max_per_region = self.max_per_region

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if max_per_cluster is not UNSET:
            field_dict["max_per_cluster"] = max_per_cluster
        if max_per_region is not UNSET:
            field_dict["max_per_region"] = max_per_region

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)

        def _parse_max_per_cluster(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        max_per_cluster = _parse_max_per_cluster(d.pop("max_per_cluster", UNSET))

        def _parse_max_per_region(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        max_per_region = _parse_max_per_region(d.pop("max_per_region", UNSET))

        disruption_limits = cls(
            max_per_cluster=max_per_cluster,
            max_per_region=max_per_region,
        )

        return disruption_limits
