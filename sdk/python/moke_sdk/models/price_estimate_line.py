from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="PriceEstimateLine")


@_attrs_define
class PriceEstimateLine:
    """One priced part of an estimate.

    Attributes:
        sku (str): The price's id, e.g. `bm.small.hour` (a machine type's `price_key`).
        product (str):
        count (int): Instances: nodes, or 1 control plane.
        hours (int): Hours charged per instance in the month.
        unit_price (str): The price of one hour.
        amount (str):
    """

    sku: str
    product: str
    count: int
    hours: int
    unit_price: str
    amount: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        sku = self.sku

        product = self.product

        count = self.count

        hours = self.hours

        unit_price = self.unit_price

        amount = self.amount

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "sku": sku,
                "product": product,
                "count": count,
                "hours": hours,
                "unit_price": unit_price,
                "amount": amount,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        sku = d.pop("sku")

        product = d.pop("product")

        count = d.pop("count")

        hours = d.pop("hours")

        unit_price = d.pop("unit_price")

        amount = d.pop("amount")

        price_estimate_line = cls(
            sku=sku,
            product=product,
            count=count,
            hours=hours,
            unit_price=unit_price,
            amount=amount,
        )

        price_estimate_line.additional_properties = d
        return price_estimate_line

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
