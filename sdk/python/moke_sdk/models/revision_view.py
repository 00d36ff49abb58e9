from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.deployment_spec import DeploymentSpec


T = TypeVar("T", bound="RevisionView")


@_attrs_define
class RevisionView:
    """One immutable revision of a deployment.

    Attributes:
        revision (int):
        spec (DeploymentSpec): Moke's portable description of a Deployment: one container, run as
            `replicas` pods. Written directly, or derived from a Kubernetes
            `apps/v1` Deployment manifest; both are stored in this form.
        cause (str): What made it: `create`, `update`, `scale`, `pause`, `resume`, `restart`, `rollback to N`,
            `automatic rollback to N`.
        created_by (str): Who made it (a principal id), or `system`.
        created_at (datetime.datetime):
    """

    revision: int
    spec: DeploymentSpec
    cause: str
    created_by: str
    created_at: datetime.datetime
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        revision = self.revision

        spec = self.spec.to_dict()

        cause = self.cause

        created_by = self.created_by

        created_at = self.created_at.isoformat()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "revision": revision,
                "spec": spec,
                "cause": cause,
                "created_by": created_by,
                "created_at": created_at,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.deployment_spec import DeploymentSpec  # noqa: PLC0415

        d = dict(src_dict)
        revision = d.pop("revision")

        spec = DeploymentSpec.from_dict(d.pop("spec"))

        cause = d.pop("cause")

        created_by = d.pop("created_by")

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        revision_view = cls(
            revision=revision,
            spec=spec,
            cause=cause,
            created_by=created_by,
            created_at=created_at,
        )

        revision_view.additional_properties = d
        return revision_view

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
