from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define

T = TypeVar("T", bound="SsoConfigSet")


@_attrs_define
class SsoConfigSet:
    """
    Attributes:
        issuer (str): The identity provider's issuer URL, `https://` (discovery is read from it).
        client_id (str): 1 to 255 characters.
        client_secret (str): 1 to 1024 characters. Stored encrypted by Vault; never shown again.
        allowed_domains (list[str]): People with addresses in these domains join the organization on
            first sign-in. At most 20; each must be a domain the organization
            verified (`/v1/orgs/{org}/domains`); may be empty (only linked
            accounts sign in).
        default_role (str): Role given to people who join through SSO: `admin`, `billing`, `member`
            or `viewer` (not `owner`); not above your own.
    """

    issuer: str
    client_id: str
    client_secret: str
    allowed_domains: list[str]
    default_role: str

    def to_dict(self) -> dict[str, Any]:
        issuer = self.issuer

        client_id = self.client_id

        client_secret = self.client_secret

        allowed_domains = self.allowed_domains

        default_role = self.default_role

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "issuer": issuer,
                "client_id": client_id,
                "client_secret": client_secret,
                "allowed_domains": allowed_domains,
                "default_role": default_role,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        issuer = d.pop("issuer")

        client_id = d.pop("client_id")

        client_secret = d.pop("client_secret")

        allowed_domains = cast(list[str], d.pop("allowed_domains"))

        default_role = d.pop("default_role")

        sso_config_set = cls(
            issuer=issuer,
            client_id=client_id,
            client_secret=client_secret,
            allowed_domains=allowed_domains,
            default_role=default_role,
        )

        return sso_config_set
