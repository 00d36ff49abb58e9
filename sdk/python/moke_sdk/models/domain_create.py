from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="DomainCreate")


@_attrs_define
class DomainCreate:
    """`POST /v1/orgs/{org}/domains`: a domain to prove the organization owns.

    Attributes:
        domain (str): A domain name such as `example.com`: at least two labels of 1-63
            letters, digits or '-' (not at either end of a label), at most 253
            characters in all, no wildcard. Surrounding whitespace and trailing
            dots are ignored and the name is lower-cased.
    """

    domain: str

    def to_dict(self) -> dict[str, Any]:
        domain = self.domain

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "domain": domain,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        domain = d.pop("domain")

        domain_create = cls(
            domain=domain,
        )

        return domain_create
