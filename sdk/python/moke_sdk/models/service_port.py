from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="ServicePort")


@_attrs_define
class ServicePort:
    """
    Attributes:
        port (int):
        name (None | str | Unset): Required when the service has several ports, each name once (an
            IANA service name: lowercase letters, digits and single inner
            hyphens, with a letter).
        target_port (int | None | Unset): The pods' port; `port` if omitted.
        protocol (str | Unset):
        node_port (int | None | Unset): `NodePort` services: the port on every node (allocated from 30000-32767 when
            omitted).
    """

    port: int
    name: None | str | Unset = UNSET
    target_port: int | None | Unset = UNSET
    protocol: str | Unset = UNSET
    node_port: int | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        port = self.port

        name: None | str | Unset
        if isinstance(self.name, Unset):
            name = UNSET
        else:
            name = self.name

        target_port: int | None | Unset
        if isinstance(self.target_port, Unset):
            target_port = UNSET
        else:
            target_port = self.target_port

        protocol = self.protocol

        node_port: int | None | Unset
        if isinstance(self.node_port, Unset):
            node_port = UNSET
        else:
            node_port = self.node_port

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "port": port,
            }
        )
        if name is not UNSET:
            field_dict["name"] = name
        if target_port is not UNSET:
            field_dict["target_port"] = target_port
        if protocol is not UNSET:
            field_dict["protocol"] = protocol
        if node_port is not UNSET:
            field_dict["node_port"] = node_port

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        port = d.pop("port")

        def _parse_name(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        name = _parse_name(d.pop("name", UNSET))

        def _parse_target_port(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        target_port = _parse_target_port(d.pop("target_port", UNSET))

        protocol = d.pop("protocol", UNSET)

        def _parse_node_port(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        node_port = _parse_node_port(d.pop("node_port", UNSET))

        service_port = cls(
            port=port,
            name=name,
            target_port=target_port,
            protocol=protocol,
            node_port=node_port,
        )

        return service_port
