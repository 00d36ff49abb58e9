from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.automatic_upgrade import AutomaticUpgrade
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
            automatic (AutomaticUpgrade | None | Unset):
    """

    current: KubernetesVersionStatus
    available: list[KubernetesVersionStatus]
    automatic: AutomaticUpgrade | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.automatic_upgrade import AutomaticUpgrade  # noqa: PLC0415

        current = self.current.to_dict()

        available = []
        for available_item_data in self.available:
            available_item = available_item_data.to_dict()
            available.append(available_item)

        automatic: dict[str, Any] | None | Unset
        if isinstance(self.automatic, Unset):
            automatic = UNSET
        elif isinstance(self.automatic, AutomaticUpgrade):
            automatic = self.automatic.to_dict()
        else:
            automatic = self.automatic

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "current": current,
                "available": available,
            }
        )
        if automatic is not UNSET:
            field_dict["automatic"] = automatic

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.automatic_upgrade import AutomaticUpgrade  # noqa: PLC0415
        from ..models.kubernetes_version_status import KubernetesVersionStatus  # noqa: PLC0415

        d = dict(src_dict)
        current = KubernetesVersionStatus.from_dict(d.pop("current"))

        available = []
        _available = d.pop("available")
        for available_item_data in _available:
            available_item = KubernetesVersionStatus.from_dict(available_item_data)

            available.append(available_item)

        def _parse_automatic(data: object) -> AutomaticUpgrade | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                automatic_type_1 = AutomaticUpgrade.from_dict(data)

                return automatic_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(AutomaticUpgrade | None | Unset, data)

        automatic = _parse_automatic(d.pop("automatic", UNSET))

        cluster_upgrades = cls(
            current=current,
            available=available,
            automatic=automatic,
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
