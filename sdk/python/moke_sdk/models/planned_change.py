from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.planned_change_details import PlannedChangeDetails


T = TypeVar("T", bound="PlannedChange")


@_attrs_define
class PlannedChange:
    """One change a dry run found, as the audit log would record it.

    Attributes:
        action (str): e.g. `cluster.update`, `token.create`.
        resource_type (str): e.g. `cluster`, `project`, `token`.
        details (PlannedChangeDetails): What the audit event would record besides the action.
        resource_id (None | str | Unset): The resource's prefixed id; for a create, the id it would have had
            (a real call makes another).
    """

    action: str
    resource_type: str
    details: PlannedChangeDetails
    resource_id: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        action = self.action

        resource_type = self.resource_type

        details = self.details.to_dict()

        resource_id: None | str | Unset
        if isinstance(self.resource_id, Unset):
            resource_id = UNSET
        else:
            resource_id = self.resource_id

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "action": action,
                "resource_type": resource_type,
                "details": details,
            }
        )
        if resource_id is not UNSET:
            field_dict["resource_id"] = resource_id

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.planned_change_details import PlannedChangeDetails  # noqa: PLC0415

        d = dict(src_dict)
        action = d.pop("action")

        resource_type = d.pop("resource_type")

        details = PlannedChangeDetails.from_dict(d.pop("details"))

        def _parse_resource_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        resource_id = _parse_resource_id(d.pop("resource_id", UNSET))

        planned_change = cls(
            action=action,
            resource_type=resource_type,
            details=details,
            resource_id=resource_id,
        )

        planned_change.additional_properties = d
        return planned_change

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
