from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.snapshot_trigger import SnapshotTrigger

T = TypeVar("T", bound="EtcdSnapshotView")


@_attrs_define
class EtcdSnapshotView:
    """An etcd snapshot of a cluster's control plane, as its region keeps it.

    Attributes:
        name (str): Unique in the cluster: what `POST …/snapshots/{snapshot}/restore` names.
        taken_at (datetime.datetime):
        size_bytes (int):
        kubernetes_version (str): The Kubernetes version the control plane ran; a restore needs the same.
        trigger (SnapshotTrigger): Why an etcd snapshot was taken.
    """

    name: str
    taken_at: datetime.datetime
    size_bytes: int
    kubernetes_version: str
    trigger: SnapshotTrigger
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        name = self.name

        taken_at = self.taken_at.isoformat()

        size_bytes = self.size_bytes

        kubernetes_version = self.kubernetes_version

        trigger = self.trigger.value

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "name": name,
                "taken_at": taken_at,
                "size_bytes": size_bytes,
                "kubernetes_version": kubernetes_version,
                "trigger": trigger,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        name = d.pop("name")

        taken_at = datetime.datetime.fromisoformat(d.pop("taken_at"))

        size_bytes = d.pop("size_bytes")

        kubernetes_version = d.pop("kubernetes_version")

        trigger = SnapshotTrigger(d.pop("trigger"))

        etcd_snapshot_view = cls(
            name=name,
            taken_at=taken_at,
            size_bytes=size_bytes,
            kubernetes_version=kubernetes_version,
            trigger=trigger,
        )

        etcd_snapshot_view.additional_properties = d
        return etcd_snapshot_view

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
