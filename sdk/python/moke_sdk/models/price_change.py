from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.price_estimate import PriceEstimate


T = TypeVar("T", bound="PriceChange")


@_attrs_define
class PriceChange:
    """What a change does to a cluster's monthly price: the cluster as it is
    (its node pools not being deleted), as it would be, and the difference.
    Both at the prices in effect now.

        Attributes:
            current (PriceEstimate): A monthly price: each part for a month of 730 hours, cut to its price's
                monthly cap (672 hours), each line rounded to the currency's minor unit
                (half away from zero) and the total their sum. Amounts are exact
                decimals written as strings.
            proposed (PriceEstimate): A monthly price: each part for a month of 730 hours, cut to its price's
                monthly cap (672 hours), each line rounded to the currency's minor unit
                (half away from zero) and the total their sum. Amounts are exact
                decimals written as strings.
            monthly_delta (str): `proposed.monthly_total` minus `current.monthly_total`: negative
                when the change costs less. Example: 120.02.
    """

    current: PriceEstimate
    proposed: PriceEstimate
    monthly_delta: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        current = self.current.to_dict()

        proposed = self.proposed.to_dict()

        monthly_delta = self.monthly_delta

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "current": current,
                "proposed": proposed,
                "monthly_delta": monthly_delta,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.price_estimate import PriceEstimate  # noqa: PLC0415

        d = dict(src_dict)
        current = PriceEstimate.from_dict(d.pop("current"))

        proposed = PriceEstimate.from_dict(d.pop("proposed"))

        monthly_delta = d.pop("monthly_delta")

        price_change = cls(
            current=current,
            proposed=proposed,
            monthly_delta=monthly_delta,
        )

        price_change.additional_properties = d
        return price_change

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
