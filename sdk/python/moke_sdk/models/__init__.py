"""Contains all the data models used in inputs/outputs"""

from .action import Action
from .approval_decision import ApprovalDecision
from .approval_policy import ApprovalPolicy
from .approval_rule import ApprovalRule
from .approval_state import ApprovalState
from .approval_view import ApprovalView
from .approver_role import ApproverRole
from .audit_credential import AuditCredential
from .audit_event_view import AuditEventView
from .audit_event_view_details import AuditEventViewDetails
from .audit_principal import AuditPrincipal
from .automatic_upgrade import AutomaticUpgrade
from .automatic_upgrade_reason import AutomaticUpgradeReason
from .autoscaling import Autoscaling
from .billing_balance_view import BillingBalanceView
from .budget_alert import BudgetAlert
from .budget_basis import BudgetBasis
from .budget_create import BudgetCreate
from .budget_update import BudgetUpdate
from .budget_view import BudgetView
from .cluster_access import ClusterAccess
from .cluster_create import ClusterCreate
from .cluster_estimate_request import ClusterEstimateRequest
from .cluster_event_kind import ClusterEventKind
from .cluster_event_view import ClusterEventView
from .cluster_metrics import ClusterMetrics
from .cluster_revision_view import ClusterRevisionView
from .cluster_spec import ClusterSpec
from .cluster_spec_input import ClusterSpecInput
from .cluster_spec_patch import ClusterSpecPatch
from .cluster_update import ClusterUpdate
from .cluster_upgrade_request import ClusterUpgradeRequest
from .cluster_upgrades import ClusterUpgrades
from .cluster_view import ClusterView
from .condition import Condition
from .container_port import ContainerPort
from .control_plane_firewall import ControlPlaneFirewall
from .control_plane_input import ControlPlaneInput
from .control_plane_replicas import ControlPlaneReplicas
from .control_plane_spec import ControlPlaneSpec
from .credential_policy import CredentialPolicy
from .credential_policy_view import CredentialPolicyView
from .credit_grant_view import CreditGrantView
from .credit_kind import CreditKind
from .deploy_hook_create import DeployHookCreate
from .deploy_hook_created import DeployHookCreated
from .deploy_hook_secret_rotate import DeployHookSecretRotate
from .deploy_hook_view import DeployHookView
from .deploy_policy import DeployPolicy
from .deploy_policy_view import DeployPolicyView
from .deploy_rules import DeployRules
from .deployment_create import DeploymentCreate
from .deployment_create_manifest_type_0 import DeploymentCreateManifestType0
from .deployment_metrics import DeploymentMetrics
from .deployment_spec import DeploymentSpec
from .deployment_status import DeploymentStatus
from .deployment_update import DeploymentUpdate
from .deployment_update_manifest_type_0 import DeploymentUpdateManifestType0
from .deployment_update_spec_type_0 import DeploymentUpdateSpecType0
from .deployment_view import DeploymentView
from .device_authorization_create import DeviceAuthorizationCreate
from .device_authorization_created import DeviceAuthorizationCreated
from .device_authorization_view import DeviceAuthorizationView
from .device_confirm import DeviceConfirm
from .device_deny import DeviceDeny
from .device_grant_type import DeviceGrantType
from .device_token import DeviceToken
from .device_token_request import DeviceTokenRequest
from .disruption_limits import DisruptionLimits
from .domain_create import DomainCreate
from .domain_verification_record import DomainVerificationRecord
from .domain_view import DomainView
from .dry_run_view import DryRunView
from .endpoint_view import EndpointView
from .env_var import EnvVar
from .etcd_snapshot_view import EtcdSnapshotView
from .etcd_snapshots import EtcdSnapshots
from .exchanged_token import ExchangedToken
from .exec_credential import ExecCredential
from .exec_credential_status import ExecCredentialStatus
from .field_error_doc import FieldErrorDoc
from .hook_answer import HookAnswer
from .hook_rule import HookRule
from .hook_target import HookTarget
from .invitation_create import InvitationCreate
from .invitation_view import InvitationView
from .invoice_line import InvoiceLine
from .invoice_line_kind import InvoiceLineKind
from .invoice_status import InvoiceStatus
from .invoice_summary import InvoiceSummary
from .invoice_view import InvoiceView
from .kubeconfig_format import KubeconfigFormat
from .kubeconfig_view import KubeconfigView
from .kubernetes_version_entry import KubernetesVersionEntry
from .kubernetes_version_status import KubernetesVersionStatus
from .label_map import LabelMap
from .link_token import LinkToken
from .login_request import LoginRequest
from .logout_request import LogoutRequest
from .machine_type_entry import MachineTypeEntry
from .maintenance_exclusion import MaintenanceExclusion
from .maintenance_window import MaintenanceWindow
from .me_view import MeView
from .member_update import MemberUpdate
from .member_view import MemberView
from .membership_summary import MembershipSummary
from .namespace_create import NamespaceCreate
from .namespace_view import NamespaceView
from .node_pool_create import NodePoolCreate
from .node_pool_recycle_request import NodePoolRecycleRequest
from .node_pool_revision_view import NodePoolRevisionView
from .node_pool_spec import NodePoolSpec
from .node_pool_spec_input import NodePoolSpecInput
from .node_pool_spec_patch import NodePoolSpecPatch
from .node_pool_update import NodePoolUpdate
from .node_pool_view import NodePoolView
from .node_view import NodeView
from .observed_status import ObservedStatus
from .operation_error import OperationError
from .operation_status import OperationStatus
from .operation_step_view import OperationStepView
from .operation_steps import OperationSteps
from .operation_target import OperationTarget
from .operation_view import OperationView
from .org_create import OrgCreate
from .org_plan_view import OrgPlanView
from .org_policy_update import OrgPolicyUpdate
from .org_policy_version import OrgPolicyVersion
from .org_policy_view import OrgPolicyView
from .org_role import OrgRole
from .org_update import OrgUpdate
from .org_view import OrgView
from .page_audit_event_view import PageAuditEventView
from .page_budget_view import PageBudgetView
from .page_cluster_event_view import PageClusterEventView
from .page_cluster_revision_view import PageClusterRevisionView
from .page_cluster_view import PageClusterView
from .page_credit_grant_view import PageCreditGrantView
from .page_deploy_hook_view import PageDeployHookView
from .page_deployment_view import PageDeploymentView
from .page_domain_view import PageDomainView
from .page_invitation_view import PageInvitationView
from .page_invoice_summary import PageInvoiceSummary
from .page_member_view import PageMemberView
from .page_namespace_view import PageNamespaceView
from .page_node_pool_revision_view import PageNodePoolRevisionView
from .page_node_pool_view import PageNodePoolView
from .page_node_view import PageNodeView
from .page_operation_view import PageOperationView
from .page_org_policy_version import PageOrgPolicyVersion
from .page_org_view import PageOrgView
from .page_project_member_view import PageProjectMemberView
from .page_project_view import PageProjectView
from .page_revision_view import PageRevisionView
from .page_service_account_view import PageServiceAccountView
from .page_service_view import PageServiceView
from .page_session_view import PageSessionView
from .page_token_view import PageTokenView
from .page_trust_policy_view import PageTrustPolicyView
from .page_unmanaged_deployment_view import PageUnmanagedDeploymentView
from .page_webhook_delivery_view import PageWebhookDeliveryView
from .page_webhook_endpoint_view import PageWebhookEndpointView
from .password_reset_confirm import PasswordResetConfirm
from .password_reset_request import PasswordResetRequest
from .plan_change import PlanChange
from .plan_view import PlanView
from .plan_view_limits import PlanViewLimits
from .planned_approval import PlannedApproval
from .planned_change import PlannedChange
from .planned_change_details import PlannedChangeDetails
from .planned_operation import PlannedOperation
from .pod_view import PodView
from .price_change import PriceChange
from .price_estimate import PriceEstimate
from .price_estimate_line import PriceEstimateLine
from .probe import Probe
from .probes import Probes
from .problem import Problem
from .project_create import ProjectCreate
from .project_member_set import ProjectMemberSet
from .project_member_view import ProjectMemberView
from .project_role import ProjectRole
from .project_spec import ProjectSpec
from .project_update import ProjectUpdate
from .project_view import ProjectView
from .quota_failure import QuotaFailure
from .quota_item import QuotaItem
from .quota_source import QuotaSource
from .quotas_view import QuotasView
from .redelivery_create import RedeliveryCreate
from .refresh_request import RefreshRequest
from .region_health import RegionHealth
from .region_view import RegionView
from .release_channel import ReleaseChannel
from .resource_requests import ResourceRequests
from .revision_view import RevisionView
from .rollback_request import RollbackRequest
from .rollout_strategy import RolloutStrategy
from .scale_request import ScaleRequest
from .scoped_token_create import ScopedTokenCreate
from .selector_map import SelectorMap
from .service_account_create import ServiceAccountCreate
from .service_account_view import ServiceAccountView
from .service_create import ServiceCreate
from .service_create_manifest_type_0 import ServiceCreateManifestType0
from .service_port import ServicePort
from .service_spec import ServiceSpec
from .service_update import ServiceUpdate
from .service_update_manifest_type_0 import ServiceUpdateManifestType0
from .service_update_spec_type_0 import ServiceUpdateSpecType0
from .service_view import ServiceView
from .session_tokens import SessionTokens
from .session_view import SessionView
from .sessions_ended import SessionsEnded
from .signing_key_list_response_200 import SigningKeyListResponse200
from .signup_accepted import SignupAccepted
from .signup_confirm import SignupConfirm
from .signup_request import SignupRequest
from .signup_response import SignupResponse
from .snapshot_policy import SnapshotPolicy
from .snapshot_trigger import SnapshotTrigger
from .spec_change import SpecChange
from .spec_diff import SpecDiff
from .sso_config_set import SsoConfigSet
from .sso_config_view import SsoConfigView
from .sso_link_pending import SsoLinkPending
from .sso_link_view import SsoLinkView
from .sso_login_start import SsoLoginStart
from .taint import Taint
from .token_create import TokenCreate
from .token_created import TokenCreated
from .token_exchange_request import TokenExchangeRequest
from .token_view import TokenView
from .toleration import Toleration
from .trust_policy_create import TrustPolicyCreate
from .trust_policy_create_claims import TrustPolicyCreateClaims
from .trust_policy_view import TrustPolicyView
from .trust_policy_view_claims import TrustPolicyViewClaims
from .unmanaged_deployment_view import UnmanagedDeploymentView
from .upgrade_policy import UpgradePolicy
from .usage_day import UsageDay
from .usage_item import UsageItem
from .usage_report import UsageReport
from .user_view import UserView
from .version_support import VersionSupport
from .webhook_attempt_view import WebhookAttemptView
from .webhook_delivery_view import WebhookDeliveryView
from .webhook_endpoint_create import WebhookEndpointCreate
from .webhook_endpoint_created import WebhookEndpointCreated
from .webhook_endpoint_secret_rotate import WebhookEndpointSecretRotate
from .webhook_endpoint_update import WebhookEndpointUpdate
from .webhook_endpoint_view import WebhookEndpointView

