from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="ResourceRequests")


@_attrs_define
class ResourceRequests:
    """What one pod asks of its node.

    Attributes:
        cpu_millis (int | Unset): Thousandths of a CPU (Kubernetes `250m` = 250).
        memory_mib (int | Unset): Mebibytes (Kubernetes `512Mi` = 512).
    """

    cpu_millis: int | Unset = UNSET
    memory_mib: int | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        cpu_millis = self.cpu_millis

        memory_mib = self.memory_mib

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if cpu_millis is not UNSET:
            field_dict["cpu_millis"] = cpu_millis
        if memory_mib is not UNSET:
            field_dict["memory_mib"] = memory_mib

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        cpu_millis = d.pop("cpu_millis", UNSET)

        memory_mib = d.pop("memory_mib", UNSET)

        resource_requests = cls(
            cpu_millis=cpu_millis,
            memory_mib=memory_mib,
        )

        return resource_requests
