from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="PodView")


@_attrs_define
class PodView:
    """One pod, as the region last saw it.

    Attributes:
        name (str):
        node (str): Empty while pending.
        zone (str):
        revision (int):
        ready (bool):
        ip (str):
    """

    name: str
    node: str
    zone: str
    revision: int
    ready: bool
    ip: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        name = self.name

        node = self.node

        zone = self.zone

        revision = self.revision

        ready = self.ready

        ip = self.ip

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "name": name,
                "node": node,
                "zone": zone,
                "revision": revision,
                "ready": ready,
                "ip": ip,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        name = d.pop("name")

        node = d.pop("node")

        zone = d.pop("zone")

        revision = d.pop("revision")

        ready = d.pop("ready")

        ip = d.pop("ip")

        pod_view = cls(
            name=name,
            node=node,
            zone=zone,
            revision=revision,
            ready=ready,
            ip=ip,
        )

        pod_view.additional_properties = d
        return pod_view

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
