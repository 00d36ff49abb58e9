from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define

if TYPE_CHECKING:
    from ..models.trust_policy_create_claims import TrustPolicyCreateClaims


T = TypeVar("T", bound="TrustPolicyCreate")


@_attrs_define
class TrustPolicyCreate:
    """
    Attributes:
        issuer (str): The CI system's OpenID issuer, e.g. `https://token.actions.githubusercontent.com`:
            an `https://` URL of at most 500 characters.
        audience (str): The `aud` the CI job requests for its ID token: 1 to 200 characters.
        claims (TrustPolicyCreateClaims): 1 to 10 claims that must match exactly, e.g. `repository`, `ref`,
            `environment`. Names are 1-100 characters and not `iss`, `aud`, `exp`, `iat`, `nbf` or `jti`; values are 1-500
            characters.
    """

    issuer: str
    audience: str
    claims: TrustPolicyCreateClaims

    def to_dict(self) -> dict[str, Any]:
        issuer = self.issuer

        audience = self.audience

        claims = self.claims.to_dict()

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "issuer": issuer,
                "audience": audience,
                "claims": claims,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.trust_policy_create_claims import TrustPolicyCreateClaims  # noqa: PLC0415

        d = dict(src_dict)
        issuer = d.pop("issuer")

        audience = d.pop("audience")

        claims = TrustPolicyCreateClaims.from_dict(d.pop("claims"))

        trust_policy_create = cls(
            issuer=issuer,
            audience=audience,
            claims=claims,
        )

        return trust_policy_create
