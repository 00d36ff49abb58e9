from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.plan_view_limits import PlanViewLimits


T = TypeVar("T", bound="PlanView")


@_attrs_define
class PlanView:
    """A plan on offer: the quota limits it sets (by the names `quota_view`
    uses), which an operator's override for one organization can replace.

        Attributes:
            id (str):  Example: business.
            display_name (str):
            description (str):
            self_serve (bool): Whether billing managers may move to it themselves
                (`billing_plan_update`); Moke's operators give the others.
            limits (PlanViewLimits): Quota name (as in `quota_view`) to limit.
    """

    id: str
    display_name: str
    description: str
    self_serve: bool
    limits: PlanViewLimits
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        id = self.id

        display_name = self.display_name

        description = self.description

        self_serve = self.self_serve

        limits = self.limits.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "id": id,
                "display_name": display_name,
                "description": description,
                "self_serve": self_serve,
                "limits": limits,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.plan_view_limits import PlanViewLimits  # noqa: PLC0415

        d = dict(src_dict)
        id = d.pop("id")

        display_name = d.pop("display_name")

        description = d.pop("description")

        self_serve = d.pop("self_serve")

        limits = PlanViewLimits.from_dict(d.pop("limits"))

        plan_view = cls(
            id=id,
            display_name=display_name,
            description=description,
            self_serve=self_serve,
            limits=limits,
        )

        plan_view.additional_properties = d
        return plan_view

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
