from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="Probe")


@_attrs_define
class Probe:
    """An HTTP GET (when `http_path` is set) or TCP probe of a container port.

    Attributes:
        port (int):
        http_path (None | str | Unset):
        initial_delay_seconds (int | Unset):
        period_seconds (int | Unset):
    """

    port: int
    http_path: None | str | Unset = UNSET
    initial_delay_seconds: int | Unset = UNSET
    period_seconds: int | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        port = self.port

        http_path: None | str | Unset
        if isinstance(self.http_path, Unset):
            http_path = UNSET
        else:
            http_path = self.http_path

        initial_delay_seconds = self.initial_delay_seconds

        period_seconds = self.period_seconds

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "port": port,
            }
        )
        if http_path is not UNSET:
            field_dict["http_path"] = http_path
        if initial_delay_seconds is not UNSET:
            field_dict["initial_delay_seconds"] = initial_delay_seconds
        if period_seconds is not UNSET:
            field_dict["period_seconds"] = period_seconds

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        port = d.pop("port")

        def _parse_http_path(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        http_path = _parse_http_path(d.pop("http_path", UNSET))

        initial_delay_seconds = d.pop("initial_delay_seconds", UNSET)

        period_seconds = d.pop("period_seconds", UNSET)

        probe = cls(
            port=port,
            http_path=http_path,
            initial_delay_seconds=initial_delay_seconds,
            period_seconds=period_seconds,
        )

        return probe
