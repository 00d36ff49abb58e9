from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="BudgetAlert")


@_attrs_define
class BudgetAlert:
    """A threshold this month's usage reached.

    Attributes:
        threshold (int): Percent of the amount.
        value (str): The spend or forecast that reached it.
        fired_at (datetime.datetime):
    """

    threshold: int
    value: str
    fired_at: datetime.datetime
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        threshold = self.threshold

        value = self.value

        fired_at = self.fired_at.isoformat()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "threshold": threshold,
                "value": value,
                "fired_at": fired_at,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        threshold = d.pop("threshold")

        value = d.pop("value")

        fired_at = datetime.datetime.fromisoformat(d.pop("fired_at"))

        budget_alert = cls(
            threshold=threshold,
            value=value,
            fired_at=fired_at,
        )

        budget_alert.additional_properties = d
        return budget_alert

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
