from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="KubernetesVersionEntry")


@_attrs_define
class KubernetesVersionEntry:
    """
    Attributes:
        version (str): Minor version, e.g. `1.33`.
        end_of_life (datetime.date): After this day the version is refused for new clusters and upgrades.
        default (bool | Unset): The version new clusters get when they do not name one.
    """

    version: str
    end_of_life: datetime.date
    default: bool | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        version = self.version

        end_of_life = self.end_of_life.isoformat()

        default = self.default

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "version": version,
                "end_of_life": end_of_life,
            }
        )
        if default is not UNSET:
            field_dict["default"] = default

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        version = d.pop("version")

        end_of_life = datetime.date.fromisoformat(d.pop("end_of_life"))

        default = d.pop("default", UNSET)

        kubernetes_version_entry = cls(
            version=version,
            end_of_life=end_of_life,
            default=default,
        )

        return kubernetes_version_entry
