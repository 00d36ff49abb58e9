from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="Autoscaling")


@_attrs_define
class Autoscaling:
    """
    Attributes:
        min_count (int):
        max_count (int):
    """

    min_count: int
    max_count: int

    def to_dict(self) -> dict[str, Any]:
        min_count = self.min_count

        max_count = self.max_count

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "min_count": min_count,
                "max_count": max_count,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        min_count = d.pop("min_count")

        max_count = d.pop("max_count")

        autoscaling = cls(
            min_count=min_count,
            max_count=max_count,
        )

        return autoscaling
