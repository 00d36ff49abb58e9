from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define

from ..models.budget_basis import BudgetBasis
from ..types import UNSET, Unset

T = TypeVar("T", bound="BudgetCreate")


@_attrs_define
class BudgetCreate:
    """A monthly budget: when the month's usage (before credits), or its
    forecast, reaches a threshold, a `budget.threshold_reached` event goes
    to the event webhooks subscribed to `budget.*` and a mail to the
    organization's owners and billing members, once per month and
    threshold. Budgets alert; they never stop anything.

        Attributes:
            name (str): 1 to 100 characters, no control characters, unique in the organization.
            amount (str): A month's amount in the catalog's currency, more than 0. Example: 500.00.
            thresholds (list[int] | Unset): Percents of the amount, 1 to 1000, each once.
            basis (BudgetBasis | Unset): What a budget watches.
    """

    name: str
    amount: str
    thresholds: list[int] | Unset = UNSET
    basis: BudgetBasis | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        name = self.name

        amount = self.amount

        thresholds: list[int] | Unset = UNSET
        if not isinstance(self.thresholds, Unset):
            thresholds = self.thresholds

        basis: str | Unset = UNSET
        if not isinstance(self.basis, Unset):
            basis = self.basis.value

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "name": name,
                "amount": amount,
            }
        )
        if thresholds is not UNSET:
            field_dict["thresholds"] = thresholds
        if basis is not UNSET:
            field_dict["basis"] = basis

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        name = d.pop("name")

        amount = d.pop("amount")

        thresholds = cast(list[int], d.pop("thresholds", UNSET))

        _basis = d.pop("basis", UNSET)
        basis: BudgetBasis | Unset
        if isinstance(_basis, Unset):
            basis = UNSET
        else:
            basis = BudgetBasis(_basis)

        budget_create = cls(
            name=name,
            amount=amount,
            thresholds=thresholds,
            basis=basis,
        )

        return budget_create
