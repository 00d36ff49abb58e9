from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="HookTarget")


@_attrs_define
class HookTarget:
    """The deployment a webhook (or one of its rules) changes.

    Attributes:
        cluster (str): Cluster id or name.
        deployment (str): Deployment id or name.
        namespace (str | Unset):
    """

    cluster: str
    deployment: str
    namespace: str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        cluster = self.cluster

        deployment = self.deployment

        namespace = self.namespace

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "cluster": cluster,
                "deployment": deployment,
            }
        )
        if namespace is not UNSET:
            field_dict["namespace"] = namespace

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        cluster = d.pop("cluster")

        deployment = d.pop("deployment")

        namespace = d.pop("namespace", UNSET)

        hook_target = cls(
            cluster=cluster,
            deployment=deployment,
            namespace=namespace,
        )

        return hook_target
