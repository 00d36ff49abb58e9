from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="NodeView")


@_attrs_define
class NodeView:
    """A worker node as the region last reported it, with what is placed on it.

    Attributes:
        name (str):
        node_pool (str):
        zone (str):
        rack (str):
        ready (bool):
        unschedulable (bool): Cordoned: being drained, takes no new pods.
        allocatable_cpu_millis (int):
        allocatable_memory_mib (int):
        pods (int):
        requested_cpu_millis (int):
        requested_memory_mib (int):
        kubernetes_version (None | str | Unset): The Kubernetes version its kubelet runs (during an upgrade, old and
            new nodes side by side); absent when the region has not said.
    """

    name: str
    node_pool: str
    zone: str
    rack: str
    ready: bool
    unschedulable: bool
    allocatable_cpu_millis: int
    allocatable_memory_mib: int
    pods: int
    requested_cpu_millis: int
    requested_memory_mib: int
    kubernetes_version: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        name = self.name

        node_pool = self.node_pool

        zone = self.zone

        rack = self.rack

        ready = self.ready

        unschedulable = self.unschedulable

        allocatable_cpu_millis = self.allocatable_cpu_millis

        allocatable_memory_mib = self.allocatable_memory_mib

        pods = self.pods

        requested_cpu_millis = self.requested_cpu_millis

        requested_memory_mib = self.requested_memory_mib

        kubernetes_version: None | str | Unset
        if isinstance(self.kubernetes_version, Unset):
            kubernetes_version = UNSET
        else:
            kubernetes_version = self.kubernetes_version

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "name": name,
                "node_pool": node_pool,
                "zone": zone,
                "rack": rack,
                "ready": ready,
                "unschedulable": unschedulable,
                "allocatable_cpu_millis": allocatable_cpu_millis,
                "allocatable_memory_mib": allocatable_memory_mib,
                "pods": pods,
                "requested_cpu_millis": requested_cpu_millis,
                "requested_memory_mib": requested_memory_mib,
            }
        )
        if kubernetes_version is not UNSET:
            field_dict["kubernetes_version"] = kubernetes_version

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        name = d.pop("name")

        node_pool = d.pop("node_pool")

        zone = d.pop("zone")

        rack = d.pop("rack")

        ready = d.pop("ready")

        unschedulable = d.pop("unschedulable")

        allocatable_cpu_millis = d.pop("allocatable_cpu_millis")

        allocatable_memory_mib = d.pop("allocatable_memory_mib")

        pods = d.pop("pods")

        requested_cpu_millis = d.pop("requested_cpu_millis")

        requested_memory_mib = d.pop("requested_memory_mib")

        def _parse_kubernetes_version(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        kubernetes_version = _parse_kubernetes_version(d.pop("kubernetes_version", UNSET))

        node_view = cls(
            name=name,
            node_pool=node_pool,
            zone=zone,
            rack=rack,
            ready=ready,
            unschedulable=unschedulable,
            allocatable_cpu_millis=allocatable_cpu_millis,
            allocatable_memory_mib=allocatable_memory_mib,
            pods=pods,
            requested_cpu_millis=requested_cpu_millis,
            requested_memory_mib=requested_memory_mib,
            kubernetes_version=kubernetes_version,
        )

        node_view.additional_properties = d
        return node_view

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
