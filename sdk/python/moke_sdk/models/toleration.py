from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="Toleration")


@_attrs_define
class Toleration:
    """A Kubernetes toleration.

    Attributes:
        key (str | Unset): Empty with `Exists` tolerates every taint.
        operator (str | Unset): `Equal` or `Exists`.
        value (str | Unset):
        effect (str | Unset): `NoSchedule`, `PreferNoSchedule`, `NoExecute`, or empty for all.
    """

    key: str | Unset = UNSET
    operator: str | Unset = UNSET
    value: str | Unset = UNSET
    effect: str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        key = self.key

        operator = self.operator

        value = self.value

        effect = self.effect

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if key is not UNSET:
            field_dict["key"] = key
        if operator is not UNSET:
            field_dict["operator"] = operator
        if value is not UNSET:
            field_dict["value"] = value
        if effect is not UNSET:
            field_dict["effect"] = effect

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        key = d.pop("key", UNSET)

        operator = d.pop("operator", UNSET)

        value = d.pop("value", UNSET)

        effect = d.pop("effect", UNSET)

        toleration = cls(
            key=key,
            operator=operator,
            value=value,
            effect=effect,
        )

        return toleration
