from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.price_estimate_line import PriceEstimateLine


T = TypeVar("T", bound="PriceEstimate")


@_attrs_define
class PriceEstimate:
    """A monthly price: each part for a month of 730 hours, cut to its price's
    monthly cap (672 hours), each line rounded to the currency's minor unit
    (half away from zero) and the total their sum. Amounts are exact
    decimals written as strings.

        Attributes:
            currency (str): ISO 4217 code. Example: USD.
            price_version (str): The price catalog version the prices come from.
            lines (list[PriceEstimateLine]):
            monthly_total (str):  Example: 679.33.
    """

    currency: str
    price_version: str
    lines: list[PriceEstimateLine]
    monthly_total: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        currency = self.currency

        price_version = self.price_version

        lines = []
        for lines_item_data in self.lines:
            lines_item = lines_item_data.to_dict()
            lines.append(lines_item)

        monthly_total = self.monthly_total

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "currency": currency,
                "price_version": price_version,
                "lines": lines,
                "monthly_total": monthly_total,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.price_estimate_line import PriceEstimateLine  # noqa: PLC0415

        d = dict(src_dict)
        currency = d.pop("currency")

        price_version = d.pop("price_version")

        lines = []
        _lines = d.pop("lines")
        for lines_item_data in _lines:
            lines_item = PriceEstimateLine.from_dict(lines_item_data)

            lines.append(lines_item)

        monthly_total = d.pop("monthly_total")

        price_estimate = cls(
            currency=currency,
            price_version=price_version,
            lines=lines,
            monthly_total=monthly_total,
        )

        price_estimate.additional_properties = d
        return price_estimate

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
