from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.approval_policy import ApprovalPolicy
    from ..models.deploy_rules import DeployRules
    from ..models.disruption_limits import DisruptionLimits


T = TypeVar("T", bound="OrgPolicyUpdate")


@_attrs_define
class OrgPolicyUpdate:
    """A new version of the organization's policy. It is in force from
    `effective_at` until a later version's; versions are never changed.

        Attributes:
            approvals (ApprovalPolicy | Unset): Which changes wait for approval, and who approves them.
            limits (DisruptionLimits | Unset): How many disruptive Operations may run at once: cluster upgrades,
                etcd restores, node-pool recycles, node removals, and node-pool and
                cluster deletions, from when they are queued until they finish. A change
                past a limit is refused (409 `policy_limit`, naming the rule).
            deploy (DeployRules | Unset): What may be deployed anywhere in the organization, over each project's
                own deploy policy (both must allow a deploy).
            effective_at (datetime.datetime | None | Unset): When it takes effect: now when omitted; at most 90 days ahead
                and 5
                minutes behind (taken as now). From then on it is in force over
                every version before it, scheduled ones included (one scheduled
                earlier still takes effect until then).
    """

    approvals: ApprovalPolicy | Unset = UNSET
    limits: DisruptionLimits | Unset = UNSET
    deploy: DeployRules | Unset = UNSET
    effective_at: datetime.datetime | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        approvals: dict[str, Any] | Unset = UNSET
        if not isinstance(self.approvals, Unset):
            approvals = self.approvals.to_dict()

        limits: dict[str, Any] | Unset = UNSET
        if not isinstance(self.limits, Unset):
            limits = self.limits.to_dict()

        deploy: dict[str, Any] | Unset = UNSET
        if not isinstance(self.deploy, Unset):
            deploy = self.deploy.to_dict()

        effective_at: None | str | Unset
        if isinstance(self.effective_at, Unset):
            effective_at = UNSET
        elif isinstance(self.effective_at, datetime.datetime):
            effective_at = self.effective_at.isoformat()
        else:
            effective_at = self.effective_at

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if approvals is not UNSET:
            field_dict["approvals"] = approvals
        if limits is not UNSET:
            field_dict["limits"] = limits
        if deploy is not UNSET:
            field_dict["deploy"] = deploy
        if effective_at is not UNSET:
            field_dict["effective_at"] = effective_at

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.approval_policy import ApprovalPolicy  # noqa: PLC0415
        from ..models.deploy_rules import DeployRules  # noqa: PLC0415
        from ..models.disruption_limits import DisruptionLimits  # noqa: PLC0415

        d = dict(src_dict)
        _approvals = d.pop("approvals", UNSET)
        approvals: ApprovalPolicy | Unset
        if isinstance(_approvals, Unset):
            approvals = UNSET
        else:
            approvals = ApprovalPolicy.from_dict(_approvals)

        _limits = d.pop("limits", UNSET)
        limits: DisruptionLimits | Unset
        if isinstance(_limits, Unset):
            limits = UNSET
        else:
            limits = DisruptionLimits.from_dict(_limits)

        _deploy = d.pop("deploy", UNSET)
        deploy: DeployRules | Unset
        if isinstance(_deploy, Unset):
            deploy = UNSET
        else:
            deploy = DeployRules.from_dict(_deploy)

        def _parse_effective_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                effective_at_type_0 = datetime.datetime.fromisoformat(data)

                return effective_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        effective_at = _parse_effective_at(d.pop("effective_at", UNSET))

        org_policy_update = cls(
            approvals=approvals,
            limits=limits,
            deploy=deploy,
            effective_at=effective_at,
        )

        return org_policy_update
