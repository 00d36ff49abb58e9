from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="WebhookEndpointSecretRotate")


@_attrs_define
class WebhookEndpointSecretRotate:
    """Rotating an endpoint's signing secret.

    Attributes:
        previous_secret_valid_seconds (int | None | Unset): How long deliveries keep being signed with the previous
            secret too (Standard Webhooks' several
            `v1,` signatures), in seconds: 0 stops at once (it leaked), at most 604800 (7 days); 86400 when not given.
    """

    previous_secret_valid_seconds: int | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        previous_secret_valid_seconds: int | None | Unset
        if isinstance(self.previous_secret_valid_seconds, Unset):
            previous_secret_valid_seconds = UNSET
        else:
            previous_secret_valid_seconds = self.previous_secret_valid_seconds

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if previous_secret_valid_seconds is not UNSET:
            field_dict["previous_secret_valid_seconds"] = previous_secret_valid_seconds

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)

        def _parse_previous_secret_valid_seconds(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        previous_secret_valid_seconds = _parse_previous_secret_valid_seconds(
            d.pop("previous_secret_valid_seconds", UNSET)
        )

        webhook_endpoint_secret_rotate = cls(
            previous_secret_valid_seconds=previous_secret_valid_seconds,
        )

        return webhook_endpoint_secret_rotate
