from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="SignupRequest")


@_attrs_define
class SignupRequest:
    """`POST /v1/signup`: a person, their organization, and them as its owner.

    Attributes:
        email (str): An e-mail address: one `@`, a domain with a `.` not at either end, no
            whitespace or control characters, at most 254 characters. Surrounding
            whitespace is ignored and the address is lower-cased.
        password (str): 12 characters to 256 bytes, not a common password, not containing
            the address's local part.
        display_name (str): 1-100 characters without control characters; surrounding whitespace is ignored.
        organization_name (str): Name of the new organization: a DNS label (1-63 lowercase letters,
            digits or '-', starting with a letter, not ending with '-').
    """

    email: str
    password: str
    display_name: str
    organization_name: str

    def to_dict(self) -> dict[str, Any]:
        email = self.email

        password = self.password

        display_name = self.display_name

        organization_name = self.organization_name

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "email": email,
                "password": password,
                "display_name": display_name,
                "organization_name": organization_name,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        email = d.pop("email")

        password = d.pop("password")

        display_name = d.pop("display_name")

        organization_name = d.pop("organization_name")

        signup_request = cls(
            email=email,
            password=password,
            display_name=display_name,
            organization_name=organization_name,
        )

        return signup_request
