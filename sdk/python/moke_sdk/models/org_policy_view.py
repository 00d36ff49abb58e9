from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.org_policy_version import OrgPolicyVersion


T = TypeVar("T", bound="OrgPolicyView")


@_attrs_define
class OrgPolicyView:
    """The organization's policy: the version in force and those scheduled.

    Attributes:
        scheduled (list[OrgPolicyVersion]): Versions that take effect later (newer than the one in force),
            soonest first.
        etag (str): For `If-Match` on the next `PUT`: changes with every version.
        in_force (None | OrgPolicyVersion | Unset):
    """

    scheduled: list[OrgPolicyVersion]
    etag: str
    in_force: None | OrgPolicyVersion | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.org_policy_version import OrgPolicyVersion  # noqa: PLC0415

        scheduled = []
        for scheduled_item_data in self.scheduled:
            scheduled_item = scheduled_item_data.to_dict()
            scheduled.append(scheduled_item)

        etag = self.etag

        in_force: dict[str, Any] | None | Unset
        if isinstance(self.in_force, Unset):
            in_force = UNSET
        elif isinstance(self.in_force, OrgPolicyVersion):
            in_force = self.in_force.to_dict()
        else:
            in_force = self.in_force

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "scheduled": scheduled,
                "etag": etag,
            }
        )
        if in_force is not UNSET:
            field_dict["in_force"] = in_force

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.org_policy_version import OrgPolicyVersion  # noqa: PLC0415

        d = dict(src_dict)
        scheduled = []
        _scheduled = d.pop("scheduled")
        for scheduled_item_data in _scheduled:
            scheduled_item = OrgPolicyVersion.from_dict(scheduled_item_data)

            scheduled.append(scheduled_item)

        etag = d.pop("etag")

        def _parse_in_force(data: object) -> None | OrgPolicyVersion | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                in_force_type_1 = OrgPolicyVersion.from_dict(data)

                return in_force_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | OrgPolicyVersion | Unset, data)

        in_force = _parse_in_force(d.pop("in_force", UNSET))

        org_policy_view = cls(
            scheduled=scheduled,
            etag=etag,
            in_force=in_force,
        )

        org_policy_view.additional_properties = d
        return org_policy_view

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
