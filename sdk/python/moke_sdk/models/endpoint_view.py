from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="EndpointView")


@_attrs_define
class EndpointView:
    """One pod behind a service, as last observed.

    Attributes:
        ip (str):
        port (int):
        pod (str):
        node (str):
        zone (str):
        ready (bool): Only ready pods get traffic.
    """

    ip: str
    port: int
    pod: str
    node: str
    zone: str
    ready: bool
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        ip = self.ip

        port = self.port

        pod = self.pod

        node = self.node

        zone = self.zone

        ready = self.ready

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "ip": ip,
                "port": port,
                "pod": pod,
                "node": node,
                "zone": zone,
                "ready": ready,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        ip = d.pop("ip")

        port = d.pop("port")

        pod = d.pop("pod")

        node = d.pop("node")

        zone = d.pop("zone")

        ready = d.pop("ready")

        endpoint_view = cls(
            ip=ip,
            port=port,
            pod=pod,
            node=node,
            zone=zone,
            ready=ready,
        )

        endpoint_view.additional_properties = d
        return endpoint_view

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
