from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="DeviceDeny")


@_attrs_define
class DeviceDeny:
    """`POST /v1/device/deny`: the person refuses a device's sign-in.

    Attributes:
        user_code (str): The code the device shows, as for `POST /v1/device/confirm`.
    """

    user_code: str

    def to_dict(self) -> dict[str, Any]:
        user_code = self.user_code

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "user_code": user_code,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        user_code = d.pop("user_code")

        device_deny = cls(
            user_code=user_code,
        )

        return device_deny
