from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.budget_basis import BudgetBasis

if TYPE_CHECKING:
    from ..models.budget_alert import BudgetAlert


T = TypeVar("T", bound="BudgetView")


@_attrs_define
class BudgetView:
    """
    Attributes:
        id (str): budget id, `bud_` followed by 32 hex digits
        name (str):
        amount (str):  Example: 500.00.
        currency (str): ISO 4217 code. Example: USD.
        thresholds (list[int]):
        basis (BudgetBasis): What a budget watches.
        spend (str): This month's usage so far, before credits.
        forecast (str): `spend` extended linearly to the month's end.
        alerts (list[BudgetAlert]): The thresholds reached this month.
        created_at (datetime.datetime):
        updated_at (datetime.datetime):
    """

    id: str
    name: str
    amount: str
    currency: str
    thresholds: list[int]
    basis: BudgetBasis
    spend: str
    forecast: str
    alerts: list[BudgetAlert]
    created_at: datetime.datetime
    updated_at: datetime.datetime
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        id = self.id

        name = self.name

        amount = self.amount

        currency = self.currency

        thresholds = self.thresholds

        basis = self.basis.value

        spend = self.spend

        forecast = self.forecast

        alerts = []
        for alerts_item_data in self.alerts:
            alerts_item = alerts_item_data.to_dict()
            alerts.append(alerts_item)

        created_at = self.created_at.isoformat()

        updated_at = self.updated_at.isoformat()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "id": id,
                "name": name,
                "amount": amount,
                "currency": currency,
                "thresholds": thresholds,
                "basis": basis,
                "spend": spend,
                "forecast": forecast,
                "alerts": alerts,
                "created_at": created_at,
                "updated_at": updated_at,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.budget_alert import BudgetAlert  # noqa: PLC0415

        d = dict(src_dict)
        id = d.pop("id")

        name = d.pop("name")

        amount = d.pop("amount")

        currency = d.pop("currency")

        thresholds = cast(list[int], d.pop("thresholds"))

        basis = BudgetBasis(d.pop("basis"))

        spend = d.pop("spend")

        forecast = d.pop("forecast")

        alerts = []
        _alerts = d.pop("alerts")
        for alerts_item_data in _alerts:
            alerts_item = BudgetAlert.from_dict(alerts_item_data)

            alerts.append(alerts_item)

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        updated_at = datetime.datetime.fromisoformat(d.pop("updated_at"))

        budget_view = cls(
            id=id,
            name=name,
            amount=amount,
            currency=currency,
            thresholds=thresholds,
            basis=basis,
            spend=spend,
            forecast=forecast,
            alerts=alerts,
            created_at=created_at,
            updated_at=updated_at,
        )

        budget_view.additional_properties = d
        return budget_view

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
