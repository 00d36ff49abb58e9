from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

from ..models.control_plane_replicas import ControlPlaneReplicas

T = TypeVar("T", bound="ControlPlaneInput")


@_attrs_define
class ControlPlaneInput:
    """
    Attributes:
        replicas (ControlPlaneReplicas): API server replicas: 1 (development) or 3 (highly available).
    """

    replicas: ControlPlaneReplicas

    def to_dict(self) -> dict[str, Any]:
        replicas = self.replicas.value

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "replicas": replicas,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        replicas = ControlPlaneReplicas(d.pop("replicas"))

        control_plane_input = cls(
            replicas=replicas,
        )

        return control_plane_input
