from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="QuotaFailure")


@_attrs_define
class QuotaFailure:
    """Which quota a request would exceed, and by how much.

    Attributes:
        resource (str): The quota's name, as in `GET /v1/orgs/{org}/quotas` (e.g. `clusters`).
        limit (int):
        usage (int): What is in use now.
        requested (int): What the request asked for on top.
    """

    resource: str
    limit: int
    usage: int
    requested: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        resource = self.resource

        limit = self.limit

        usage = self.usage

        requested = self.requested

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "resource": resource,
                "limit": limit,
                "usage": usage,
                "requested": requested,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        resource = d.pop("resource")

        limit = d.pop("limit")

        usage = d.pop("usage")

        requested = d.pop("requested")

        quota_failure = cls(
            resource=resource,
            limit=limit,
            usage=usage,
            requested=requested,
        )

        quota_failure.additional_properties = d
        return quota_failure

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
