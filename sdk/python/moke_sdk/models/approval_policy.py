from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

from ..models.approval_rule import ApprovalRule
from ..models.approver_role import ApproverRole
from ..types import UNSET, Unset

T = TypeVar("T", bound="ApprovalPolicy")


@_attrs_define
class ApprovalPolicy:
    """Which changes wait for approval, and who approves them.

    Attributes:
        required_for (list[ApprovalRule] | Unset): The kinds of change that wait in `awaiting_approval` (a kind named
            twice counts once). Empty: nothing waits.
        scale_down_over_percent (int | Unset): A node-pool change waits (with `node_pool_scale_down`) when it
            removes more than this percent of the pool's nodes: 1 to 99. Default: 50.
        approver_role (ApproverRole | Unset): Who may approve a held change: always someone other than the person who
            asked for it, signed in as a person (never a service account), who may
            also make the change themselves.
        expires_after_hours (int | Unset): Hours a request waits before it expires unapproved (and never
            acts): 1 to 168. Default: 24.
    """

    required_for: list[ApprovalRule] | Unset = UNSET
    scale_down_over_percent: int | Unset = 50
    approver_role: ApproverRole | Unset = UNSET
    expires_after_hours: int | Unset = 24

    def to_dict(self) -> dict[str, Any]:
        required_for: list[str] | Unset = UNSET
        if not isinstance(self.required_for, Unset):
            required_for = []
            for required_for_item_data in self.required_for:
                required_for_item = required_for_item_data.value
                required_for.append(required_for_item)

        scale_down_over_percent = self.scale_down_over_percent

        approver_role: str | Unset = UNSET
        if not isinstance(self.approver_role, Unset):
            approver_role = self.approver_role.value

        expires_after_hours = self.expires_after_hours

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if required_for is not UNSET:
            field_dict["required_for"] = required_for
        if scale_down_over_percent is not UNSET:
            field_dict["scale_down_over_percent"] = scale_down_over_percent
        if approver_role is not UNSET:
            field_dict["approver_role"] = approver_role
        if expires_after_hours is not UNSET:
            field_dict["expires_after_hours"] = expires_after_hours

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        _required_for = d.pop("required_for", UNSET)
        required_for: list[ApprovalRule] | Unset = UNSET
        if _required_for is not UNSET:
            required_for = []
            for required_for_item_data in _required_for:
                required_for_item = ApprovalRule(required_for_item_data)

                required_for.append(required_for_item)

        scale_down_over_percent = d.pop("scale_down_over_percent", UNSET)

        _approver_role = d.pop("approver_role", UNSET)
        approver_role: ApproverRole | Unset
        if isinstance(_approver_role, Unset):
            approver_role = UNSET
        else:
            approver_role = ApproverRole(_approver_role)

        expires_after_hours = d.pop("expires_after_hours", UNSET)

        approval_policy = cls(
            required_for=required_for,
            scale_down_over_percent=scale_down_over_percent,
            approver_role=approver_role,
            expires_after_hours=expires_after_hours,
        )

        return approval_policy
