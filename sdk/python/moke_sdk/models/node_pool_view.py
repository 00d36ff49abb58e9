from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.label_map import LabelMap
    from ..models.node_pool_spec import NodePoolSpec
    from ..models.observed_status import ObservedStatus


T = TypeVar("T", bound="NodePoolView")


@_attrs_define
class NodePoolView:
    """
    Attributes:
        id (str): node pool id, `np_` followed by 32 hex digits
        cluster_id (str): cluster id, `cl_` followed by 32 hex digits
        name (str):
        labels (LabelMap): Kubernetes-style labels: at most 64, keys `[prefix/]name`, values up to 63 characters.
        spec (NodePoolSpec):
        generation (int):
        status (ObservedStatus): Observed state as last reported by the region.
        etag (str):
        created_at (datetime.datetime):
        updated_at (datetime.datetime):
        deletion_requested_at (datetime.datetime | None | Unset):
    """

    id: str
    cluster_id: str
    name: str
    labels: LabelMap
    spec: NodePoolSpec
    generation: int
    status: ObservedStatus
    etag: str
    created_at: datetime.datetime
    updated_at: datetime.datetime
    deletion_requested_at: datetime.datetime | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        id = self.id

        cluster_id = self.cluster_id

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

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "id": id,
                "cluster_id": cluster_id,
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

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.label_map import LabelMap  # noqa: PLC0415
        from ..models.node_pool_spec import NodePoolSpec  # noqa: PLC0415
        from ..models.observed_status import ObservedStatus  # noqa: PLC0415

        d = dict(src_dict)
        id = d.pop("id")

        cluster_id = d.pop("cluster_id")

        name = d.pop("name")

        labels = LabelMap.from_dict(d.pop("labels"))

        spec = NodePoolSpec.from_dict(d.pop("spec"))

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

        node_pool_view = cls(
            id=id,
            cluster_id=cluster_id,
            name=name,
            labels=labels,
            spec=spec,
            generation=generation,
            status=status,
            etag=etag,
            created_at=created_at,
            updated_at=updated_at,
            deletion_requested_at=deletion_requested_at,
        )

        node_pool_view.additional_properties = d
        return node_pool_view

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
