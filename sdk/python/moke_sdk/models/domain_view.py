from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.domain_verification_record import DomainVerificationRecord


T = TypeVar("T", bound="DomainView")


@_attrs_define
class DomainView:
    """A domain an organization claims, verified or not.

    Attributes:
        id (str): domain id, `dom_` followed by 32 hex digits
        domain (str):
        verification (DomainVerificationRecord): The DNS record that proves a domain.
        verified (bool):
        created_at (datetime.datetime):
        verified_at (datetime.datetime | None | Unset):
        last_checked_at (datetime.datetime | None | Unset):
        last_error (None | str | Unset): Why the last check failed.
    """

    id: str
    domain: str
    verification: DomainVerificationRecord
    verified: bool
    created_at: datetime.datetime
    verified_at: datetime.datetime | None | Unset = UNSET
    last_checked_at: datetime.datetime | None | Unset = UNSET
    last_error: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        id = self.id

        domain = self.domain

        verification = self.verification.to_dict()

        verified = self.verified

        created_at = self.created_at.isoformat()

        verified_at: None | str | Unset
        if isinstance(self.verified_at, Unset):
            verified_at = UNSET
        elif isinstance(self.verified_at, datetime.datetime):
            verified_at = self.verified_at.isoformat()
        else:
            verified_at = self.verified_at

        last_checked_at: None | str | Unset
        if isinstance(self.last_checked_at, Unset):
            last_checked_at = UNSET
        elif isinstance(self.last_checked_at, datetime.datetime):
            last_checked_at = self.last_checked_at.isoformat()
        else:
            last_checked_at = self.last_checked_at

        last_error: None | str | Unset
        if isinstance(self.last_error, Unset):
            last_error = UNSET
        else:
            last_error = self.last_error

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "id": id,
                "domain": domain,
                "verification": verification,
                "verified": verified,
                "created_at": created_at,
            }
        )
        if verified_at is not UNSET:
            field_dict["verified_at"] = verified_at
        if last_checked_at is not UNSET:
            field_dict["last_checked_at"] = last_checked_at
        if last_error is not UNSET:
            field_dict["last_error"] = last_error

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.domain_verification_record import DomainVerificationRecord  # noqa: PLC0415

        d = dict(src_dict)
        id = d.pop("id")

        domain = d.pop("domain")

        verification = DomainVerificationRecord.from_dict(d.pop("verification"))

        verified = d.pop("verified")

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        def _parse_verified_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                verified_at_type_0 = datetime.datetime.fromisoformat(data)

                return verified_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        verified_at = _parse_verified_at(d.pop("verified_at", UNSET))

        def _parse_last_checked_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                last_checked_at_type_0 = datetime.datetime.fromisoformat(data)

                return last_checked_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        last_checked_at = _parse_last_checked_at(d.pop("last_checked_at", UNSET))

        def _parse_last_error(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        last_error = _parse_last_error(d.pop("last_error", UNSET))

        domain_view = cls(
            id=id,
            domain=domain,
            verification=verification,
            verified=verified,
            created_at=created_at,
            verified_at=verified_at,
            last_checked_at=last_checked_at,
            last_error=last_error,
        )

        domain_view.additional_properties = d
        return domain_view

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
