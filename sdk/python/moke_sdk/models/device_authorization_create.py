from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="DeviceAuthorizationCreate")


@_attrs_define
class DeviceAuthorizationCreate:
    """`POST /v1/device/auth`: a device (the `moke` CLI) asks to be signed in.

    Attributes:
        client_name (None | str | Unset): What is asking, shown to the person who confirms and given to the
            token as its name, e.g. `moke CLI (laptop)`: 1-100 characters without
            control characters; surrounding whitespace is ignored. `moke CLI` if omitted.
    """

    client_name: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        client_name: None | str | Unset
        if isinstance(self.client_name, Unset):
            client_name = UNSET
        else:
            client_name = self.client_name

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if client_name is not UNSET:
            field_dict["client_name"] = client_name

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)

        def _parse_client_name(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        client_name = _parse_client_name(d.pop("client_name", UNSET))

        device_authorization_create = cls(
            client_name=client_name,
        )

        return device_authorization_create
