from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.approval_rule import ApprovalRule
from ..models.approval_state import ApprovalState
from ..models.approver_role import ApproverRole
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.dry_run_view import DryRunView


T = TypeVar("T", bound="ApprovalView")


@_attrs_define
class ApprovalView:
    """A change held for approval.

    Attributes:
        operation_id (str): operation id, `op_` followed by 32 hex digits
        state (ApprovalState): Where an approval request stands.
        rule (ApprovalRule): A kind of change the approval policy can hold for approval.
        policy_version (int): The policy version in force when it was asked for.
        approver_role (ApproverRole): Who may approve a held change: always someone other than the person who
            asked for it, signed in as a person (never a service account), who may
            also make the change themselves.
        requested_by (str): Who asked (`usr_…`, `sa_…`).
        requested_at (datetime.datetime):
        expires_at (datetime.datetime):
        plan (DryRunView): What a mutation would do, answered to a dry run (`?dry_run=true` on
            REST, `moke-validate-only: true` metadata on gRPC, `dryRun: true` on
            GraphQL) in place of its usual answer. The request went through
            everything up to its commit (validation, authorization, quotas, the
            region's backlog) and then wrote nothing: no row, no command to a
            region, no mail, no webhook, no audit event. A request a real call would
            refuse is refused the same way.
        decided_by (None | str | Unset):
        decided_at (datetime.datetime | None | Unset):
        reason (None | str | Unset): The approver's or rejecter's words, if any.
    """

    operation_id: str
    state: ApprovalState
    rule: ApprovalRule
    policy_version: int
    approver_role: ApproverRole
    requested_by: str
    requested_at: datetime.datetime
    expires_at: datetime.datetime
    plan: DryRunView
    decided_by: None | str | Unset = UNSET
    decided_at: datetime.datetime | None | Unset = UNSET
    reason: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        operation_id = self.operation_id

        state = self.state.value

        rule = self.rule.value

        policy_version = self.policy_version

        approver_role = self.approver_role.value

        requested_by = self.requested_by

        requested_at = self.requested_at.isoformat()

        expires_at = self.expires_at.isoformat()

        plan = self.plan.to_dict()

        decided_by: None | str | Unset
        if isinstance(self.decided_by, Unset):
            decided_by = UNSET
        else:
            decided_by = self.decided_by

        decided_at: None | str | Unset
        if isinstance(self.decided_at, Unset):
            decided_at = UNSET
        elif isinstance(self.decided_at, datetime.datetime):
            decided_at = self.decided_at.isoformat()
        else:
            decided_at = self.decided_at

        reason: None | str | Unset
        if isinstance(self.reason, Unset):
            reason = UNSET
        else:
            reason = self.reason

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "operation_id": operation_id,
                "state": state,
                "rule": rule,
                "policy_version": policy_version,
                "approver_role": approver_role,
                "requested_by": requested_by,
                "requested_at": requested_at,
                "expires_at": expires_at,
                "plan": plan,
            }
        )
        if decided_by is not UNSET:
            field_dict["decided_by"] = decided_by
        if decided_at is not UNSET:
            field_dict["decided_at"] = decided_at
        if reason is not UNSET:
            field_dict["reason"] = reason

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.dry_run_view import DryRunView  # noqa: PLC0415

        d = dict(src_dict)
        operation_id = d.pop("operation_id")

        state = ApprovalState(d.pop("state"))

        rule = ApprovalRule(d.pop("rule"))

        policy_version = d.pop("policy_version")

        approver_role = ApproverRole(d.pop("approver_role"))

        requested_by = d.pop("requested_by")

        requested_at = datetime.datetime.fromisoformat(d.pop("requested_at"))

        expires_at = datetime.datetime.fromisoformat(d.pop("expires_at"))

        plan = DryRunView.from_dict(d.pop("plan"))

        def _parse_decided_by(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        decided_by = _parse_decided_by(d.pop("decided_by", UNSET))

        def _parse_decided_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                decided_at_type_0 = datetime.datetime.fromisoformat(data)

                return decided_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        decided_at = _parse_decided_at(d.pop("decided_at", UNSET))

        def _parse_reason(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        reason = _parse_reason(d.pop("reason", UNSET))

        approval_view = cls(
            operation_id=operation_id,
            state=state,
            rule=rule,
            policy_version=policy_version,
            approver_role=approver_role,
            requested_by=requested_by,
            requested_at=requested_at,
            expires_at=expires_at,
            plan=plan,
            decided_by=decided_by,
            decided_at=decided_at,
            reason=reason,
        )

        approval_view.additional_properties = d
        return approval_view

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
