from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.kubernetes_version_status import KubernetesVersionStatus


T = TypeVar("T", bound="ClusterUpgrades")


@_attrs_define
class ClusterUpgrades:
    """What a cluster runs and the versions it can be upgraded to: one minor
    version up, if the catalog offers it and it has not reached its end of
    life. Empty when there is none.

        Attributes:
            current (KubernetesVersionStatus): A Kubernetes version as the catalog offers it today.
            available (list[KubernetesVersionStatus]):
    """

    current: KubernetesVersionStatus
    available: list[KubernetesVersionStatus]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        current = self.current.to_dict()

        available = []
        for available_item_data in self.available:
            available_item = available_item_data.to_dict()
            available.append(available_item)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "current": current,
                "available": available,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.kubernetes_version_status import KubernetesVersionStatus  # noqa: PLC0415

        d = dict(src_dict)
        current = KubernetesVersionStatus.from_dict(d.pop("current"))

        available = []
        _available = d.pop("available")
        for available_item_data in _available:
            available_item = KubernetesVersionStatus.from_dict(available_item_data)

            available.append(available_item)

        cluster_upgrades = cls(
            current=current,
            available=available,
        )

        cluster_upgrades.additional_properties = d
        return cluster_upgrades

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
