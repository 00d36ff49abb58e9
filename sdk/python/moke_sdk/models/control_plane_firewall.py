from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="ControlPlaneFirewall")


@_attrs_define
class ControlPlaneFirewall:
    """The addresses allowed to connect to the cluster's Kubernetes API
    endpoint (DOKS `control_plane_firewall`): others have their connections
    dropped before TLS. Client certificates are needed either way.

        Attributes:
            enabled (bool): Off: any address may connect.
            allowed_addresses (list[str] | Unset):
    """

    enabled: bool
    allowed_addresses: list[str] | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        enabled = self.enabled

        allowed_addresses: list[str] | Unset = UNSET
        if not isinstance(self.allowed_addresses, Unset):
            allowed_addresses = self.allowed_addresses

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "enabled": enabled,
            }
        )
        if allowed_addresses is not UNSET:
            field_dict["allowed_addresses"] = allowed_addresses

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        enabled = d.pop("enabled")

        allowed_addresses = cast(list[str], d.pop("allowed_addresses", UNSET))

        control_plane_firewall = cls(
            enabled=enabled,
            allowed_addresses=allowed_addresses,
        )

        return control_plane_firewall
