from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="UsageItem")


@_attrs_define
class UsageItem:
    """One day of one resource at one price.

    Attributes:
        day (datetime.date):
        project (str): The project's name when the usage was recorded.
        resource_id (str): The cluster (`cl_…`, its control plane) or node pool (`np_…`).
        resource_name (str):
        sku (str):
        product (str):
        hours (str): Instance hours (nodes × hours), to 4 decimals. Example: 48.
        unit_price (str):  Example: 0.1786.
        amount (str):  Example: 8.57.
    """

    day: datetime.date
    project: str
    resource_id: str
    resource_name: str
    sku: str
    product: str
    hours: str
    unit_price: str
    amount: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        day = self.day.isoformat()

        project = self.project

        resource_id = self.resource_id

        resource_name = self.resource_name

        sku = self.sku

        product = self.product

        hours = self.hours

        unit_price = self.unit_price

        amount = self.amount

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "day": day,
                "project": project,
                "resource_id": resource_id,
                "resource_name": resource_name,
                "sku": sku,
                "product": product,
                "hours": hours,
                "unit_price": unit_price,
                "amount": amount,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        day = datetime.date.fromisoformat(d.pop("day"))

        project = d.pop("project")

        resource_id = d.pop("resource_id")

        resource_name = d.pop("resource_name")

        sku = d.pop("sku")

        product = d.pop("product")

        hours = d.pop("hours")

        unit_price = d.pop("unit_price")

        amount = d.pop("amount")

        usage_item = cls(
            day=day,
            project=project,
            resource_id=resource_id,
            resource_name=resource_name,
            sku=sku,
            product=product,
            hours=hours,
            unit_price=unit_price,
            amount=amount,
        )

        usage_item.additional_properties = d
        return usage_item

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
