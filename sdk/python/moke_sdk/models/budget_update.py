from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define

from ..models.budget_basis import BudgetBasis
from ..types import UNSET, Unset

T = TypeVar("T", bound="BudgetUpdate")


@_attrs_define
class BudgetUpdate:
    """A change to a budget: only the fields given change.

    Attributes:
        name (None | str | Unset):
        amount (None | str | Unset):  Example: 750.00.
        thresholds (list[int] | None | Unset):
        basis (BudgetBasis | None | Unset):
    """

    name: None | str | Unset = UNSET
    amount: None | str | Unset = UNSET
    thresholds: list[int] | None | Unset = UNSET
    basis: BudgetBasis | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        name: None | str | Unset
        if isinstance(self.name, Unset):
            name = UNSET
        else:
            name = self.name

        amount: None | str | Unset
        if isinstance(self.amount, Unset):
            amount = UNSET
        else:
            amount = self.amount

        thresholds: list[int] | None | Unset
        if isinstance(self.thresholds, Unset):
            thresholds = UNSET
        elif isinstance(self.thresholds, list):
            thresholds = self.thresholds

        else:
            thresholds = self.thresholds

        basis: None | str | Unset
        if isinstance(self.basis, Unset):
            basis = UNSET
        elif isinstance(self.basis, BudgetBasis):
            basis = self.basis.value
        else:
            basis = self.basis

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if name is not UNSET:
            field_dict["name"] = name
        if amount is not UNSET:
            field_dict["amount"] = amount
        if thresholds is not UNSET:
            field_dict["thresholds"] = thresholds
        if basis is not UNSET:
            field_dict["basis"] = basis

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)

        def _parse_name(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        name = _parse_name(d.pop("name", UNSET))

        def _parse_amount(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        amount = _parse_amount(d.pop("amount", UNSET))

        def _parse_thresholds(data: object) -> list[int] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                thresholds_type_1 = cast(list[int], data)

                return thresholds_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[int] | None | Unset, data)

        thresholds = _parse_thresholds(d.pop("thresholds", UNSET))

        def _parse_basis(data: object) -> BudgetBasis | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                basis_type_1 = BudgetBasis(data)

                return basis_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(BudgetBasis | None | Unset, data)

        basis = _parse_basis(d.pop("basis", UNSET))

        budget_update = cls(
            name=name,
            amount=amount,
            thresholds=thresholds,
            basis=basis,
        )

        return budget_update
