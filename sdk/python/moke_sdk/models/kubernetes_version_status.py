from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.version_support import VersionSupport

T = TypeVar("T", bound="KubernetesVersionStatus")


@_attrs_define
class KubernetesVersionStatus:
    """A Kubernetes version as the catalog offers it today.

    Attributes:
        version (str): Minor version, e.g. `1.33`.
        default (bool): The version new clusters get when they name none.
        support (VersionSupport): Where a Kubernetes version stands in its support.
        end_of_life (datetime.date):
    """

    version: str
    default: bool
    support: VersionSupport
    end_of_life: datetime.date
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        version = self.version

        default = self.default

        support = self.support.value

        end_of_life = self.end_of_life.isoformat()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "version": version,
                "default": default,
                "support": support,
                "end_of_life": end_of_life,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        version = d.pop("version")

        default = d.pop("default")

        support = VersionSupport(d.pop("support"))

        end_of_life = datetime.date.fromisoformat(d.pop("end_of_life"))

        kubernetes_version_status = cls(
            version=version,
            default=default,
            support=support,
            end_of_life=end_of_life,
        )

        kubernetes_version_status.additional_properties = d
        return kubernetes_version_status

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
