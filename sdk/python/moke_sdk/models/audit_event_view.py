from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.audit_credential import AuditCredential
    from ..models.audit_event_view_details import AuditEventViewDetails
    from ..models.audit_principal import AuditPrincipal


T = TypeVar("T", bound="AuditEventView")


@_attrs_define
class AuditEventView:
    """
    Attributes:
        id (str): audit event id, `aud_` followed by 32 hex digits
        occurred_at (datetime.datetime):
        action (str): e.g. `cluster.create`, `token.revoke`, `auth.token_rejected`.
        outcome (str): `success` or `failure`.
        principal (AuditPrincipal):
        resource_type (str):
        details (AuditEventViewDetails):
        credential (AuditCredential | None | Unset):
        resource_id (None | str | Unset):
        request_id (None | str | Unset):
        source_ip (None | str | Unset):
        user_agent (None | str | Unset):
    """

    id: str
    occurred_at: datetime.datetime
    action: str
    outcome: str
    principal: AuditPrincipal
    resource_type: str
    details: AuditEventViewDetails
    credential: AuditCredential | None | Unset = UNSET
    resource_id: None | str | Unset = UNSET
    request_id: None | str | Unset = UNSET
    source_ip: None | str | Unset = UNSET
    user_agent: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.audit_credential import AuditCredential  # noqa: PLC0415

        id = self.id

        occurred_at = self.occurred_at.isoformat()

        action = self.action

        outcome = self.outcome

        principal = self.principal.to_dict()

        resource_type = self.resource_type

        details = self.details.to_dict()

        credential: dict[str, Any] | None | Unset
        if isinstance(self.credential, Unset):
            credential = UNSET
        elif isinstance(self.credential, AuditCredential):
            credential = self.credential.to_dict()
        else:
            credential = self.credential

        resource_id: None | str | Unset
        if isinstance(self.resource_id, Unset):
            resource_id = UNSET
        else:
            resource_id = self.resource_id

        request_id: None | str | Unset
        if isinstance(self.request_id, Unset):
            request_id = UNSET
        else:
            request_id = self.request_id

        source_ip: None | str | Unset
        if isinstance(self.source_ip, Unset):
            source_ip = UNSET
        else:
            source_ip = self.source_ip

        user_agent: None | str | Unset
        if isinstance(self.user_agent, Unset):
            user_agent = UNSET
        else:
            user_agent = self.user_agent

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "id": id,
                "occurred_at": occurred_at,
                "action": action,
                "outcome": outcome,
                "principal": principal,
                "resource_type": resource_type,
                "details": details,
            }
        )
        if credential is not UNSET:
            field_dict["credential"] = credential
        if resource_id is not UNSET:
            field_dict["resource_id"] = resource_id
        if request_id is not UNSET:
            field_dict["request_id"] = request_id
        if source_ip is not UNSET:
            field_dict["source_ip"] = source_ip
        if user_agent is not UNSET:
            field_dict["user_agent"] = user_agent

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.audit_credential import AuditCredential  # noqa: PLC0415
        from ..models.audit_event_view_details import AuditEventViewDetails  # noqa: PLC0415
        from ..models.audit_principal import AuditPrincipal  # noqa: PLC0415

        d = dict(src_dict)
        id = d.pop("id")

        occurred_at = datetime.datetime.fromisoformat(d.pop("occurred_at"))

        action = d.pop("action")

        outcome = d.pop("outcome")

        principal = AuditPrincipal.from_dict(d.pop("principal"))

        resource_type = d.pop("resource_type")

        details = AuditEventViewDetails.from_dict(d.pop("details"))

        def _parse_credential(data: object) -> AuditCredential | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                credential_type_1 = AuditCredential.from_dict(data)

                return credential_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(AuditCredential | None | Unset, data)

        credential = _parse_credential(d.pop("credential", UNSET))

        def _parse_resource_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        resource_id = _parse_resource_id(d.pop("resource_id", UNSET))

        def _parse_request_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        request_id = _parse_request_id(d.pop("request_id", UNSET))

        def _parse_source_ip(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        source_ip = _parse_source_ip(d.pop("source_ip", UNSET))

        def _parse_user_agent(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        user_agent = _parse_user_agent(d.pop("user_agent", UNSET))

        audit_event_view = cls(
            id=id,
            occurred_at=occurred_at,
            action=action,
            outcome=outcome,
            principal=principal,
            resource_type=resource_type,
            details=details,
            credential=credential,
            resource_id=resource_id,
            request_id=request_id,
            source_ip=source_ip,
            user_agent=user_agent,
        )

        audit_event_view.additional_properties = d
        return audit_event_view

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
