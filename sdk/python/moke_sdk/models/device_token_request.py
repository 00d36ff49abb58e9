from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

from ..models.device_grant_type import DeviceGrantType

T = TypeVar("T", bound="DeviceTokenRequest")


@_attrs_define
class DeviceTokenRequest:
    """`POST /v1/device/token`: a device polls for its credential (RFC 8628 §3.4).

    Attributes:
        device_code (str): The `device_code` of `POST /v1/device/auth`.
        grant_type (DeviceGrantType): The only grant `POST /v1/device/token` takes.
    """

    device_code: str
    grant_type: DeviceGrantType

    def to_dict(self) -> dict[str, Any]:
        device_code = self.device_code

        grant_type = self.grant_type.value

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "device_code": device_code,
                "grant_type": grant_type,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        device_code = d.pop("device_code")

        grant_type = DeviceGrantType(d.pop("grant_type"))

        device_token_request = cls(
            device_code=device_code,
            grant_type=grant_type,
        )

        return device_token_request
