from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="CredentialPolicy")


@_attrs_define
class CredentialPolicy:
    """What an organization demands of its members' credentials.

    Attributes:
        max_token_lifetime_seconds (int | None | Unset): The longest lifetime a new API token may have, in seconds (300
            to
            31 536 000); a token asked for without an expiry gets this one. Null: no limit.
        require_sso (bool | Unset): Members other than owners act here only through the organization's
            single sign-on (password sessions, and personal tokens made from
            them, are refused). Needs SSO configured.
        require_verified_email (bool | Unset): Members act here only with a verified e-mail address.
    """

    max_token_lifetime_seconds: int | None | Unset = UNSET
    require_sso: bool | Unset = UNSET
    require_verified_email: bool | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        max_token_lifetime_seconds: int | None | Unset
        if isinstance(self.max_token_lifetime_seconds, Unset):
            max_token_lifetime_seconds = UNSET
        else:
            max_token_lifetime_seconds = self.max_token_lifetime_seconds

        require_sso = self.require_sso

        require_verified_email = self.require_verified_email

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if max_token_lifetime_seconds is not UNSET:
            field_dict["max_token_lifetime_seconds"] = max_token_lifetime_seconds
        if require_sso is not UNSET:
            field_dict["require_sso"] = require_sso
        if require_verified_email is not UNSET:
            field_dict["require_verified_email"] = require_verified_email

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)

        def _parse_max_token_lifetime_seconds(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        max_token_lifetime_seconds = _parse_max_token_lifetime_seconds(d.pop("max_token_lifetime_seconds", UNSET))

        require_sso = d.pop("require_sso", UNSET)

        require_verified_email = d.pop("require_verified_email", UNSET)

        credential_policy = cls(
            max_token_lifetime_seconds=max_token_lifetime_seconds,
            require_sso=require_sso,
            require_verified_email=require_verified_email,
        )

        return credential_policy
