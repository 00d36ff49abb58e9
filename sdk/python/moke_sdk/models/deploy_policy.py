from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define

T = TypeVar("T", bound="DeployPolicy")


@_attrs_define
class DeployPolicy:
    """What a project's deploy webhooks may do.

    Attributes:
        allowed_image_prefixes (list[str]): Images must start with one of these, e.g. `registry.example.com/shop/`.
            Empty: webhooks deploy nothing.
        allowed_branches (list[str]): Branches whose CI runs and pushes may deploy (`workflow_run`, GitLab pipelines and
            pushes).
    """

    allowed_image_prefixes: list[str]
    allowed_branches: list[str]

    def to_dict(self) -> dict[str, Any]:
        allowed_image_prefixes = self.allowed_image_prefixes

        allowed_branches = self.allowed_branches

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "allowed_image_prefixes": allowed_image_prefixes,
                "allowed_branches": allowed_branches,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        allowed_image_prefixes = cast(list[str], d.pop("allowed_image_prefixes"))

        allowed_branches = cast(list[str], d.pop("allowed_branches"))

        deploy_policy = cls(
            allowed_image_prefixes=allowed_image_prefixes,
            allowed_branches=allowed_branches,
        )

        return deploy_policy
