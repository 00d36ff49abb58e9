from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="SessionTokens")


@_attrs_define
class SessionTokens:
    """A signed-in session: a short-lived access token and a refresh token.

    Attributes:
        access_token (str): ES256 JWT; send as `Authorization: Bearer …`.
        token_type (str): Always `Bearer`.
        expires_in (int): Seconds until `access_token` expires.
        refresh_token (str): Opaque, single use: exchange it at `/v1/auth/refresh` for a new pair.
        organization (str): organization id, `org_` followed by 32 hex digits
        session (str): session id, `ses_` followed by 32 hex digits
    """

    access_token: str
    token_type: str
    expires_in: int
    refresh_token: str
    organization: str
    session: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        access_token = self.access_token

        token_type = self.token_type

        expires_in = self.expires_in

        refresh_token = self.refresh_token

        organization = self.organization

        session = self.session

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "access_token": access_token,
                "token_type": token_type,
                "expires_in": expires_in,
                "refresh_token": refresh_token,
                "organization": organization,
                "session": session,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        access_token = d.pop("access_token")

        token_type = d.pop("token_type")

        expires_in = d.pop("expires_in")

        refresh_token = d.pop("refresh_token")

        organization = d.pop("organization")

        session = d.pop("session")

        session_tokens = cls(
            access_token=access_token,
            token_type=token_type,
            expires_in=expires_in,
            refresh_token=refresh_token,
            organization=organization,
            session=session,
        )

        session_tokens.additional_properties = d
        return session_tokens

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
