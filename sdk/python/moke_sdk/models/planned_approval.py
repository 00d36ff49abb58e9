from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.approval_rule import ApprovalRule
from ..models.approver_role import ApproverRole

T = TypeVar("T", bound="PlannedApproval")


@_attrs_define
class PlannedApproval:
    """A dry run's note that the change would wait for approval.

    Attributes:
        rule (ApprovalRule): A kind of change the approval policy can hold for approval.
        policy_version (int):
        approver_role (ApproverRole): Who may approve a held change: always someone other than the person who
            asked for it, signed in as a person (never a service account), who may
            also make the change themselves.
        expires_after_hours (int):
    """

    rule: ApprovalRule
    policy_version: int
    approver_role: ApproverRole
    expires_after_hours: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        rule = self.rule.value

        policy_version = self.policy_version

        approver_role = self.approver_role.value

        expires_after_hours = self.expires_after_hours

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "rule": rule,
                "policy_version": policy_version,
                "approver_role": approver_role,
                "expires_after_hours": expires_after_hours,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        rule = ApprovalRule(d.pop("rule"))

        policy_version = d.pop("policy_version")

        approver_role = ApproverRole(d.pop("approver_role"))

        expires_after_hours = d.pop("expires_after_hours")

        planned_approval = cls(
            rule=rule,
            policy_version=policy_version,
            approver_role=approver_role,
            expires_after_hours=expires_after_hours,
        )

        planned_approval.additional_properties = d
        return planned_approval

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
