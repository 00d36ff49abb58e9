from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="ScaleRequest")


@_attrs_define
class ScaleRequest:
    """
    Attributes:
        replicas (int):
    """

    replicas: int

    def to_dict(self) -> dict[str, Any]:
        replicas = self.replicas

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
        replicas = d.pop("replicas")

        scale_request = cls(
            replicas=replicas,
        )

        return scale_request
