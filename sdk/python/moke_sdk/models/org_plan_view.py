from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.plan_view import PlanView


T = TypeVar("T", bound="OrgPlanView")


@_attrs_define
class OrgPlanView:
    """An organization's plan.

    Attributes:
        plan (PlanView): A plan on offer: the quota limits it sets (by the names `quota_view`
            uses), which an operator's override for one organization can replace.
        changed_at (datetime.datetime | None | Unset): When the organization last changed plans; `null` while it is on
            the
            plan every organization starts on.
    """

    plan: PlanView
    changed_at: datetime.datetime | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        plan = self.plan.to_dict()

        changed_at: None | str | Unset
        if isinstance(self.changed_at, Unset):
            changed_at = UNSET
        elif isinstance(self.changed_at, datetime.datetime):
            changed_at = self.changed_at.isoformat()
        else:
            changed_at = self.changed_at

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "plan": plan,
            }
        )
        if changed_at is not UNSET:
            field_dict["changed_at"] = changed_at

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.plan_view import PlanView  # noqa: PLC0415

        d = dict(src_dict)
        plan = PlanView.from_dict(d.pop("plan"))

        def _parse_changed_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                changed_at_type_0 = datetime.datetime.fromisoformat(data)

                return changed_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        changed_at = _parse_changed_at(d.pop("changed_at", UNSET))

        org_plan_view = cls(
            plan=plan,
            changed_at=changed_at,
        )

        org_plan_view.additional_properties = d
        return org_plan_view

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
