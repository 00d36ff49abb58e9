from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="DeploymentMetrics")


@_attrs_define
class DeploymentMetrics:
    """Requests and pods of one deployment.

    Attributes:
        namespace (str):
        name (str):
        pods (int):
        ready_pods (int):
        pending_pods (int): Pods not placed on any node (nothing could take them).
        requested_cpu_millis (int):
        requested_memory_mib (int):
    """

    namespace: str
    name: str
    pods: int
    ready_pods: int
    pending_pods: int
    requested_cpu_millis: int
    requested_memory_mib: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        namespace = self.namespace

        name = self.name

        pods = self.pods

        ready_pods = self.ready_pods

        pending_pods = self.pending_pods

        requested_cpu_millis = self.requested_cpu_millis

        requested_memory_mib = self.requested_memory_mib

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "namespace": namespace,
                "name": name,
                "pods": pods,
                "ready_pods": ready_pods,
                "pending_pods": pending_pods,
                "requested_cpu_millis": requested_cpu_millis,
                "requested_memory_mib": requested_memory_mib,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        namespace = d.pop("namespace")

        name = d.pop("name")

        pods = d.pop("pods")

        ready_pods = d.pop("ready_pods")

        pending_pods = d.pop("pending_pods")

        requested_cpu_millis = d.pop("requested_cpu_millis")

        requested_memory_mib = d.pop("requested_memory_mib")

        deployment_metrics = cls(
            namespace=namespace,
            name=name,
            pods=pods,
            ready_pods=ready_pods,
            pending_pods=pending_pods,
            requested_cpu_millis=requested_cpu_millis,
            requested_memory_mib=requested_memory_mib,
        )

        deployment_metrics.additional_properties = d
        return deployment_metrics

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
