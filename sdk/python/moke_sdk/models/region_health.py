from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="RegionHealth")


@_attrs_define
class RegionHealth:
    """
    Attributes:
        status (str): `healthy` (agent reported recently), `stale` (it stopped reporting:
            changes are accepted and queue up), or `unknown` (never reported).
        pending_commands (int): Commands waiting for the region.
        oldest_pending_seconds (float): Age of the oldest waiting command, in seconds.
        last_heartbeat_at (datetime.datetime | None | Unset):
    """

    status: str
    pending_commands: int
    oldest_pending_seconds: float
    last_heartbeat_at: datetime.datetime | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        status = self.status

        pending_commands = self.pending_commands

        oldest_pending_seconds = self.oldest_pending_seconds

        last_heartbeat_at: None | str | Unset
        if isinstance(self.last_heartbeat_at, Unset):
            last_heartbeat_at = UNSET
        elif isinstance(self.last_heartbeat_at, datetime.datetime):
            last_heartbeat_at = self.last_heartbeat_at.isoformat()
        else:
            last_heartbeat_at = self.last_heartbeat_at

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "status": status,
                "pending_commands": pending_commands,
                "oldest_pending_seconds": oldest_pending_seconds,
            }
        )
        if last_heartbeat_at is not UNSET:
            field_dict["last_heartbeat_at"] = last_heartbeat_at

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        status = d.pop("status")

        pending_commands = d.pop("pending_commands")

        oldest_pending_seconds = d.pop("oldest_pending_seconds")

        def _parse_last_heartbeat_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                last_heartbeat_at_type_0 = datetime.datetime.fromisoformat(data)

                return last_heartbeat_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        last_heartbeat_at = _parse_last_heartbeat_at(d.pop("last_heartbeat_at", UNSET))

        region_health = cls(
            status=status,
            pending_commands=pending_commands,
            oldest_pending_seconds=oldest_pending_seconds,
            last_heartbeat_at=last_heartbeat_at,
        )

        region_health.additional_properties = d
        return region_health

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
