from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="WebhookEndpointCreate")


@_attrs_define
class WebhookEndpointCreate:
    """Subscribe a URL to events of the organization.

    Attributes:
        url (str): `https://` (plain `http://` only for targets the operator allow-listed). Private, loopback and
            link-local addresses are refused.
        event_types (list[str]): Patterns: `cluster.*`, `nodepool.*`, `deployment.rollout.*`, `operation.*`,
            `webhook_endpoint.*`, or `*`;
            billing events (`invoice.*`, `budget.*`) only by name, with the `read_billing` permission.
        description (str | Unset):
    """

    url: str
    event_types: list[str]
    description: str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        url = self.url

        event_types = self.event_types

        description = self.description

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "url": url,
                "event_types": event_types,
            }
        )
        if description is not UNSET:
            field_dict["description"] = description

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        url = d.pop("url")

        event_types = cast(list[str], d.pop("event_types"))

        description = d.pop("description", UNSET)

        webhook_endpoint_create = cls(
            url=url,
            event_types=event_types,
            description=description,
        )

        return webhook_endpoint_create
