from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="Taint")


@_attrs_define
class Taint:
    """
    Attributes:
        key (str):
        effect (str): `NoSchedule`, `PreferNoSchedule` or `NoExecute`.
        value (str | Unset):
    """

    key: str
    effect: str
    value: str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        key = self.key

        effect = self.effect

        value = self.value

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "key": key,
                "effect": effect,
            }
        )
        if value is not UNSET:
            field_dict["value"] = value

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        key = d.pop("key")

        effect = d.pop("effect")

        value = d.pop("value", UNSET)

        taint = cls(
            key=key,
            effect=effect,
            value=value,
        )

        return taint
