from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.cluster_create import ClusterCreate
    from ..models.node_pool_create import NodePoolCreate


T = TypeVar("T", bound="ClusterEstimateRequest")


@_attrs_define
class ClusterEstimateRequest:
    """What a cluster would cost a month: the cluster as `cluster_create`
    takes it and its node pools as `node_pool_create` takes them, checked
    the same way. Nothing is created or reserved.

        Attributes:
            cluster (ClusterCreate):
            node_pools (list[NodePoolCreate] | Unset): Priced at `spec.count` nodes each (an autoscaled pool can cost up to
                its `max_count`).
    """

    cluster: ClusterCreate
    node_pools: list[NodePoolCreate] | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        cluster = self.cluster.to_dict()

        node_pools: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.node_pools, Unset):
            node_pools = []
            for node_pools_item_data in self.node_pools:
                node_pools_item = node_pools_item_data.to_dict()
                node_pools.append(node_pools_item)

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "cluster": cluster,
            }
        )
        if node_pools is not UNSET:
            field_dict["node_pools"] = node_pools

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.cluster_create import ClusterCreate  # noqa: PLC0415
        from ..models.node_pool_create import NodePoolCreate  # noqa: PLC0415

        d = dict(src_dict)
        cluster = ClusterCreate.from_dict(d.pop("cluster"))

        _node_pools = d.pop("node_pools", UNSET)
        node_pools: list[NodePoolCreate] | Unset = UNSET
        if _node_pools is not UNSET:
            node_pools = []
            for node_pools_item_data in _node_pools:
                node_pools_item = NodePoolCreate.from_dict(node_pools_item_data)

                node_pools.append(node_pools_item)

        cluster_estimate_request = cls(
            cluster=cluster,
            node_pools=node_pools,
        )

        return cluster_estimate_request
