from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="UnmanagedDeploymentView")


@_attrs_define
class UnmanagedDeploymentView:
    """A Deployment made through the cluster's own API (kubectl), as the
    cluster's region last reported it. Moke shows it and never changes it:
    it is the customer's, managed with kubectl.

        Attributes:
            cluster_id (str): cluster id, `cl_` followed by 32 hex digits
            namespace (str):
            name (str):
            image (str): The image of its (first) container.
            replicas (int): Desired pods.
            current_replicas (int): Pods that exist, and of those: ready, and of the current template.
            ready_replicas (int):
            updated_replicas (int):
            phase (str): `progressing` or `running`.
            observed_at (datetime.datetime): When the region first reported it as it is now (its last change).
            created_at (datetime.datetime | None | Unset): When it was made in the cluster.
    """

    cluster_id: str
    namespace: str
    name: str
    image: str
    replicas: int
    current_replicas: int
    ready_replicas: int
    updated_replicas: int
    phase: str
    observed_at: datetime.datetime
    created_at: datetime.datetime | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        cluster_id = self.cluster_id

        namespace = self.namespace

        name = self.name

        image = self.image

        replicas = self.replicas

        current_replicas = self.current_replicas

        ready_replicas = self.ready_replicas

        updated_replicas = self.updated_replicas

        phase = self.phase

        observed_at = self.observed_at.isoformat()

        created_at: None | str | Unset
        if isinstance(self.created_at, Unset):
            created_at = UNSET
        elif isinstance(self.created_at, datetime.datetime):
            created_at = self.created_at.isoformat()
        else:
            created_at = self.created_at

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "cluster_id": cluster_id,
                "namespace": namespace,
                "name": name,
                "image": image,
                "replicas": replicas,
                "current_replicas": current_replicas,
                "ready_replicas": ready_replicas,
                "updated_replicas": updated_replicas,
                "phase": phase,
                "observed_at": observed_at,
            }
        )
        if created_at is not UNSET:
            field_dict["created_at"] = created_at

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        cluster_id = d.pop("cluster_id")

        namespace = d.pop("namespace")

        name = d.pop("name")

        image = d.pop("image")

        replicas = d.pop("replicas")

        current_replicas = d.pop("current_replicas")

        ready_replicas = d.pop("ready_replicas")

        updated_replicas = d.pop("updated_replicas")

        phase = d.pop("phase")

        observed_at = datetime.datetime.fromisoformat(d.pop("observed_at"))

        def _parse_created_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                created_at_type_0 = datetime.datetime.fromisoformat(data)

                return created_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        created_at = _parse_created_at(d.pop("created_at", UNSET))

        unmanaged_deployment_view = cls(
            cluster_id=cluster_id,
            namespace=namespace,
            name=name,
            image=image,
            replicas=replicas,
            current_replicas=current_replicas,
            ready_replicas=ready_replicas,
            updated_replicas=updated_replicas,
            phase=phase,
            observed_at=observed_at,
            created_at=created_at,
        )

        unmanaged_deployment_view.additional_properties = d
        return unmanaged_deployment_view

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
