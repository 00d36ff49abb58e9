from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="ClusterUpgradeRequest")


@_attrs_define
class ClusterUpgradeRequest:
    """Upgrade a cluster to `kubernetes_version`: its control plane blue-green
    (new API servers beside the old, traffic switched, the old retired), then
    every node pool by surge, cordon and drain, as its `upgrade_policy` says.

        Attributes:
            kubernetes_version (str): One of `GET …/upgrades`' `available`.
    """

    kubernetes_version: str

    def to_dict(self) -> dict[str, Any]:
        kubernetes_version = self.kubernetes_version

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "kubernetes_version": kubernetes_version,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        kubernetes_version = d.pop("kubernetes_version")

        cluster_upgrade_request = cls(
            kubernetes_version=kubernetes_version,
        )

        return cluster_upgrade_request
