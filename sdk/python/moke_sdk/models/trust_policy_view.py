from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.trust_policy_view_claims import TrustPolicyViewClaims


T = TypeVar("T", bound="TrustPolicyView")


@_attrs_define
class TrustPolicyView:
    """
    Attributes:
        id (str): trust policy id, `tp_` followed by 32 hex digits
        service_account (str): service account id, `sa_` followed by 32 hex digits
        issuer (str):
        audience (str):
        claims (TrustPolicyViewClaims):
        created_at (datetime.datetime):
        expires_at (datetime.datetime | None | Unset): Set when an expiring credential made it: it ends with that
            credential.
    """

    id: str
    service_account: str
    issuer: str
    audience: str
    claims: TrustPolicyViewClaims
    created_at: datetime.datetime
    expires_at: datetime.datetime | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        id = self.id

        service_account = self.service_account

        issuer = self.issuer

        audience = self.audience

        claims = self.claims.to_dict()

        created_at = self.created_at.isoformat()

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
                "service_account": service_account,
                "issuer": issuer,
                "audience": audience,
                "claims": claims,
                "created_at": created_at,
            }
        )
        if expires_at is not UNSET:
            field_dict["expires_at"] = expires_at

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.trust_policy_view_claims import TrustPolicyViewClaims  # noqa: PLC0415

        d = dict(src_dict)
        id = d.pop("id")

        service_account = d.pop("service_account")

        issuer = d.pop("issuer")

        audience = d.pop("audience")

        claims = TrustPolicyViewClaims.from_dict(d.pop("claims"))

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

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

        trust_policy_view = cls(
            id=id,
            service_account=service_account,
            issuer=issuer,
            audience=audience,
            claims=claims,
            created_at=created_at,
            expires_at=expires_at,
        )

        trust_policy_view.additional_properties = d
        return trust_policy_view

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
