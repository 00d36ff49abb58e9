from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="DeviceConfirm")


@_attrs_define
class DeviceConfirm:
    """`POST /v1/device/confirm`: the person approves a device's sign-in.

    Attributes:
        user_code (str): The code the device shows: 8 letters of `BCDFGHJKLMNPQRSTVWXZ` in
            either case; `-` and spaces are ignored (`XXXX-XXXX`).
        organization (None | str | Unset):
    """

    user_code: str
    organization: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        user_code = self.user_code

        organization: None | str | Unset
        if isinstance(self.organization, Unset):
            organization = UNSET
        else:
            organization = self.organization

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "user_code": user_code,
            }
        )
        if organization is not UNSET:
            field_dict["organization"] = organization

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        user_code = d.pop("user_code")

        def _parse_organization(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        organization = _parse_organization(d.pop("organization", UNSET))

        device_confirm = cls(
            user_code=user_code,
            organization=organization,
        )

        return device_confirm
