from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="DeployPolicyView")


@_attrs_define
class DeployPolicyView:
    """A project's deploy policy.

    Attributes:
        allowed_image_prefixes (list[str]): Images must start with one of these. Empty: webhooks deploy nothing.
        allowed_branches (list[str]): Branches whose CI runs and pushes may deploy.
        etag (str): Send as `If-Match` to update.
        updated_at (datetime.datetime | None | Unset): Null while the project has never set one.
    """

    allowed_image_prefixes: list[str]
    allowed_branches: list[str]
    etag: str
    updated_at: datetime.datetime | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        allowed_image_prefixes = self.allowed_image_prefixes

        allowed_branches = self.allowed_branches

        etag = self.etag

        updated_at: None | str | Unset
        if isinstance(self.updated_at, Unset):
            updated_at = UNSET
        elif isinstance(self.updated_at, datetime.datetime):
            updated_at = self.updated_at.isoformat()
        else:
            updated_at = self.updated_at

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "allowed_image_prefixes": allowed_image_prefixes,
                "allowed_branches": allowed_branches,
                "etag": etag,
            }
        )
        if updated_at is not UNSET:
            field_dict["updated_at"] = updated_at

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        allowed_image_prefixes = cast(list[str], d.pop("allowed_image_prefixes"))

        allowed_branches = cast(list[str], d.pop("allowed_branches"))

        etag = d.pop("etag")

        def _parse_updated_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                updated_at_type_0 = datetime.datetime.fromisoformat(data)

                return updated_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        updated_at = _parse_updated_at(d.pop("updated_at", UNSET))

        deploy_policy_view = cls(
            allowed_image_prefixes=allowed_image_prefixes,
            allowed_branches=allowed_branches,
            etag=etag,
            updated_at=updated_at,
        )

        deploy_policy_view.additional_properties = d
        return deploy_policy_view

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