__all__ = (
    "Action",
    "ApprovalDecision",
    "ApprovalPolicy",
    "ApprovalRule",
    "ApprovalState",
    "ApprovalView",
    "ApproverRole",
    "AuditCredential",
    "AuditEventView",
    "AuditEventViewDetails",
    "AuditPrincipal",
    "AutomaticUpgrade",
    "AutomaticUpgradeReason",
    "Autoscaling",
    "BillingBalanceView",
    "BudgetAlert",
    "BudgetBasis",
    "BudgetCreate",
    "BudgetUpdate",
    "BudgetView",
    "ClusterAccess",
    "ClusterCreate",
    "ClusterEstimateRequest",
    "ClusterEventKind",
    "ClusterEventView",
    "ClusterMetrics",
    "ClusterRevisionView",
    "ClusterSpec",
    "ClusterSpecInput",
    "ClusterSpecPatch",
    "ClusterUpdate",
    "ClusterUpgradeRequest",
    "ClusterUpgrades",
    "ClusterView",
    "Condition",
    "ContainerPort",
    "ControlPlaneFirewall",
    "ControlPlaneInput",
    "ControlPlaneReplicas",
    "ControlPlaneSpec",
    "CredentialPolicy",
    "CredentialPolicyView",
    "CreditGrantView",
    "CreditKind",
    "DeployHookCreate",
    "DeployHookCreated",
    "DeployHookSecretRotate",
    "DeployHookView",
    "DeploymentCreate",
    "DeploymentCreateManifestType0",
    "DeploymentMetrics",
    "DeploymentSpec",
    "DeploymentStatus",
    "DeploymentUpdate",
    "DeploymentUpdateManifestType0",
    "DeploymentUpdateSpecType0",
    "DeploymentView",
    "DeployPolicy",
    "DeployPolicyView",
    "DeployRules",
    "DeviceAuthorizationCreate",
    "DeviceAuthorizationCreated",
    "DeviceAuthorizationView",
    "DeviceConfirm",
    "DeviceDeny",
    "DeviceGrantType",
    "DeviceToken",
    "DeviceTokenRequest",
    "DisruptionLimits",
    "DomainCreate",
    "DomainVerificationRecord",
    "DomainView",
    "DryRunView",
    "EndpointView",
    "EnvVar",
    "EtcdSnapshots",
    "EtcdSnapshotView",
    "ExchangedToken",
    "ExecCredential",
    "ExecCredentialStatus",
    "FieldErrorDoc",
    "HookAnswer",
    "HookRule",
    "HookTarget",
    "InvitationCreate",
    "InvitationView",
    "InvoiceLine",
    "InvoiceLineKind",
    "InvoiceStatus",
    "InvoiceSummary",
    "InvoiceView",
    "KubeconfigFormat",
    "KubeconfigView",
    "KubernetesVersionEntry",
    "KubernetesVersionStatus",
    "LabelMap",
    "LinkToken",
    "LoginRequest",
    "LogoutRequest",
    "MachineTypeEntry",
    "MaintenanceExclusion",
    "MaintenanceWindow",
    "MembershipSummary",
    "MemberUpdate",
    "MemberView",
    "MeView",
    "NamespaceCreate",
    "NamespaceView",
    "NodePoolCreate",
    "NodePoolRecycleRequest",
    "NodePoolRevisionView",
    "NodePoolSpec",
    "NodePoolSpecInput",
    "NodePoolSpecPatch",
    "NodePoolUpdate",
    "NodePoolView",
    "NodeView",
    "ObservedStatus",
    "OperationError",
    "OperationStatus",
    "OperationSteps",
    "OperationStepView",
    "OperationTarget",
    "OperationView",
    "OrgCreate",
    "OrgPlanView",
    "OrgPolicyUpdate",
    "OrgPolicyVersion",
    "OrgPolicyView",
    "OrgRole",
    "OrgUpdate",
    "OrgView",
    "PageAuditEventView",
    "PageBudgetView",
    "PageClusterEventView",
    "PageClusterRevisionView",
    "PageClusterView",
    "PageCreditGrantView",
    "PageDeployHookView",
    "PageDeploymentView",
    "PageDomainView",
    "PageInvitationView",
    "PageInvoiceSummary",
    "PageMemberView",
    "PageNamespaceView",
    "PageNodePoolRevisionView",
    "PageNodePoolView",
    "PageNodeView",
    "PageOperationView",
    "PageOrgPolicyVersion",
    "PageOrgView",
    "PageProjectMemberView",
    "PageProjectView",
    "PageRevisionView",
    "PageServiceAccountView",
    "PageServiceView",
    "PageSessionView",
    "PageTokenView",
    "PageTrustPolicyView",
    "PageUnmanagedDeploymentView",
    "PageWebhookDeliveryView",
    "PageWebhookEndpointView",
    "PasswordResetConfirm",
    "PasswordResetRequest",
    "PlanChange",
    "PlannedApproval",
    "PlannedChange",
    "PlannedChangeDetails",
    "PlannedOperation",
    "PlanView",
    "PlanViewLimits",
    "PodView",
    "PriceChange",
    "PriceEstimate",
    "PriceEstimateLine",
    "Probe",
    "Probes",
    "Problem",
    "ProjectCreate",
    "ProjectMemberSet",
    "ProjectMemberView",
    "ProjectRole",
    "ProjectSpec",
    "ProjectUpdate",
    "ProjectView",
    "QuotaFailure",
    "QuotaItem",
    "QuotaSource",
    "QuotasView",
    "RedeliveryCreate",
    "RefreshRequest",
    "RegionHealth",
    "RegionView",
    "ReleaseChannel",
    "ResourceRequests",
    "RevisionView",
    "RollbackRequest",
    "RolloutStrategy",
    "ScaleRequest",
    "ScopedTokenCreate",
    "SelectorMap",
    "ServiceAccountCreate",
    "ServiceAccountView",
    "ServiceCreate",
    "ServiceCreateManifestType0",
    "ServicePort",
    "ServiceSpec",
    "ServiceUpdate",
    "ServiceUpdateManifestType0",
    "ServiceUpdateSpecType0",
    "ServiceView",
    "SessionsEnded",
    "SessionTokens",
    "SessionView",
    "SigningKeyListResponse200",
    "SignupAccepted",
    "SignupConfirm",
    "SignupRequest",
    "SignupResponse",
    "SnapshotPolicy",
    "SnapshotTrigger",
    "SpecChange",
    "SpecDiff",
    "SsoConfigSet",
    "SsoConfigView",
    "SsoLinkPending",
    "SsoLinkView",
    "SsoLoginStart",
    "Taint",
    "TokenCreate",
    "TokenCreated",
    "TokenExchangeRequest",
    "TokenView",
    "Toleration",
    "TrustPolicyCreate",
    "TrustPolicyCreateClaims",
    "TrustPolicyView",
    "TrustPolicyViewClaims",
    "UnmanagedDeploymentView",
    "UpgradePolicy",
    "UsageDay",
    "UsageItem",
    "UsageReport",
    "UserView",
    "VersionSupport",
    "WebhookAttemptView",
    "WebhookDeliveryView",
    "WebhookEndpointCreate",
    "WebhookEndpointCreated",
    "WebhookEndpointSecretRotate",
    "WebhookEndpointUpdate",
    "WebhookEndpointView",
)
