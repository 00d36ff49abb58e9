from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="RedeliveryCreate")


@_attrs_define
class RedeliveryCreate:
    """Send an event to the endpoint again.

    Attributes:
        event_id (str):
    """

    event_id: str

    def to_dict(self) -> dict[str, Any]:
        event_id = self.event_id

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "event_id": event_id,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        event_id = d.pop("event_id")

        redelivery_create = cls(
            event_id=event_id,
        )

        return redelivery_create
