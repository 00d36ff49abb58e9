from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="TokenExchangeRequest")


@_attrs_define
class TokenExchangeRequest:
    """
    Attributes:
        subject_token (str): The CI system's OIDC ID token.
        service_account (str): The service account to act as (`sa_…`).
    """

    subject_token: str
    service_account: str

    def to_dict(self) -> dict[str, Any]:
        subject_token = self.subject_token

        service_account = self.service_account

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "subject_token": subject_token,
                "service_account": service_account,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        subject_token = d.pop("subject_token")

        service_account = d.pop("service_account")

        token_exchange_request = cls(
            subject_token=subject_token,
            service_account=service_account,
        )

        return token_exchange_request
