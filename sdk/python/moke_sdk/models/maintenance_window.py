from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="MaintenanceWindow")


@_attrs_define
class MaintenanceWindow:
    """A weekly window in which the region may run disruptive maintenance.

    Attributes:
        day (str): `monday` … `sunday`.
        start_time (str): Start in UTC, `HH:MM`.
        duration_hours (int): 1 to 24.
    """

    day: str
    start_time: str
    duration_hours: int

    def to_dict(self) -> dict[str, Any]:
        day = self.day

        start_time = self.start_time

        duration_hours = self.duration_hours

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "day": day,
                "start_time": start_time,
                "duration_hours": duration_hours,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        day = d.pop("day")

        start_time = d.pop("start_time")

        duration_hours = d.pop("duration_hours")

        maintenance_window = cls(
            day=day,
            start_time=start_time,
            duration_hours=duration_hours,
        )

        return maintenance_window
