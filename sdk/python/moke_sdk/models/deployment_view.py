from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.deployment_spec import DeploymentSpec
    from ..models.deployment_status import DeploymentStatus
    from ..models.label_map import LabelMap


T = TypeVar("T", bound="DeploymentView")


@_attrs_define
class DeploymentView:
    """A deployment: the spec asked for and the status observed.

    Attributes:
        id (str): deployment id, `dep_` followed by 32 hex digits
        cluster_id (str): cluster id, `cl_` followed by 32 hex digits
        namespace (str):
        name (str):
        labels (LabelMap): Kubernetes-style labels: at most 64, keys `[prefix/]name`, values up to 63 characters.
        spec (DeploymentSpec): Moke's portable description of a Deployment: one container, run as
            `replicas` pods. Written directly, or derived from a Kubernetes
            `apps/v1` Deployment manifest; both are stored in this form.
        generation (int):
        revision (int): The newest revision (every change makes one).
        template_revision (int): The revision whose pod template is rolling out or running.
        status (DeploymentStatus): Desired and observed replicas of a deployment.
        etag (str):
        created_at (datetime.datetime):
        updated_at (datetime.datetime):
        last_good_revision (int | None | Unset): The last revision that rolled out fully, if any.
        deletion_requested_at (datetime.datetime | None | Unset):
    """

    id: str
    cluster_id: str
    namespace: str
    name: str
    labels: LabelMap
    spec: DeploymentSpec
    generation: int
    revision: int
    template_revision: int
    status: DeploymentStatus
    etag: str
    created_at: datetime.datetime
    updated_at: datetime.datetime
    last_good_revision: int | None | Unset = UNSET
    deletion_requested_at: datetime.datetime | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        id = self.id

        cluster_id = self.cluster_id

        namespace = self.namespace

        name = self.name

        labels = self.labels.to_dict()

        spec = self.spec.to_dict()

        generation = self.generation

        revision = self.revision

        template_revision = self.template_revision

        status = self.status.to_dict()

        etag = self.etag

        created_at = self.created_at.isoformat()

        updated_at = self.updated_at.isoformat()

        last_good_revision: int | None | Unset
        if isinstance(self.last_good_revision, Unset):
            last_good_revision = UNSET
        else:
            last_good_revision = self.last_good_revision

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
                "namespace": namespace,
                "name": name,
                "labels": labels,
                "spec": spec,
                "generation": generation,
                "revision": revision,
                "template_revision": template_revision,
                "status": status,
                "etag": etag,
                "created_at": created_at,
                "updated_at": updated_at,
            }
        )
        if last_good_revision is not UNSET:
            field_dict["last_good_revision"] = last_good_revision
        if deletion_requested_at is not UNSET:
            field_dict["deletion_requested_at"] = deletion_requested_at

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.deployment_spec import DeploymentSpec  # noqa: PLC0415
        from ..models.deployment_status import DeploymentStatus  # noqa: PLC0415
        from ..models.label_map import LabelMap  # noqa: PLC0415

        d = dict(src_dict)
        id = d.pop("id")

        cluster_id = d.pop("cluster_id")

        namespace = d.pop("namespace")

        name = d.pop("name")

        labels = LabelMap.from_dict(d.pop("labels"))

        spec = DeploymentSpec.from_dict(d.pop("spec"))

        generation = d.pop("generation")

        revision = d.pop("revision")

        template_revision = d.pop("template_revision")

        status = DeploymentStatus.from_dict(d.pop("status"))

        etag = d.pop("etag")

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        updated_at = datetime.datetime.fromisoformat(d.pop("updated_at"))

        def _parse_last_good_revision(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        last_good_revision = _parse_last_good_revision(d.pop("last_good_revision", UNSET))

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

        deployment_view = cls(
            id=id,
            cluster_id=cluster_id,
            namespace=namespace,
            name=name,
            labels=labels,
            spec=spec,
            generation=generation,
            revision=revision,
            template_revision=template_revision,
            status=status,
            etag=etag,
            created_at=created_at,
            updated_at=updated_at,
            last_good_revision=last_good_revision,
            deletion_requested_at=deletion_requested_at,
        )

        deployment_view.additional_properties = d
        return deployment_view

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
