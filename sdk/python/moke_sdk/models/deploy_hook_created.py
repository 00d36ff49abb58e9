from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.hook_rule import HookRule


T = TypeVar("T", bound="DeployHookCreated")


@_attrs_define
class DeployHookCreated:
    """A new hook and its signing secret, shown only now.

    Attributes:
        id (str): deploy hook id, `hk_` followed by 32 hex digits
        project_id (str): project id, `prj_` followed by 32 hex digits
        name (str):
        rules (list[HookRule]):
        url (str): Where CI sends deliveries.
        created_at (datetime.datetime):
        secret (str): `whsec_…`: the Standard Webhooks key, the GitHub webhook secret, or the GitLab secret token.
            Shown only once: empty in an answer replayed to a retry with the same `Idempotency-Key`.
        deployment_id (None | str | Unset):
        image_template (None | str | Unset):
        previous_secret_expires_at (datetime.datetime | None | Unset): After a secret rotation: until when the previous
            secret is still accepted.
        last_delivery_at (datetime.datetime | None | Unset):
    """

    id: str
    project_id: str
    name: str
    rules: list[HookRule]
    url: str
    created_at: datetime.datetime
    secret: str
    deployment_id: None | str | Unset = UNSET
    image_template: None | str | Unset = UNSET
    previous_secret_expires_at: datetime.datetime | None | Unset = UNSET
    last_delivery_at: datetime.datetime | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        id = self.id

        project_id = self.project_id

        name = self.name

        rules = []
        for rules_item_data in self.rules:
            rules_item = rules_item_data.to_dict()
            rules.append(rules_item)

        url = self.url

        created_at = self.created_at.isoformat()

        secret = self.secret

        deployment_id: None | str | Unset
        if isinstance(self.deployment_id, Unset):
            deployment_id = UNSET
        else:
            deployment_id = self.deployment_id

        image_template: None | str | Unset
        if isinstance(self.image_template, Unset):
            image_template = UNSET
        else:
            image_template = self.image_template

        previous_secret_expires_at: None | str | Unset
        if isinstance(self.previous_secret_expires_at, Unset):
            previous_secret_expires_at = UNSET
        elif isinstance(self.previous_secret_expires_at, datetime.datetime):
            previous_secret_expires_at = self.previous_secret_expires_at.isoformat()
        else:
            previous_secret_expires_at = self.previous_secret_expires_at

        last_delivery_at: None | str | Unset
        if isinstance(self.last_delivery_at, Unset):
            last_delivery_at = UNSET
        elif isinstance(self.last_delivery_at, datetime.datetime):
            last_delivery_at = self.last_delivery_at.isoformat()
        else:
            last_delivery_at = self.last_delivery_at

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "id": id,
                "project_id": project_id,
                "name": name,
                "rules": rules,
                "url": url,
                "created_at": created_at,
                "secret": secret,
            }
        )
        if deployment_id is not UNSET:
            field_dict["deployment_id"] = deployment_id
        if image_template is not UNSET:
            field_dict["image_template"] = image_template
        if previous_secret_expires_at is not UNSET:
            field_dict["previous_secret_expires_at"] = previous_secret_expires_at
        if last_delivery_at is not UNSET:
            field_dict["last_delivery_at"] = last_delivery_at

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.hook_rule import HookRule  # noqa: PLC0415

        d = dict(src_dict)
        id = d.pop("id")

        project_id = d.pop("project_id")

        name = d.pop("name")

        rules = []
        _rules = d.pop("rules")
        for rules_item_data in _rules:
            rules_item = HookRule.from_dict(rules_item_data)

            rules.append(rules_item)

        url = d.pop("url")

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        secret = d.pop("secret")

        def _parse_deployment_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        deployment_id = _parse_deployment_id(d.pop("deployment_id", UNSET))

        def _parse_image_template(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        image_template = _parse_image_template(d.pop("image_template", UNSET))

        def _parse_previous_secret_expires_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                previous_secret_expires_at_type_0 = datetime.datetime.fromisoformat(data)

                return previous_secret_expires_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        previous_secret_expires_at = _parse_previous_secret_expires_at(d.pop("previous_secret_expires_at", UNSET))

        def _parse_last_delivery_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                last_delivery_at_type_0 = datetime.datetime.fromisoformat(data)

                return last_delivery_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        last_delivery_at = _parse_last_delivery_at(d.pop("last_delivery_at", UNSET))

        deploy_hook_created = cls(
            id=id,
            project_id=project_id,
            name=name,
            rules=rules,
            url=url,
            created_at=created_at,
            secret=secret,
            deployment_id=deployment_id,
            image_template=image_template,
            previous_secret_expires_at=previous_secret_expires_at,
            last_delivery_at=last_delivery_at,
        )

        deploy_hook_created.additional_properties = d
        return deploy_hook_created

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
