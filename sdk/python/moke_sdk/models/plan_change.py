from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="PlanChange")


@_attrs_define
class PlanChange:
    """A change of plan, to a self-serve one (403 `plan_needs_operator`
    otherwise). A plan with lower limits is refused (409
    `plan_limits_exceeded`) while the organization uses more than it allows.

        Attributes:
            plan (str): A plan's `id` from `GET /v1/plans`. Example: business.
    """

    plan: str

    def to_dict(self) -> dict[str, Any]:
        plan = self.plan

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "plan": plan,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        plan = d.pop("plan")

        plan_change = cls(
            plan=plan,
        )

        return plan_change
