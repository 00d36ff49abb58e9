from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="BillingBalanceView")


@_attrs_define
class BillingBalanceView:
    """Where the organization stands this month.

    Attributes:
        currency (str): ISO 4217 code. Example: USD.
        month_to_date_usage (str): Usage so far this calendar month (UTC), before credits. Example: 129.38.
        credits_remaining (str): What is left of the credits that have not expired. Example: 62.18.
        month_to_date_balance (str): This month's usage after the credits that would cover it now. Example: 67.20.
        generated_at (datetime.datetime): When these figures were computed.
    """

    currency: str
    month_to_date_usage: str
    credits_remaining: str
    month_to_date_balance: str
    generated_at: datetime.datetime
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        currency = self.currency

        month_to_date_usage = self.month_to_date_usage

        credits_remaining = self.credits_remaining

        month_to_date_balance = self.month_to_date_balance

        generated_at = self.generated_at.isoformat()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "currency": currency,
                "month_to_date_usage": month_to_date_usage,
                "credits_remaining": credits_remaining,
                "month_to_date_balance": month_to_date_balance,
                "generated_at": generated_at,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        currency = d.pop("currency")

        month_to_date_usage = d.pop("month_to_date_usage")

        credits_remaining = d.pop("credits_remaining")

        month_to_date_balance = d.pop("month_to_date_balance")

        generated_at = datetime.datetime.fromisoformat(d.pop("generated_at"))

        billing_balance_view = cls(
            currency=currency,
            month_to_date_usage=month_to_date_usage,
            credits_remaining=credits_remaining,
            month_to_date_balance=month_to_date_balance,
            generated_at=generated_at,
        )

        billing_balance_view.additional_properties = d
        return billing_balance_view

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
