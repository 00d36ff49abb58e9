from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.invoice_line_kind import InvoiceLineKind

T = TypeVar("T", bound="InvoiceLine")


@_attrs_define
class InvoiceLine:
    """One line of an invoice.

    Attributes:
        kind (InvoiceLineKind): What an invoice line is.
        sku (str): The price's id (`bm.small.hour`), or a credit grant's.
        product (str):
        project (str): The project's name when the usage was recorded.
        resource_id (str): The resource's prefixed id: a cluster (`cl_…`) for its control
            plane, a node pool (`np_…`) for its nodes.
        resource_name (str):
        quantity (str): In `unit`s, to four decimals; the amount comes from the exact
            seconds, each instance charged at least its minimum (60 s a node)
            and at most its monthly cap (672 h). Example: 682.0167.
        unit (str):  Example: hour.
        unit_price (str):  Example: 0.1786.
        amount (str):  Example: 121.81.
        start (datetime.datetime): The first and last instant of usage on the line.
        end (datetime.datetime):
    """

    kind: InvoiceLineKind
    sku: str
    product: str
    project: str
    resource_id: str
    resource_name: str
    quantity: str
    unit: str
    unit_price: str
    amount: str
    start: datetime.datetime
    end: datetime.datetime
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        kind = self.kind.value

        sku = self.sku

        product = self.product

        project = self.project

        resource_id = self.resource_id

        resource_name = self.resource_name

        quantity = self.quantity

        unit = self.unit

        unit_price = self.unit_price

        amount = self.amount

        start = self.start.isoformat()

        end = self.end.isoformat()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "kind": kind,
                "sku": sku,
                "product": product,
                "project": project,
                "resource_id": resource_id,
                "resource_name": resource_name,
                "quantity": quantity,
                "unit": unit,
                "unit_price": unit_price,
                "amount": amount,
                "start": start,
                "end": end,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        kind = InvoiceLineKind(d.pop("kind"))

        sku = d.pop("sku")

        product = d.pop("product")

        project = d.pop("project")

        resource_id = d.pop("resource_id")

        resource_name = d.pop("resource_name")

        quantity = d.pop("quantity")

        unit = d.pop("unit")

        unit_price = d.pop("unit_price")

        amount = d.pop("amount")

        start = datetime.datetime.fromisoformat(d.pop("start"))

        end = datetime.datetime.fromisoformat(d.pop("end"))

        invoice_line = cls(
            kind=kind,
            sku=sku,
            product=product,
            project=project,
            resource_id=resource_id,
            resource_name=resource_name,
            quantity=quantity,
            unit=unit,
            unit_price=unit_price,
            amount=amount,
            start=start,
            end=end,
        )

        invoice_line.additional_properties = d
        return invoice_line

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
