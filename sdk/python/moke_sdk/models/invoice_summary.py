from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.invoice_status import InvoiceStatus
from ..types import UNSET, Unset

T = TypeVar("T", bound="InvoiceSummary")


@_attrs_define
class InvoiceSummary:
    """One organization's invoice for one calendar month (UTC), without its
    lines (`GET …/invoices/{invoice}` has them).

        Attributes:
            id (str): invoice id, `bill_` followed by 32 hex digits
            status (InvoiceStatus): Where an invoice stands.
            period_start (datetime.datetime): The first instant of the month.
            period_end (datetime.datetime): The first instant of the next month.
            currency (str): ISO 4217 code. Example: USD.
            subtotal (str): Usage and adjustments, before credits. Example: 129.38.
            credits_ (str): Credits applied (zero or negative). Example: 0.00.
            total (str): What is owed: the sum of every line. Example: 129.38.
            number (None | str | Unset): Given when the invoice is finalized, e.g. `MOKE-2027-000042`:
                consecutive within a year, with no gaps.
            finalized_at (datetime.datetime | None | Unset):
            voided_at (datetime.datetime | None | Unset):
            void_reason (None | str | Unset): A void invoice: why it was withdrawn.
            replaces (None | str | Unset):
            replaced_by (None | str | Unset):
    """

    id: str
    status: InvoiceStatus
    period_start: datetime.datetime
    period_end: datetime.datetime
    currency: str
    subtotal: str
    credits_: str
    total: str
    number: None | str | Unset = UNSET
    finalized_at: datetime.datetime | None | Unset = UNSET
    voided_at: datetime.datetime | None | Unset = UNSET
    void_reason: None | str | Unset = UNSET
    replaces: None | str | Unset = UNSET
    replaced_by: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        id = self.id

        status = self.status.value

        period_start = self.period_start.isoformat()

        period_end = self.period_end.isoformat()

        currency = self.currency

        subtotal = self.subtotal

        credits_ = self.credits_

        total = self.total

        number: None | str | Unset
        if isinstance(self.number, Unset):
            number = UNSET
        else:
            number = self.number

        finalized_at: None | str | Unset
        if isinstance(self.finalized_at, Unset):
            finalized_at = UNSET
        elif isinstance(self.finalized_at, datetime.datetime):
            finalized_at = self.finalized_at.isoformat()
        else:
            finalized_at = self.finalized_at

        voided_at: None | str | Unset
        if isinstance(self.voided_at, Unset):
            voided_at = UNSET
        elif isinstance(self.voided_at, datetime.datetime):
            voided_at = self.voided_at.isoformat()
        else:
            voided_at = self.voided_at

        void_reason: None | str | Unset
        if isinstance(self.void_reason, Unset):
            void_reason = UNSET
        else:
            void_reason = self.void_reason

        replaces: None | str | Unset
        if isinstance(self.replaces, Unset):
            replaces = UNSET
        else:
            replaces = self.replaces

        replaced_by: None | str | Unset
        if isinstance(self.replaced_by, Unset):
            replaced_by = UNSET
        else:
            replaced_by = self.replaced_by

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "id": id,
                "status": status,
                "period_start": period_start,
                "period_end": period_end,
                "currency": currency,
                "subtotal": subtotal,
                "credits": credits_,
                "total": total,
            }
        )
        if number is not UNSET:
            field_dict["number"] = number
        if finalized_at is not UNSET:
            field_dict["finalized_at"] = finalized_at
        if voided_at is not UNSET:
            field_dict["voided_at"] = voided_at
        if void_reason is not UNSET:
            field_dict["void_reason"] = void_reason
        if replaces is not UNSET:
            field_dict["replaces"] = replaces
        if replaced_by is not UNSET:
            field_dict["replaced_by"] = replaced_by

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        id = d.pop("id")

        status = InvoiceStatus(d.pop("status"))

        period_start = datetime.datetime.fromisoformat(d.pop("period_start"))

        period_end = datetime.datetime.fromisoformat(d.pop("period_end"))

        currency = d.pop("currency")

        subtotal = d.pop("subtotal")

        credits_ = d.pop("credits")

        total = d.pop("total")

        def _parse_number(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        number = _parse_number(d.pop("number", UNSET))

        def _parse_finalized_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                finalized_at_type_0 = datetime.datetime.fromisoformat(data)

                return finalized_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        finalized_at = _parse_finalized_at(d.pop("finalized_at", UNSET))

        def _parse_voided_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                voided_at_type_0 = datetime.datetime.fromisoformat(data)

                return voided_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        voided_at = _parse_voided_at(d.pop("voided_at", UNSET))

        def _parse_void_reason(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        void_reason = _parse_void_reason(d.pop("void_reason", UNSET))

        def _parse_replaces(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        replaces = _parse_replaces(d.pop("replaces", UNSET))

        def _parse_replaced_by(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        replaced_by = _parse_replaced_by(d.pop("replaced_by", UNSET))

        invoice_summary = cls(
            id=id,
            status=status,
            period_start=period_start,
            period_end=period_end,
            currency=currency,
            subtotal=subtotal,
            credits_=credits_,
            total=total,
            number=number,
            finalized_at=finalized_at,
            voided_at=voided_at,
            void_reason=void_reason,
            replaces=replaces,
            replaced_by=replaced_by,
        )

        invoice_summary.additional_properties = d
        return invoice_summary

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
