from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="DeployRules")


@_attrs_define
class DeployRules:
    """What may be deployed anywhere in the organization, over each project's
    own deploy policy (both must allow a deploy).

        Attributes:
            allowed_image_prefixes (list[str] | Unset):
            allowed_branches (list[str] | Unset):
    """

    allowed_image_prefixes: list[str] | Unset = UNSET
    allowed_branches: list[str] | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        allowed_image_prefixes: list[str] | Unset = UNSET
        if not isinstance(self.allowed_image_prefixes, Unset):
            allowed_image_prefixes = self.allowed_image_prefixes

        allowed_branches: list[str] | Unset = UNSET
        if not isinstance(self.allowed_branches, Unset):
            allowed_branches = self.allowed_branches

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if allowed_image_prefixes is not UNSET:
            field_dict["allowed_image_prefixes"] = allowed_image_prefixes
        if allowed_branches is not UNSET:
            field_dict["allowed_branches"] = allowed_branches

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        allowed_image_prefixes = cast(list[str], d.pop("allowed_image_prefixes", UNSET))

        allowed_branches = cast(list[str], d.pop("allowed_branches", UNSET))

        deploy_rules = cls(
            allowed_image_prefixes=allowed_image_prefixes,
            allowed_branches=allowed_branches,
        )

        return deploy_rules
