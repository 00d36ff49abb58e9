from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.exec_credential_status import ExecCredentialStatus


T = TypeVar("T", bound="ExecCredential")


@_attrs_define
class ExecCredential:
    """A `client.authentication.k8s.io/v1` ExecCredential, as kubectl reads it
    from an exec plugin.

        Attributes:
            api_version (str):
            kind (str):
            status (ExecCredentialStatus):
    """

    api_version: str
    kind: str
    status: ExecCredentialStatus
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        api_version = self.api_version

        kind = self.kind

        status = self.status.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "apiVersion": api_version,
                "kind": kind,
                "status": status,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.exec_credential_status import ExecCredentialStatus  # noqa: PLC0415

        d = dict(src_dict)
        api_version = d.pop("apiVersion")

        kind = d.pop("kind")

        status = ExecCredentialStatus.from_dict(d.pop("status"))

        exec_credential = cls(
            api_version=api_version,
            kind=kind,
            status=status,
        )

        exec_credential.additional_properties = d
        return exec_credential

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
