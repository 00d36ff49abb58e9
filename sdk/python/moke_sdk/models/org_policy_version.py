from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.approval_policy import ApprovalPolicy
    from ..models.deploy_rules import DeployRules
    from ..models.disruption_limits import DisruptionLimits


T = TypeVar("T", bound="OrgPolicyVersion")


@_attrs_define
class OrgPolicyVersion:
    """One version of the organization's policy.

    Attributes:
        version (int): 1, 2, …: what audit events name as `policy_version`.
        effective_at (datetime.datetime):
        approvals (ApprovalPolicy): Which changes wait for approval, and who approves them.
        limits (DisruptionLimits): How many disruptive Operations may run at once: cluster upgrades,
            etcd restores, node-pool recycles, node removals, and node-pool and
            cluster deletions, from when they are queued until they finish. A change
            past a limit is refused (409 `policy_limit`, naming the rule).
        deploy (DeployRules): What may be deployed anywhere in the organization, over each project's
            own deploy policy (both must allow a deploy).
        created_by (str): Who wrote it (`usr_…`).
        created_at (datetime.datetime):
    """

    version: int
    effective_at: datetime.datetime
    approvals: ApprovalPolicy
    limits: DisruptionLimits
    deploy: DeployRules
    created_by: str
    created_at: datetime.datetime
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        version = self.version

        effective_at = self.effective_at.isoformat()

        approvals = self.approvals.to_dict()

        limits = self.limits.to_dict()

        deploy = self.deploy.to_dict()

        created_by = self.created_by

        created_at = self.created_at.isoformat()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "version": version,
                "effective_at": effective_at,
                "approvals": approvals,
                "limits": limits,
                "deploy": deploy,
                "created_by": created_by,
                "created_at": created_at,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.approval_policy import ApprovalPolicy  # noqa: PLC0415
        from ..models.deploy_rules import DeployRules  # noqa: PLC0415
        from ..models.disruption_limits import DisruptionLimits  # noqa: PLC0415

        d = dict(src_dict)
        version = d.pop("version")

        effective_at = datetime.datetime.fromisoformat(d.pop("effective_at"))

        approvals = ApprovalPolicy.from_dict(d.pop("approvals"))

        limits = DisruptionLimits.from_dict(d.pop("limits"))

        deploy = DeployRules.from_dict(d.pop("deploy"))

        created_by = d.pop("created_by")

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        org_policy_version = cls(
            version=version,
            effective_at=effective_at,
            approvals=approvals,
            limits=limits,
            deploy=deploy,
            created_by=created_by,
            created_at=created_at,
        )

        org_policy_version.additional_properties = d
        return org_policy_version

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
