from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.condition import Condition
    from ..models.operation_error import OperationError
    from ..models.pod_view import PodView


T = TypeVar("T", bound="DeploymentStatus")


@_attrs_define
class DeploymentStatus:
    """Desired and observed replicas of a deployment.

    Attributes:
        phase (str): `pending` until first observed, then `progressing`, `running`, `failed` or `deleting`.
        observed_generation (int):
        replicas (int): Desired pods (the spec's replicas).
        current_replicas (int): Pods that exist, and of those: of the current revision, ready, available.
        updated_replicas (int):
        ready_replicas (int):
        available_replicas (int):
        conditions (list[Condition]):
        stale (bool): The region has stopped reporting; this is the last known state.
        pods (list[PodView]):
        last_error (None | OperationError | Unset):
        observed_at (datetime.datetime | None | Unset):
    """

    phase: str
    observed_generation: int
    replicas: int
    current_replicas: int
    updated_replicas: int
    ready_replicas: int
    available_replicas: int
    conditions: list[Condition]
    stale: bool
    pods: list[PodView]
    last_error: None | OperationError | Unset = UNSET
    observed_at: datetime.datetime | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.operation_error import OperationError  # noqa: PLC0415

        phase = self.phase

        observed_generation = self.observed_generation

        replicas = self.replicas

        current_replicas = self.current_replicas

        updated_replicas = self.updated_replicas

        ready_replicas = self.ready_replicas

        available_replicas = self.available_replicas

        conditions = []
        for conditions_item_data in self.conditions:
            conditions_item = conditions_item_data.to_dict()
            conditions.append(conditions_item)

        stale = self.stale

        pods = []
        for pods_item_data in self.pods:
            pods_item = pods_item_data.to_dict()
            pods.append(pods_item)

        last_error: dict[str, Any] | None | Unset
        if isinstance(self.last_error, Unset):
            last_error = UNSET
        elif isinstance(self.last_error, OperationError):
            last_error = self.last_error.to_dict()
        else:
            last_error = self.last_error

        observed_at: None | str | Unset
        if isinstance(self.observed_at, Unset):
            observed_at = UNSET
        elif isinstance(self.observed_at, datetime.datetime):
            observed_at = self.observed_at.isoformat()
        else:
            observed_at = self.observed_at

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "phase": phase,
                "observed_generation": observed_generation,
                "replicas": replicas,
                "current_replicas": current_replicas,
                "updated_replicas": updated_replicas,
                "ready_replicas": ready_replicas,
                "available_replicas": available_replicas,
                "conditions": conditions,
                "stale": stale,
                "pods": pods,
            }
        )
        if last_error is not UNSET:
            field_dict["last_error"] = last_error
        if observed_at is not UNSET:
            field_dict["observed_at"] = observed_at

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.condition import Condition  # noqa: PLC0415
        from ..models.operation_error import OperationError  # noqa: PLC0415
        from ..models.pod_view import PodView  # noqa: PLC0415

        d = dict(src_dict)
        phase = d.pop("phase")

        observed_generation = d.pop("observed_generation")

        replicas = d.pop("replicas")

        current_replicas = d.pop("current_replicas")

        updated_replicas = d.pop("updated_replicas")

        ready_replicas = d.pop("ready_replicas")

        available_replicas = d.pop("available_replicas")

        conditions = []
        _conditions = d.pop("conditions")
        for conditions_item_data in _conditions:
            conditions_item = Condition.from_dict(conditions_item_data)

            conditions.append(conditions_item)

        stale = d.pop("stale")

        pods = []
        _pods = d.pop("pods")
        for pods_item_data in _pods:
            pods_item = PodView.from_dict(pods_item_data)

            pods.append(pods_item)

        def _parse_last_error(data: object) -> None | OperationError | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                last_error_type_1 = OperationError.from_dict(data)

                return last_error_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | OperationError | Unset, data)

        last_error = _parse_last_error(d.pop("last_error", UNSET))

        def _parse_observed_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                observed_at_type_0 = datetime.datetime.fromisoformat(data)

                return observed_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        observed_at = _parse_observed_at(d.pop("observed_at", UNSET))

        deployment_status = cls(
            phase=phase,
            observed_generation=observed_generation,
            replicas=replicas,
            current_replicas=current_replicas,
            updated_replicas=updated_replicas,
            ready_replicas=ready_replicas,
            available_replicas=available_replicas,
            conditions=conditions,
            stale=stale,
            pods=pods,
            last_error=last_error,
            observed_at=observed_at,
        )

        deployment_status.additional_properties = d
        return deployment_status

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
