from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.credit_kind import CreditKind
from ..types import UNSET, Unset

T = TypeVar("T", bound="CreditGrantView")


@_attrs_define
class CreditGrantView:
    """A credit the organization holds. Credits are used when an invoice is
    finalized: the lowest priority number first, then the one that expires
    soonest, then the oldest; each shows on the invoice as a line.

        Attributes:
            id (str): credit grant id, `cred_` followed by 32 hex digits
            kind (CreditKind): What kind of credit a grant is.
            description (str):
            amount (str): What was granted. Example: 100.00.
            remaining (str): What is left of it. Example: 62.18.
            priority (int):
            granted_at (datetime.datetime):
            expires_at (datetime.datetime | None | Unset): After this it is no longer used; `null`: never.
    """

    id: str
    kind: CreditKind
    description: str
    amount: str
    remaining: str
    priority: int
    granted_at: datetime.datetime
    expires_at: datetime.datetime | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        id = self.id

        kind = self.kind.value

        description = self.description

        amount = self.amount

        remaining = self.remaining

        priority = self.priority

        granted_at = self.granted_at.isoformat()

        expires_at: None | str | Unset
        if isinstance(self.expires_at, Unset):
            expires_at = UNSET
        elif isinstance(self.expires_at, datetime.datetime):
            expires_at = self.expires_at.isoformat()
        else:
            expires_at = self.expires_at

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "id": id,
                "kind": kind,
                "description": description,
                "amount": amount,
                "remaining": remaining,
                "priority": priority,
                "granted_at": granted_at,
            }
        )
        if expires_at is not UNSET:
            field_dict["expires_at"] = expires_at

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        id = d.pop("id")

        kind = CreditKind(d.pop("kind"))

        description = d.pop("description")

        amount = d.pop("amount")

        remaining = d.pop("remaining")

        priority = d.pop("priority")

        granted_at = datetime.datetime.fromisoformat(d.pop("granted_at"))

        def _parse_expires_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                expires_at_type_0 = datetime.datetime.fromisoformat(data)

                return expires_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        expires_at = _parse_expires_at(d.pop("expires_at", UNSET))

        credit_grant_view = cls(
            id=id,
            kind=kind,
            description=description,
            amount=amount,
            remaining=remaining,
            priority=priority,
            granted_at=granted_at,
            expires_at=expires_at,
        )

        credit_grant_view.additional_properties = d
        return credit_grant_view

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
