from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.cluster_event_kind import ClusterEventKind
from ..types import UNSET, Unset

T = TypeVar("T", bound="ClusterEventView")


@_attrs_define
class ClusterEventView:
    """Something that happened in a cluster (DOKS `status_messages`): the
    history behind its status.

        Attributes:
            at (datetime.datetime):
            kind (ClusterEventKind): What a cluster event is about.
            resource_type (str): `cluster`, `node_pool` or `deployment`.
            resource_id (str): Its id (`cl_…`, `np_…`, `dep_…`).
            resource_name (str):
            message (str): What happened, e.g. `node workers-node-3 joined`.
            operation_id (None | str | Unset):
    """

    at: datetime.datetime
    kind: ClusterEventKind
    resource_type: str
    resource_id: str
    resource_name: str
    message: str
    operation_id: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        at = self.at.isoformat()

        kind = self.kind.value

        resource_type = self.resource_type

        resource_id = self.resource_id

        resource_name = self.resource_name

        message = self.message

        operation_id: None | str | Unset
        if isinstance(self.operation_id, Unset):
            operation_id = UNSET
        else:
            operation_id = self.operation_id

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "at": at,
                "kind": kind,
                "resource_type": resource_type,
                "resource_id": resource_id,
                "resource_name": resource_name,
                "message": message,
            }
        )
        if operation_id is not UNSET:
            field_dict["operation_id"] = operation_id

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        at = datetime.datetime.fromisoformat(d.pop("at"))

        kind = ClusterEventKind(d.pop("kind"))

        resource_type = d.pop("resource_type")

        resource_id = d.pop("resource_id")

        resource_name = d.pop("resource_name")

        message = d.pop("message")

        def _parse_operation_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        operation_id = _parse_operation_id(d.pop("operation_id", UNSET))

        cluster_event_view = cls(
            at=at,
            kind=kind,
            resource_type=resource_type,
            resource_id=resource_id,
            resource_name=resource_name,
            message=message,
            operation_id=operation_id,
        )

        cluster_event_view.additional_properties = d
        return cluster_event_view

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
