from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.region_health import RegionHealth


T = TypeVar("T", bound="RegionView")


@_attrs_define
class RegionView:
    """A region on offer, with the health of its agent and queue.

    Attributes:
        name (str): Region name used in cluster specs, e.g. `eu-central-1`.
        display_name (str):
        zones (list[str]):
        health (RegionHealth):
    """

    name: str
    display_name: str
    zones: list[str]
    health: RegionHealth
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        name = self.name

        display_name = self.display_name

        zones = self.zones

        health = self.health.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "name": name,
                "display_name": display_name,
                "zones": zones,
                "health": health,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.region_health import RegionHealth  # noqa: PLC0415

        d = dict(src_dict)
        name = d.pop("name")

        display_name = d.pop("display_name")

        zones = cast(list[str], d.pop("zones"))

        health = RegionHealth.from_dict(d.pop("health"))

        region_view = cls(
            name=name,
            display_name=display_name,
            zones=zones,
            health=health,
        )

        region_view.additional_properties = d
        return region_view

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
