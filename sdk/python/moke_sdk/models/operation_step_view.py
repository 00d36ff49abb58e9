from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.operation_status import OperationStatus

T = TypeVar("T", bound="OperationStepView")


@_attrs_define
class OperationStepView:
    """One step of an Operation's history, as it was reported.

    Attributes:
        status (OperationStatus):
        step (str): What was under way, e.g. `control plane: traffic switched to the API servers on 1.33`.
        progress (int):
        at (datetime.datetime): When the step was recorded.
    """

    status: OperationStatus
    step: str
    progress: int
    at: datetime.datetime
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        status = self.status.value

        step = self.step

        progress = self.progress

        at = self.at.isoformat()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "status": status,
                "step": step,
                "progress": progress,
                "at": at,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        status = OperationStatus(d.pop("status"))

        step = d.pop("step")

        progress = d.pop("progress")

        at = datetime.datetime.fromisoformat(d.pop("at"))

        operation_step_view = cls(
            status=status,
            step=step,
            progress=progress,
            at=at,
        )

        operation_step_view.additional_properties = d
        return operation_step_view

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
