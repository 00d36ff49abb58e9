from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.endpoint_view import EndpointView
    from ..models.label_map import LabelMap
    from ..models.service_spec import ServiceSpec


T = TypeVar("T", bound="ServiceView")


@_attrs_define
class ServiceView:
    """
    Attributes:
        id (str): service id, `svc_` followed by 32 hex digits
        cluster_id (str): cluster id, `cl_` followed by 32 hex digits
        namespace (str):
        name (str):
        labels (LabelMap): Kubernetes-style labels: at most 64, keys `[prefix/]name`, values up to 63 characters.
        spec (ServiceSpec): A Service: a stable address in front of the pods its selector matches.
        cluster_ip (str):
        endpoints (list[EndpointView]):
        etag (str):
        created_at (datetime.datetime):
        updated_at (datetime.datetime):
    """

    id: str
    cluster_id: str
    namespace: str
    name: str
    labels: LabelMap
    spec: ServiceSpec
    cluster_ip: str
    endpoints: list[EndpointView]
    etag: str
    created_at: datetime.datetime
    updated_at: datetime.datetime
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        id = self.id

        cluster_id = self.cluster_id

        namespace = self.namespace

        name = self.name

        labels = self.labels.to_dict()

        spec = self.spec.to_dict()

        cluster_ip = self.cluster_ip

        endpoints = []
        for endpoints_item_data in self.endpoints:
            endpoints_item = endpoints_item_data.to_dict()
            endpoints.append(endpoints_item)

        etag = self.etag

        created_at = self.created_at.isoformat()

        updated_at = self.updated_at.isoformat()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "id": id,
                "cluster_id": cluster_id,
                "namespace": namespace,
                "name": name,
                "labels": labels,
                "spec": spec,
                "cluster_ip": cluster_ip,
                "endpoints": endpoints,
                "etag": etag,
                "created_at": created_at,
                "updated_at": updated_at,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.endpoint_view import EndpointView  # noqa: PLC0415
        from ..models.label_map import LabelMap  # noqa: PLC0415
        from ..models.service_spec import ServiceSpec  # noqa: PLC0415

        d = dict(src_dict)
        id = d.pop("id")

        cluster_id = d.pop("cluster_id")

        namespace = d.pop("namespace")

        name = d.pop("name")

        labels = LabelMap.from_dict(d.pop("labels"))

        spec = ServiceSpec.from_dict(d.pop("spec"))

        cluster_ip = d.pop("cluster_ip")

        endpoints = []
        _endpoints = d.pop("endpoints")
        for endpoints_item_data in _endpoints:
            endpoints_item = EndpointView.from_dict(endpoints_item_data)

            endpoints.append(endpoints_item)

        etag = d.pop("etag")

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        updated_at = datetime.datetime.fromisoformat(d.pop("updated_at"))

        service_view = cls(
            id=id,
            cluster_id=cluster_id,
            namespace=namespace,
            name=name,
            labels=labels,
            spec=spec,
            cluster_ip=cluster_ip,
            endpoints=endpoints,
            etag=etag,
            created_at=created_at,
            updated_at=updated_at,
        )

        service_view.additional_properties = d
        return service_view

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
