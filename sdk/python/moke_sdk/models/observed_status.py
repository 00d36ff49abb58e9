from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.condition import Condition


T = TypeVar("T", bound="ObservedStatus")


@_attrs_define
class ObservedStatus:
    """Observed state as last reported by the region.

    Attributes:
        phase (str): `pending` until the region first reports, then e.g. `provisioning`,
            `running`, `updating`, `degraded`, `deleting`, `failed`.
        observed_generation (int): The spec generation this status describes.
        conditions (list[Condition]):
        stale (bool): True when the region's agent has stopped reporting (no heartbeat
            within `outbox.region_stale_after_seconds`): this is the last known
            state, as of `observed_at`. Writes are still accepted and queue up.
        observed_at (datetime.datetime | None | Unset): When the region last reported; `null` if it never has.
        endpoint (None | str | Unset): Clusters: the Kubernetes API endpoint, once the control plane serves.
    """

    phase: str
    observed_generation: int
    conditions: list[Condition]
    stale: bool
    observed_at: datetime.datetime | None | Unset = UNSET
    endpoint: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        phase = self.phase

        observed_generation = self.observed_generation

        conditions = []
        for conditions_item_data in self.conditions:
            conditions_item = conditions_item_data.to_dict()
            conditions.append(conditions_item)

        stale = self.stale

        observed_at: None | str | Unset
        if isinstance(self.observed_at, Unset):
            observed_at = UNSET
        elif isinstance(self.observed_at, datetime.datetime):
            observed_at = self.observed_at.isoformat()
        else:
            observed_at = self.observed_at

        endpoint: None | str | Unset
        if isinstance(self.endpoint, Unset):
            endpoint = UNSET
        else:
            endpoint = self.endpoint

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "phase": phase,
                "observed_generation": observed_generation,
                "conditions": conditions,
                "stale": stale,
            }
        )
        if observed_at is not UNSET:
            field_dict["observed_at"] = observed_at
        if endpoint is not UNSET:
            field_dict["endpoint"] = endpoint

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.condition import Condition  # noqa: PLC0415

        d = dict(src_dict)
        phase = d.pop("phase")

        observed_generation = d.pop("observed_generation")

        conditions = []
        _conditions = d.pop("conditions")
        for conditions_item_data in _conditions:
            conditions_item = Condition.from_dict(conditions_item_data)

            conditions.append(conditions_item)

        stale = d.pop("stale")

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

        def _parse_endpoint(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        endpoint = _parse_endpoint(d.pop("endpoint", UNSET))

        observed_status = cls(
            phase=phase,
            observed_generation=observed_generation,
            conditions=conditions,
            stale=stale,
            observed_at=observed_at,
            endpoint=endpoint,
        )

        observed_status.additional_properties = d
        return observed_status

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
