from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.usage_day import UsageDay
    from ..models.usage_item import UsageItem


T = TypeVar("T", bound="UsageReport")


@_attrs_define
class UsageReport:
    """What an organization used on UTC days `[start, end)`, at list price:
    each row is a day's hours of one resource at one price, rounded once.
    The per-node minimum and the monthly cap apply on invoices only, so an
    invoice can come to less.

        Attributes:
            currency (str): ISO 4217 code.
            start (datetime.date):
            end (datetime.date): The first day not included.
            days (list[UsageDay]): Each day with usage, and what it came to.
            items (list[UsageItem]):
            total (str):  Example: 42.18.
    """

    currency: str
    start: datetime.date
    end: datetime.date
    days: list[UsageDay]
    items: list[UsageItem]
    total: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        currency = self.currency

        start = self.start.isoformat()

        end = self.end.isoformat()

        days = []
        for days_item_data in self.days:
            days_item = days_item_data.to_dict()
            days.append(days_item)

        items = []
        for items_item_data in self.items:
            items_item = items_item_data.to_dict()
            items.append(items_item)

        total = self.total

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "currency": currency,
                "start": start,
                "end": end,
                "days": days,
                "items": items,
                "total": total,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.usage_day import UsageDay  # noqa: PLC0415
        from ..models.usage_item import UsageItem  # noqa: PLC0415

        d = dict(src_dict)
        currency = d.pop("currency")

        start = datetime.date.fromisoformat(d.pop("start"))

        end = datetime.date.fromisoformat(d.pop("end"))

        days = []
        _days = d.pop("days")
        for days_item_data in _days:
            days_item = UsageDay.from_dict(days_item_data)

            days.append(days_item)

        items = []
        _items = d.pop("items")
        for items_item_data in _items:
            items_item = UsageItem.from_dict(items_item_data)

            items.append(items_item)

        total = d.pop("total")

        usage_report = cls(
            currency=currency,
            start=start,
            end=end,
            days=days,
            items=items,
            total=total,
        )

        usage_report.additional_properties = d
        return usage_report

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
