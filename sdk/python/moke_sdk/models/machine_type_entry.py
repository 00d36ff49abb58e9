from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="MachineTypeEntry")


@_attrs_define
class MachineTypeEntry:
    """
    Attributes:
        name (str):
        vcpus (int):
        memory_gib (int):
        price_key (str): Key of this machine type's hourly price in the price catalog.
    """

    name: str
    vcpus: int
    memory_gib: int
    price_key: str

    def to_dict(self) -> dict[str, Any]:
        name = self.name

        vcpus = self.vcpus

        memory_gib = self.memory_gib

        price_key = self.price_key

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "name": name,
                "vcpus": vcpus,
                "memory_gib": memory_gib,
                "price_key": price_key,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        name = d.pop("name")

        vcpus = d.pop("vcpus")

        memory_gib = d.pop("memory_gib")

        price_key = d.pop("price_key")

        machine_type_entry = cls(
            name=name,
            vcpus=vcpus,
            memory_gib=memory_gib,
            price_key=price_key,
        )

        return machine_type_entry
