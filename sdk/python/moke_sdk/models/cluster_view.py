from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.cluster_spec import ClusterSpec
    from ..models.label_map import LabelMap
    from ..models.observed_status import ObservedStatus


T = TypeVar("T", bound="ClusterView")


@_attrs_define
class ClusterView:
    """
    Attributes:
        id (str): cluster id, `cl_` followed by 32 hex digits
        project_id (str): project id, `prj_` followed by 32 hex digits
        name (str):
        labels (LabelMap): Kubernetes-style labels: at most 64, keys `[prefix/]name`, values up to 63 characters.
        spec (ClusterSpec): The stored desired state of a cluster.
        generation (int):
        status (ObservedStatus): Observed state as last reported by the region.
        etag (str):
        created_at (datetime.datetime):
        updated_at (datetime.datetime):
        deletion_requested_at (datetime.datetime | None | Unset): Set once deletion was requested; the cluster
            disappears when the region confirms.
        upgrade_available (None | str | Unset): The newest version the cluster can be upgraded to now (see
            `GET …/upgrades`); absent when there is none.
    """

    id: str
    project_id: str
    name: str
    labels: LabelMap
    spec: ClusterSpec
    generation: int
    status: ObservedStatus
    etag: str
    created_at: datetime.datetime
    updated_at: datetime.datetime
    deletion_requested_at: datetime.datetime | None | Unset = UNSET
    upgrade_available: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        id = self.id

        project_id = self.project_id

        name = self.name

        labels = self.labels.to_dict()

        spec = self.spec.to_dict()

        generation = self.generation

        status = self.status.to_dict()

        etag = self.etag

        created_at = self.created_at.isoformat()

        updated_at = self.updated_at.isoformat()

        deletion_requested_at: None | str | Unset
        if isinstance(self.deletion_requested_at, Unset):
            deletion_requested_at = UNSET
        elif isinstance(self.deletion_requested_at, datetime.datetime):
            deletion_requested_at = self.deletion_requested_at.isoformat()
        else:
            deletion_requested_at = self.deletion_requested_at

        upgrade_available: None | str | Unset
        if isinstance(self.upgrade_available, Unset):
            upgrade_available = UNSET
        else:
            upgrade_available = self.upgrade_available

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "id": id,
                "project_id": project_id,
                "name": name,
                "labels": labels,
                "spec": spec,
                "generation": generation,
                "status": status,
                "etag": etag,
                "created_at": created_at,
                "updated_at": updated_at,
            }
        )
        if deletion_requested_at is not UNSET:
            field_dict["deletion_requested_at"] = deletion_requested_at
        if upgrade_available is not UNSET:
            field_dict["upgrade_available"] = upgrade_available

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.cluster_spec import ClusterSpec  # noqa: PLC0415
        from ..models.label_map import LabelMap  # noqa: PLC0415
        from ..models.observed_status import ObservedStatus  # noqa: PLC0415

        d = dict(src_dict)
        id = d.pop("id")

        project_id = d.pop("project_id")

        name = d.pop("name")

        labels = LabelMap.from_dict(d.pop("labels"))

        spec = ClusterSpec.from_dict(d.pop("spec"))

        generation = d.pop("generation")

        status = ObservedStatus.from_dict(d.pop("status"))

        etag = d.pop("etag")

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        updated_at = datetime.datetime.fromisoformat(d.pop("updated_at"))

        def _parse_deletion_requested_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                deletion_requested_at_type_0 = datetime.datetime.fromisoformat(data)

                return deletion_requested_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        deletion_requested_at = _parse_deletion_requested_at(d.pop("deletion_requested_at", UNSET))

        def _parse_upgrade_available(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        upgrade_available = _parse_upgrade_available(d.pop("upgrade_available", UNSET))

        cluster_view = cls(
            id=id,
            project_id=project_id,
            name=name,
            labels=labels,
            spec=spec,
            generation=generation,
            status=status,
            etag=etag,
            created_at=created_at,
            updated_at=updated_at,
            deletion_requested_at=deletion_requested_at,
            upgrade_available=upgrade_available,
        )

        cluster_view.additional_properties = d
        return cluster_view

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
