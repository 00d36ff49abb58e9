from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="MaintenanceExclusion")


@_attrs_define
class MaintenanceExclusion:
    """Days (UTC, both included) on which no automatic upgrade of the cluster
    starts, e.g. a sales peak (GKE's maintenance exclusions). An upgrade
    already running goes on, so a window just before an exclusion can reach
    into it.

        Attributes:
            name (str): A DNS label naming it, unique in the cluster, e.g. `black-friday`.
            start_date (datetime.date): On or after 2000-01-01.
            end_date (datetime.date): On or after `start_date`, at most 90 days in all, and at most 365
                days from today.
    """

    name: str
    start_date: datetime.date
    end_date: datetime.date

    def to_dict(self) -> dict[str, Any]:
        name = self.name

        start_date = self.start_date.isoformat()

        end_date = self.end_date.isoformat()

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "name": name,
                "start_date": start_date,
                "end_date": end_date,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        name = d.pop("name")

        start_date = datetime.date.fromisoformat(d.pop("start_date"))

        end_date = datetime.date.fromisoformat(d.pop("end_date"))

        maintenance_exclusion = cls(
            name=name,
            start_date=start_date,
            end_date=end_date,
        )

        return maintenance_exclusion
