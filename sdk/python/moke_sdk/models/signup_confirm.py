from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="SignupConfirm")


@_attrs_define
class SignupConfirm:
    """The token from the sign-up e-mail, and the password chosen when signing
    up (so a link someone else asked for cannot make an account whose
    password they know).

        Attributes:
            token (str):
            password (str):
            organization_name (None | str | Unset): Another name for the new organization, if the one asked for was taken
                meanwhile: a DNS label like `organization_name` of the sign-up.
    """

    token: str
    password: str
    organization_name: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        token = self.token

        password = self.password

        organization_name: None | str | Unset
        if isinstance(self.organization_name, Unset):
            organization_name = UNSET
        else:
            organization_name = self.organization_name

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "token": token,
                "password": password,
            }
        )
        if organization_name is not UNSET:
            field_dict["organization_name"] = organization_name

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        token = d.pop("token")

        password = d.pop("password")

        def _parse_organization_name(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        organization_name = _parse_organization_name(d.pop("organization_name", UNSET))

        signup_confirm = cls(
            token=token,
            password=password,
            organization_name=organization_name,
        )

        return signup_confirm
