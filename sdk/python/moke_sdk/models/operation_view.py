from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.operation_status import OperationStatus
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.operation_error import OperationError
    from ..models.operation_target import OperationTarget


T = TypeVar("T", bound="OperationView")


@_attrs_define
class OperationView:
    """Long-running work; poll `GET /v1/operations/{id}` (optionally with `?wait=30s`).

    Attributes:
        id (str): operation id, `op_` followed by 32 hex digits
        kind (str): e.g. `cluster_create`, `node_pool_update`.
        status (OperationStatus):
        step (str): The step under way, e.g. `queued`, `provisioning_control_plane`.
        progress (int): 0 to 100.
        target (OperationTarget): What an operation acts on.
        created_at (datetime.datetime):
        updated_at (datetime.datetime):
        error (None | OperationError | Unset):
        finished_at (datetime.datetime | None | Unset):
    """

    id: str
    kind: str
    status: OperationStatus
    step: str
    progress: int
    target: OperationTarget
    created_at: datetime.datetime
    updated_at: datetime.datetime
    error: None | OperationError | Unset = UNSET
    finished_at: datetime.datetime | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.operation_error import OperationError  # noqa: PLC0415

        id = self.id

        kind = self.kind

        status = self.status.value

        step = self.step

        progress = self.progress

        target = self.target.to_dict()

        created_at = self.created_at.isoformat()

        updated_at = self.updated_at.isoformat()

        error: dict[str, Any] | None | Unset
        if isinstance(self.error, Unset):
            error = UNSET
        elif isinstance(self.error, OperationError):
            error = self.error.to_dict()
        else:
            error = self.error

        finished_at: None | str | Unset
        if isinstance(self.finished_at, Unset):
            finished_at = UNSET
        elif isinstance(self.finished_at, datetime.datetime):
            finished_at = self.finished_at.isoformat()
        else:
            finished_at = self.finished_at

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "id": id,
                "kind": kind,
                "status": status,
                "step": step,
                "progress": progress,
                "target": target,
                "created_at": created_at,
                "updated_at": updated_at,
            }
        )
        if error is not UNSET:
            field_dict["error"] = error
        if finished_at is not UNSET:
            field_dict["finished_at"] = finished_at

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.operation_error import OperationError  # noqa: PLC0415
        from ..models.operation_target import OperationTarget  # noqa: PLC0415

        d = dict(src_dict)
        id = d.pop("id")

        kind = d.pop("kind")

        status = OperationStatus(d.pop("status"))

        step = d.pop("step")

        progress = d.pop("progress")

        target = OperationTarget.from_dict(d.pop("target"))

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        updated_at = datetime.datetime.fromisoformat(d.pop("updated_at"))

        def _parse_error(data: object) -> None | OperationError | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                error_type_1 = OperationError.from_dict(data)

                return error_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | OperationError | Unset, data)

        error = _parse_error(d.pop("error", UNSET))

        def _parse_finished_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                finished_at_type_0 = datetime.datetime.fromisoformat(data)

                return finished_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        finished_at = _parse_finished_at(d.pop("finished_at", UNSET))

        operation_view = cls(
            id=id,
            kind=kind,
            status=status,
            step=step,
            progress=progress,
            target=target,
            created_at=created_at,
            updated_at=updated_at,
            error=error,
            finished_at=finished_at,
        )

        operation_view.additional_properties = d
        return operation_view

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
