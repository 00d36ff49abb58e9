from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.quota_item import QuotaItem


T = TypeVar("T", bound="QuotasView")


@_attrs_define
class QuotasView:
    """An organization's quotas.

    Attributes:
        plan (str): The plan the limits come from, unless overridden (`GET /v1/plans`).
        clusters (QuotaItem): One quota: its limit and what is in use.
        node_pools_per_cluster (QuotaItem): One quota: its limit and what is in use.
        nodes (QuotaItem): One quota: its limit and what is in use.
        vcpus (QuotaItem): One quota: its limit and what is in use.
        webhook_endpoints (QuotaItem): One quota: its limit and what is in use.
        pending_invitations (QuotaItem): One quota: its limit and what is in use.
        invitations_per_hour (QuotaItem): One quota: its limit and what is in use.
        service_accounts (QuotaItem): One quota: its limit and what is in use.
        api_tokens (QuotaItem): One quota: its limit and what is in use.
        trust_policies (QuotaItem): One quota: its limit and what is in use.
        deploy_hooks (QuotaItem): One quota: its limit and what is in use.
        namespaces_per_cluster (QuotaItem): One quota: its limit and what is in use.
    """

    plan: str
    clusters: QuotaItem
    node_pools_per_cluster: QuotaItem
    nodes: QuotaItem
    vcpus: QuotaItem
    webhook_endpoints: QuotaItem
    pending_invitations: QuotaItem
    invitations_per_hour: QuotaItem
    service_accounts: QuotaItem
    api_tokens: QuotaItem
    trust_policies: QuotaItem
    deploy_hooks: QuotaItem
    namespaces_per_cluster: QuotaItem
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        plan = self.plan

        clusters = self.clusters.to_dict()

        node_pools_per_cluster = self.node_pools_per_cluster.to_dict()

        nodes = self.nodes.to_dict()

        vcpus = self.vcpus.to_dict()

        webhook_endpoints = self.webhook_endpoints.to_dict()

        pending_invitations = self.pending_invitations.to_dict()

        invitations_per_hour = self.invitations_per_hour.to_dict()

        service_accounts = self.service_accounts.to_dict()

        api_tokens = self.api_tokens.to_dict()

        trust_policies = self.trust_policies.to_dict()

        deploy_hooks = self.deploy_hooks.to_dict()

        namespaces_per_cluster = self.namespaces_per_cluster.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "plan": plan,
                "clusters": clusters,
                "node_pools_per_cluster": node_pools_per_cluster,
                "nodes": nodes,
                "vcpus": vcpus,
                "webhook_endpoints": webhook_endpoints,
                "pending_invitations": pending_invitations,
                "invitations_per_hour": invitations_per_hour,
                "service_accounts": service_accounts,
                "api_tokens": api_tokens,
                "trust_policies": trust_policies,
                "deploy_hooks": deploy_hooks,
                "namespaces_per_cluster": namespaces_per_cluster,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.quota_item import QuotaItem  # noqa: PLC0415

        d = dict(src_dict)
        plan = d.pop("plan")

        clusters = QuotaItem.from_dict(d.pop("clusters"))

        node_pools_per_cluster = QuotaItem.from_dict(d.pop("node_pools_per_cluster"))

        nodes = QuotaItem.from_dict(d.pop("nodes"))

        vcpus = QuotaItem.from_dict(d.pop("vcpus"))

        webhook_endpoints = QuotaItem.from_dict(d.pop("webhook_endpoints"))

        pending_invitations = QuotaItem.from_dict(d.pop("pending_invitations"))

        invitations_per_hour = QuotaItem.from_dict(d.pop("invitations_per_hour"))

        service_accounts = QuotaItem.from_dict(d.pop("service_accounts"))

        api_tokens = QuotaItem.from_dict(d.pop("api_tokens"))

        trust_policies = QuotaItem.from_dict(d.pop("trust_policies"))

        deploy_hooks = QuotaItem.from_dict(d.pop("deploy_hooks"))

        namespaces_per_cluster = QuotaItem.from_dict(d.pop("namespaces_per_cluster"))

        quotas_view = cls(
            plan=plan,
            clusters=clusters,
            node_pools_per_cluster=node_pools_per_cluster,
            nodes=nodes,
            vcpus=vcpus,
            webhook_endpoints=webhook_endpoints,
            pending_invitations=pending_invitations,
            invitations_per_hour=invitations_per_hour,
            service_accounts=service_accounts,
            api_tokens=api_tokens,
            trust_policies=trust_policies,
            deploy_hooks=deploy_hooks,
            namespaces_per_cluster=namespaces_per_cluster,
        )

        quotas_view.additional_properties = d
        return quotas_view

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
