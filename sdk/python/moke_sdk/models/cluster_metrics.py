from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.deployment_metrics import DeploymentMetrics


T = TypeVar("T", bound="ClusterMetrics")


@_attrs_define
class ClusterMetrics:
    """A cluster's capacity and what its workloads ask of it, from the region's observations.

    Attributes:
        nodes (int):
        ready_nodes (int):
        allocatable_cpu_millis (int):
        allocatable_memory_mib (int):
        requested_cpu_millis (int):
        requested_memory_mib (int):
        pods (int):
        ready_pods (int):
        deployments (list[DeploymentMetrics]):
    """

    nodes: int
    ready_nodes: int
    allocatable_cpu_millis: int
    allocatable_memory_mib: int
    requested_cpu_millis: int
    requested_memory_mib: int
    pods: int
    ready_pods: int
    deployments: list[DeploymentMetrics]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        nodes = self.nodes

        ready_nodes = self.ready_nodes

        allocatable_cpu_millis = self.allocatable_cpu_millis

        allocatable_memory_mib = self.allocatable_memory_mib

        requested_cpu_millis = self.requested_cpu_millis

        requested_memory_mib = self.requested_memory_mib

        pods = self.pods

        ready_pods = self.ready_pods

        deployments = []
        for deployments_item_data in self.deployments:
            deployments_item = deployments_item_data.to_dict()
            deployments.append(deployments_item)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "nodes": nodes,
                "ready_nodes": ready_nodes,
                "allocatable_cpu_millis": allocatable_cpu_millis,
                "allocatable_memory_mib": allocatable_memory_mib,
                "requested_cpu_millis": requested_cpu_millis,
                "requested_memory_mib": requested_memory_mib,
                "pods": pods,
                "ready_pods": ready_pods,
                "deployments": deployments,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.deployment_metrics import DeploymentMetrics  # noqa: PLC0415

        d = dict(src_dict)
        nodes = d.pop("nodes")

        ready_nodes = d.pop("ready_nodes")

        allocatable_cpu_millis = d.pop("allocatable_cpu_millis")

        allocatable_memory_mib = d.pop("allocatable_memory_mib")

        requested_cpu_millis = d.pop("requested_cpu_millis")

        requested_memory_mib = d.pop("requested_memory_mib")

        pods = d.pop("pods")

        ready_pods = d.pop("ready_pods")

        deployments = []
        _deployments = d.pop("deployments")
        for deployments_item_data in _deployments:
            deployments_item = DeploymentMetrics.from_dict(deployments_item_data)

            deployments.append(deployments_item)

        cluster_metrics = cls(
            nodes=nodes,
            ready_nodes=ready_nodes,
            allocatable_cpu_millis=allocatable_cpu_millis,
            allocatable_memory_mib=allocatable_memory_mib,
            requested_cpu_millis=requested_cpu_millis,
            requested_memory_mib=requested_memory_mib,
            pods=pods,
            ready_pods=ready_pods,
            deployments=deployments,
        )

        cluster_metrics.additional_properties = d
        return cluster_metrics

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
