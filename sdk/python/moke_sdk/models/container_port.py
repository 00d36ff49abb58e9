from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="ContainerPort")


@_attrs_define
class ContainerPort:
    """
    Attributes:
        container_port (int):
        name (None | str | Unset): A Kubernetes port name: lower-case letters, digits and `-`.
        protocol (str | Unset): `TCP`, `UDP` or `SCTP`.
    """

    container_port: int
    name: None | str | Unset = UNSET
    protocol: str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        container_port = self.container_port

        name: None | str | Unset
        if isinstance(self.name, Unset):
            name = UNSET
        else:
            name = self.name

        protocol = self.protocol

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "container_port": container_port,
            }
        )
        if name is not UNSET:
            field_dict["name"] = name
        if protocol is not UNSET:
            field_dict["protocol"] = protocol

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        container_port = d.pop("container_port")

        def _parse_name(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        name = _parse_name(d.pop("name", UNSET))

        protocol = d.pop("protocol", UNSET)

        container_port = cls(
            container_port=container_port,
            name=name,
            protocol=protocol,
        )

        return container_port
