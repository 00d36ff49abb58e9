from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.automatic_upgrade_reason import AutomaticUpgradeReason
from ..types import UNSET, Unset

T = TypeVar("T", bound="AutomaticUpgrade")


@_attrs_define
class AutomaticUpgrade:
    """An upgrade the cluster gets on its own, and when.

    Attributes:
        kubernetes_version (str):
        reason (AutomaticUpgradeReason): Why a cluster is upgraded on its own.
        noticed_at (datetime.datetime | None | Unset): When the owners were told (`cluster.upgrade_available` and mail);
            absent until the next check tells them.
        earliest_start (datetime.datetime | None | Unset): The first time it may start: after the notice period, inside
            the
            maintenance window and outside every exclusion. Absent until the
            owners were told, and when no such time comes within a year.
        operation_id (None | str | Unset):
    """

    kubernetes_version: str
    reason: AutomaticUpgradeReason
    noticed_at: datetime.datetime | None | Unset = UNSET
    earliest_start: datetime.datetime | None | Unset = UNSET
    operation_id: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        kubernetes_version = self.kubernetes_version

        reason = self.reason.value

        noticed_at: None | str | Unset
        if isinstance(self.noticed_at, Unset):
            noticed_at = UNSET
        elif isinstance(self.noticed_at, datetime.datetime):
            noticed_at = self.noticed_at.isoformat()
        else:
            noticed_at = self.noticed_at

        earliest_start: None | str | Unset
        if isinstance(self.earliest_start, Unset):
            earliest_start = UNSET
        elif isinstance(self.earliest_start, datetime.datetime):
            earliest_start = self.earliest_start.isoformat()
        else:
            earliest_start = self.earliest_start

        operation_id: None | str | Unset
        if isinstance(self.operation_id, Unset):
            operation_id = UNSET
        else:
            operation_id = self.operation_id

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "kubernetes_version": kubernetes_version,
                "reason": reason,
            }
        )
        if noticed_at is not UNSET:
            field_dict["noticed_at"] = noticed_at
        if earliest_start is not UNSET:
            field_dict["earliest_start"] = earliest_start
        if operation_id is not UNSET:
            field_dict["operation_id"] = operation_id

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        kubernetes_version = d.pop("kubernetes_version")

        reason = AutomaticUpgradeReason(d.pop("reason"))

        def _parse_noticed_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                noticed_at_type_0 = datetime.datetime.fromisoformat(data)

                return noticed_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        noticed_at = _parse_noticed_at(d.pop("noticed_at", UNSET))

        def _parse_earliest_start(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                earliest_start_type_0 = datetime.datetime.fromisoformat(data)

                return earliest_start_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        earliest_start = _parse_earliest_start(d.pop("earliest_start", UNSET))

        def _parse_operation_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        operation_id = _parse_operation_id(d.pop("operation_id", UNSET))

        automatic_upgrade = cls(
            kubernetes_version=kubernetes_version,
            reason=reason,
            noticed_at=noticed_at,
            earliest_start=earliest_start,
            operation_id=operation_id,
        )

        automatic_upgrade.additional_properties = d
        return automatic_upgrade

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
