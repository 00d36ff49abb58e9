from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.org_role import OrgRole

T = TypeVar("T", bound="SsoConfigView")


@_attrs_define
class SsoConfigView:
    """
    Attributes:
        issuer (str):
        client_id (str):
        allowed_domains (list[str]):
        default_role (OrgRole): A role a principal holds in an organization.

            Users hold one through their membership; service accounts hold one
            of their own.
        login_url (str): Where people start signing in.
        redirect_uri (str):
        etag (str): Send as `If-Match` to update.
        updated_at (datetime.datetime):
    """

    issuer: str
    client_id: str
    allowed_domains: list[str]
    default_role: OrgRole
    login_url: str
    redirect_uri: str
    etag: str
    updated_at: datetime.datetime
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        issuer = self.issuer

        client_id = self.client_id

        allowed_domains = self.allowed_domains

        default_role = self.default_role.value

        login_url = self.login_url

        redirect_uri = self.redirect_uri

        etag = self.etag

        updated_at = self.updated_at.isoformat()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "issuer": issuer,
                "client_id": client_id,
                "allowed_domains": allowed_domains,
                "default_role": default_role,
                "login_url": login_url,
                "redirect_uri": redirect_uri,
                "etag": etag,
                "updated_at": updated_at,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        issuer = d.pop("issuer")

        client_id = d.pop("client_id")

        allowed_domains = cast(list[str], d.pop("allowed_domains"))

        default_role = OrgRole(d.pop("default_role"))

        login_url = d.pop("login_url")

        redirect_uri = d.pop("redirect_uri")

        etag = d.pop("etag")

        updated_at = datetime.datetime.fromisoformat(d.pop("updated_at"))

        sso_config_view = cls(
            issuer=issuer,
            client_id=client_id,
            allowed_domains=allowed_domains,
            default_role=default_role,
            login_url=login_url,
            redirect_uri=redirect_uri,
            etag=etag,
            updated_at=updated_at,
        )

        sso_config_view.additional_properties = d
        return sso_config_view

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
