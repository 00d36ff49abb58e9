//! Conversions between the public resource model and `moke.v1` messages.
//! Field for field the same data as the REST JSON, timestamps included.

use chrono::{DateTime, Utc};
use moke_proto::v1 as pb;
use tonic::Status;

use crate::app::Error;
use crate::model::*;

/// A time as `google.protobuf.Timestamp`.
pub fn timestamp(t: DateTime<Utc>) -> prost_types::Timestamp {
    prost_types::Timestamp { seconds: t.timestamp(), nanos: t.timestamp_subsec_nanos() as i32 }
}

/// An optional time: unset when there is none.
pub fn opt_timestamp(t: Option<DateTime<Utc>>) -> Option<prost_types::Timestamp> {
    t.map(timestamp)
}

/// A length of time in (fractional) seconds as `google.protobuf.Duration`.
pub fn seconds(seconds: f64) -> prost_types::Duration {
    let whole = seconds.trunc();
    // Saturating float-to-int casts: a real age is far inside both ranges.
    prost_types::Duration { seconds: whole as i64, nanos: ((seconds - whole) * 1e9) as i32 }
}

/// A `google.protobuf.Timestamp` from a request, refused by field name when
/// out of range.
pub fn timestamp_in(field: &str, t: prost_types::Timestamp) -> Result<DateTime<Utc>, Status> {
    u32::try_from(t.nanos)
        .ok()
        .and_then(|nanos| DateTime::from_timestamp(t.seconds, nanos))
        .ok_or_else(|| super::status(Error::invalid_field(field, "invalid", "not a valid time")))
}

pub fn next_page(token: Option<String>) -> String {
    token.unwrap_or_default()
}

fn status(s: ObservedStatus) -> pb::ObservedStatus {
    pb::ObservedStatus {
        phase: s.phase,
        observed_generation: s.observed_generation,
        conditions: s
            .conditions
            .into_iter()
            .map(|c| pb::Condition {
                r#type: c.condition_type,
                status: c.status,
                reason: c.reason,
                message: c.message,
                last_transition_time: Some(timestamp(c.last_transition_time)),
            })
            .collect(),
        observed_at: opt_timestamp(s.observed_at),
        stale: s.stale,
    }
}

pub fn org(o: OrgView) -> pb::Org {
    pb::Org {
        id: o.id.to_string(),
        name: o.name,
        display_name: o.display_name,
        labels: o.labels.into_iter().collect(),
        etag: o.etag,
        create_time: Some(timestamp(o.created_at)),
        update_time: Some(timestamp(o.updated_at)),
    }
}

pub fn quotas(q: QuotasView) -> pb::Quotas {
    let item = |i: QuotaItem| {
        let source = match i.source {
            QuotaSource::Plan => "plan",
            QuotaSource::Override => "override",
        };
        Some(pb::QuotaItem { limit: i.limit, usage: i.usage, source: source.into() })
    };
    pb::Quotas {
        clusters: item(q.clusters),
        node_pools_per_cluster: item(q.node_pools_per_cluster),
        nodes: item(q.nodes),
        vcpus: item(q.vcpus),
        plan: q.plan,
        webhook_endpoints: item(q.webhook_endpoints),
        pending_invitations: item(q.pending_invitations),
        invitations_per_hour: item(q.invitations_per_hour),
        service_accounts: item(q.service_accounts),
        api_tokens: item(q.api_tokens),
        trust_policies: item(q.trust_policies),
        deploy_hooks: item(q.deploy_hooks),
        namespaces_per_cluster: item(q.namespaces_per_cluster),
    }
}

pub fn project(p: ProjectView) -> pb::Project {
    pb::Project {
        id: p.id.to_string(),
        org_id: p.org_id.to_string(),
        name: p.name,
        labels: p.labels.into_iter().collect(),
        spec: Some(pb::ProjectSpec { description: p.spec.description }),
        generation: p.generation,
        etag: p.etag,
        create_time: Some(timestamp(p.created_at)),
        update_time: Some(timestamp(p.updated_at)),
    }
}

fn window(w: MaintenanceWindow) -> pb::MaintenanceWindow {
    pb::MaintenanceWindow { day: w.day, start_time: w.start_time, duration_hours: w.duration_hours }
}

pub fn window_in(w: pb::MaintenanceWindow) -> MaintenanceWindow {
    MaintenanceWindow { day: w.day, start_time: w.start_time, duration_hours: w.duration_hours }
}

pub fn firewall_in(f: pb::ControlPlaneFirewall) -> ControlPlaneFirewall {
    ControlPlaneFirewall { enabled: f.enabled, allowed_addresses: f.allowed_addresses }
}

pub fn snapshot_policy_in(p: pb::SnapshotPolicy) -> SnapshotPolicy {
    SnapshotPolicy { every_hours: p.every_hours, keep: p.keep }
}

pub fn snapshots(list: EtcdSnapshots) -> pb::ListClusterSnapshotsResponse {
    let snapshots = list
        .items
        .into_iter()
        .map(|s| pb::EtcdSnapshot {
            name: s.name,
            take_time: Some(timestamp(s.taken_at)),
            size_bytes: s.size_bytes,
            kubernetes_version: s.kubernetes_version,
            trigger: match s.trigger {
                SnapshotTrigger::Scheduled => "scheduled",
                SnapshotTrigger::OnDemand => "on_demand",
            }
            .to_string(),
        })
        .collect();
    pb::ListClusterSnapshotsResponse { snapshots }
}

fn cluster_spec(spec: ClusterSpec) -> pb::ClusterSpec {
    pb::ClusterSpec {
        region: spec.region,
        kubernetes_version: spec.kubernetes_version,
        control_plane_replicas: spec.control_plane.replicas,
        maintenance_window: spec.maintenance_window.map(window),
        deletion_protection: spec.deletion_protection,
        snapshot_policy: Some(pb::SnapshotPolicy {
            every_hours: spec.snapshot_policy.every_hours,
            keep: spec.snapshot_policy.keep,
        }),
        control_plane_firewall: Some(pb::ControlPlaneFirewall {
            enabled: spec.control_plane_firewall.enabled,
            allowed_addresses: spec.control_plane_firewall.allowed_addresses,
        }),
        release_channel: spec.release_channel.as_str().into(),
        maintenance_exclusions: spec
            .maintenance_exclusions
            .into_iter()
            .map(|e| pb::MaintenanceExclusion {
                name: e.name,
                start_date: e.start_date.to_string(),
                end_date: e.end_date.to_string(),
            })
            .collect(),
    }
}

/// A release channel by name (`field` says where, for the error).
pub fn release_channel_in(field: &str, text: &str) -> Result<ReleaseChannel, Status> {
    ReleaseChannel::parse(text).ok_or_else(|| {
        let message = "must be \"none\", \"rapid\", \"regular\" or \"stable\"";
        super::status(Error::invalid_field(field, "invalid", message))
    })
}

/// Maintenance exclusions with their dates as `YYYY-MM-DD`.
pub fn exclusions_in(field: &str, list: Vec<pb::MaintenanceExclusion>) -> Result<Vec<MaintenanceExclusion>, Status> {
    list.into_iter()
        .enumerate()
        .map(|(i, e)| {
            let date = |name: &str, text: &str| {
                text.parse::<chrono::NaiveDate>().map_err(|_| {
                    super::status(Error::invalid_field(
                        &format!("{field}[{i}].{name}"),
                        "invalid",
                        "must be YYYY-MM-DD",
                    ))
                })
            };
            Ok(MaintenanceExclusion {
                start_date: date("start_date", &e.start_date)?,
                end_date: date("end_date", &e.end_date)?,
                name: e.name,
            })
        })
        .collect()
}

fn node_pool_spec(spec: NodePoolSpec) -> pb::NodePoolSpec {
    pb::NodePoolSpec {
        machine_type: spec.machine_type,
        count: spec.count,
        autoscaling: spec.autoscaling.map(autoscaling),
        zones: spec.zones,
        node_labels: spec.node_labels.into_iter().collect(),
        taints: spec.taints.into_iter().map(|t| pb::Taint { key: t.key, value: t.value, effect: t.effect }).collect(),
        upgrade_policy: Some(pb::UpgradePolicy {
            max_surge: spec.upgrade_policy.max_surge,
            max_unavailable: spec.upgrade_policy.max_unavailable,
        }),
    }
}

pub fn upgrade_policy_in(p: pb::UpgradePolicy) -> UpgradePolicy {
    UpgradePolicy { max_surge: p.max_surge, max_unavailable: p.max_unavailable }
}

pub fn cluster_revision(r: ClusterRevisionView) -> pb::ClusterRevision {
    pb::ClusterRevision {
        generation: r.generation,
        spec: Some(cluster_spec(r.spec)),
        cause: r.cause.unwrap_or_default(),
        operation_id: r.operation_id.map(|id| id.to_string()).unwrap_or_default(),
        created_by: r.created_by.unwrap_or_default(),
        create_time: Some(timestamp(r.created_at)),
    }
}

pub fn node_pool_revision(r: NodePoolRevisionView) -> pb::NodePoolRevision {
    pb::NodePoolRevision {
        generation: r.generation,
        spec: Some(node_pool_spec(r.spec)),
        cause: r.cause.unwrap_or_default(),
        operation_id: r.operation_id.map(|id| id.to_string()).unwrap_or_default(),
        created_by: r.created_by.unwrap_or_default(),
        create_time: Some(timestamp(r.created_at)),
    }
}

pub fn spec_diff(d: SpecDiff) -> pb::SpecDiff {
    let json = |value: Option<serde_json::Value>| value.map(|v| v.to_string()).unwrap_or_default();
    pb::SpecDiff {
        from_generation: d.from,
        to_generation: d.to,
        changes: d
            .changes
            .into_iter()
            .map(|c| pb::SpecChange { path: c.path, before_json: json(c.before), after_json: json(c.after) })
            .collect(),
    }
}

pub fn cluster(c: ClusterView) -> pb::Cluster {
    pb::Cluster {
        id: c.id.to_string(),
        project_id: c.project_id.to_string(),
        name: c.name,
        labels: c.labels.into_iter().collect(),
        spec: Some(cluster_spec(c.spec)),
        generation: c.generation,
        status: Some(status(c.status)),
        deletion_request_time: opt_timestamp(c.deletion_requested_at),
        etag: c.etag,
        create_time: Some(timestamp(c.created_at)),
        update_time: Some(timestamp(c.updated_at)),
        upgrade_available: c.upgrade_available.unwrap_or_default(),
    }
}

fn autoscaling(a: Autoscaling) -> pb::Autoscaling {
    pb::Autoscaling { min_count: a.min_count, max_count: a.max_count }
}

pub fn autoscaling_in(a: pb::Autoscaling) -> Autoscaling {
    Autoscaling { min_count: a.min_count, max_count: a.max_count }
}

pub fn taint_in(t: pb::Taint) -> Taint {
    Taint { key: t.key, value: t.value, effect: t.effect }
}

pub fn node_pool(p: NodePoolView) -> pb::NodePool {
    pb::NodePool {
        id: p.id.to_string(),
        cluster_id: p.cluster_id.to_string(),
        name: p.name,
        labels: p.labels.into_iter().collect(),
        spec: Some(node_pool_spec(p.spec)),
        generation: p.generation,
        status: Some(status(p.status)),
        deletion_request_time: opt_timestamp(p.deletion_requested_at),
        etag: p.etag,
        create_time: Some(timestamp(p.created_at)),
        update_time: Some(timestamp(p.updated_at)),
    }
}

/// An Operation in google.longrunning.Operation's shape: the REST view as
/// its metadata, and once done, its error or its target as the response.
pub fn operation(o: OperationView) -> pb::Operation {
    use pb::operation::Result as Outcome;
    let target = pb::OperationTarget {
        r#type: o.target.target_type,
        id: o.target.id,
        name: o.target.name,
        generation: o.target.generation,
    };
    let done = o.status.is_terminal();
    let result = match (&o.error, done) {
        (Some(e), true) => Some(Outcome::Error(operation_error(&e.code, &e.message))),
        (None, true) => Some(Outcome::Response(any("moke.v1.OperationTarget", &target))),
        (_, false) => None,
    };
    let metadata = pb::OperationMetadata {
        id: o.id.to_string(),
        kind: o.kind,
        status: o.status.as_str().to_string(),
        step: o.step,
        progress: o.progress,
        error: o.error.map(|e| pb::OperationError { code: e.code, message: e.message }),
        target: Some(target),
        create_time: Some(timestamp(o.created_at)),
        update_time: Some(timestamp(o.updated_at)),
        finish_time: opt_timestamp(o.finished_at),
    };
    pb::Operation { name: o.id.to_string(), metadata: Some(any("moke.v1.OperationMetadata", &metadata)), done, result }
}

/// `message` packed as a `google.protobuf.Any` of the type `full_name`.
fn any(full_name: &str, message: &impl prost::Message) -> prost_types::Any {
    prost_types::Any { type_url: format!("type.googleapis.com/{full_name}"), value: message.encode_to_vec() }
}

/// A failed Operation's error as `google.rpc.Status`: the gRPC code nearest
/// its REST code, which is also the reason of its `ErrorInfo`.
fn operation_error(code: &str, message: &str) -> tonic_types::pb::Status {
    let grpc = match code {
        "cancelled" => tonic::Code::Cancelled,
        "deadline_exceeded" => tonic::Code::DeadlineExceeded,
        "quota_exceeded" => tonic::Code::ResourceExhausted,
        "precondition_failed" | "downgrade" => tonic::Code::FailedPrecondition,
        _ => tonic::Code::Unknown,
    };
    let info = tonic_types::pb::ErrorInfo {
        reason: code.to_string(),
        domain: super::ERROR_DOMAIN.to_string(),
        metadata: Default::default(),
    };
    tonic_types::pb::Status {
        code: grpc as i32,
        message: message.to_string(),
        details: vec![any("google.rpc.ErrorInfo", &info)],
    }
}

pub fn cluster_event(e: crate::model::ClusterEventView) -> pb::ClusterEvent {
    pb::ClusterEvent {
        time: Some(timestamp(e.at)),
        kind: serde_json::to_value(e.kind).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default(),
        resource_type: e.resource_type,
        resource_id: e.resource_id,
        resource_name: e.resource_name,
        message: e.message,
        operation_id: e.operation_id.map(|id| id.to_string()).unwrap_or_default(),
    }
}

pub fn operation_step(s: crate::model::OperationStepView) -> pb::OperationStep {
    pb::OperationStep {
        status: s.status.as_str().to_string(),
        step: s.step,
        progress: s.progress,
        time: Some(timestamp(s.at)),
    }
}

pub fn token(t: TokenView) -> pb::Token {
    pb::Token {
        id: t.id.to_string(),
        name: t.name,
        role: t.role.as_str().to_string(),
        hint: t.hint,
        create_time: Some(timestamp(t.created_at)),
        expire_time: opt_timestamp(t.expires_at),
        last_use_time: opt_timestamp(t.last_used_at),
        revoke_time: opt_timestamp(t.revoked_at),
    }
}

/// A `CreateClusterRequest` as the model's create (its project aside).
pub fn cluster_create_in(r: pb::CreateClusterRequest) -> Result<ClusterCreate, Status> {
    let release_channel = match &r.release_channel {
        Some(text) => Some(release_channel_in("spec.release_channel", text)?),
        None => None,
    };
    let exclusions = exclusions_in("spec.maintenance_exclusions", r.maintenance_exclusions)?;
    Ok(ClusterCreate {
        name: r.name,
        labels: r.labels.into_iter().collect(),
        spec: ClusterSpecInput {
            region: r.region.unwrap_or_default(),
            kubernetes_version: r.kubernetes_version,
            control_plane: r.control_plane_replicas.map(|replicas| ControlPlaneInput { replicas }),
            maintenance_window: r.maintenance_window.map(window_in),
            deletion_protection: r.deletion_protection,
            snapshot_policy: r.snapshot_policy.map(snapshot_policy_in),
            control_plane_firewall: r.control_plane_firewall.map(firewall_in),
            release_channel,
            maintenance_exclusions: (!exclusions.is_empty()).then_some(exclusions),
        },
    })
}

/// A usage report.
pub fn usage_report(report: UsageReport) -> pb::UsageReport {
    pb::UsageReport {
        currency: report.currency,
        start: report.start.to_string(),
        end: report.end.to_string(),
        days: report.days.into_iter().map(|d| pb::UsageDay { day: d.day.to_string(), amount: d.amount }).collect(),
        items: report
            .items
            .into_iter()
            .map(|i| pb::UsageItem {
                day: i.day.to_string(),
                project: i.project,
                resource_id: i.resource_id,
                resource_name: i.resource_name,
                sku: i.sku,
                product: i.product,
                hours: i.hours,
                unit_price: i.unit_price,
                amount: i.amount,
            })
            .collect(),
        total: report.total,
    }
}

/// A plan on offer.
pub fn plan(plan: PlanView) -> pb::Plan {
    pb::Plan {
        id: plan.id,
        display_name: plan.display_name,
        description: plan.description,
        limits: plan.limits.into_iter().collect(),
        self_serve: plan.self_serve,
    }
}

/// An organization's plan.
pub fn org_plan(view: OrgPlanView) -> pb::OrgPlan {
    pb::OrgPlan { plan: Some(plan(view.plan)), change_time: opt_timestamp(view.changed_at) }
}

/// A version's support as its JSON name (`supported`, `deprecated`, `end_of_life`).
fn version_status(version: KubernetesVersionStatus) -> pb::KubernetesVersionStatus {
    let support = match version.support {
        VersionSupport::Supported => "supported",
        VersionSupport::Deprecated => "deprecated",
        VersionSupport::EndOfLife => "end_of_life",
    };
    pb::KubernetesVersionStatus {
        version: version.version,
        default: version.default,
        support: support.into(),
        end_of_life: version.end_of_life.to_string(),
    }
}

pub fn cluster_upgrades(upgrades: ClusterUpgrades) -> pb::ClusterUpgrades {
    pb::ClusterUpgrades {
        current: Some(version_status(upgrades.current)),
        available: upgrades.available.into_iter().map(version_status).collect(),
        automatic: upgrades.automatic.map(|a| pb::AutomaticUpgrade {
            kubernetes_version: a.kubernetes_version,
            reason: a.reason.as_str().into(),
            notice_time: opt_timestamp(a.noticed_at),
            earliest_start_time: opt_timestamp(a.earliest_start),
            operation_id: a.operation_id.map(|id| id.to_string()).unwrap_or_default(),
        }),
    }
}

pub fn price_estimate(estimate: PriceEstimate) -> pb::PriceEstimate {
    pb::PriceEstimate {
        currency: estimate.currency,
        price_version: estimate.price_version,
        lines: estimate
            .lines
            .into_iter()
            .map(|line| pb::PriceEstimateLine {
                sku: line.sku,
                product: line.product,
                count: line.count,
                hours: line.hours,
                unit_price: line.unit_price,
                amount: line.amount,
            })
            .collect(),
        monthly_total: estimate.monthly_total,
    }
}

/// What a change does to a cluster's monthly price.
pub fn price_change(change: PriceChange) -> pb::PriceChange {
    pb::PriceChange {
        current: Some(price_estimate(change.current)),
        proposed: Some(price_estimate(change.proposed)),
        monthly_delta: change.monthly_delta,
    }
}

/// A `CreateNodePoolRequest` as the model's create (its project and cluster aside).
pub fn node_pool_create_in(r: pb::CreateNodePoolRequest) -> NodePoolCreate {
    let spec = r.spec.unwrap_or_default();
    NodePoolCreate {
        name: r.name,
        labels: r.labels.into_iter().collect(),
        spec: NodePoolSpecInput {
            machine_type: spec.machine_type,
            count: spec.count,
            autoscaling: spec.autoscaling.map(autoscaling_in),
            zones: (!spec.zones.is_empty()).then_some(spec.zones),
            node_labels: spec.node_labels.into_iter().collect(),
            taints: spec.taints.into_iter().map(taint_in).collect(),
            upgrade_policy: spec.upgrade_policy.map(upgrade_policy_in),
        },
    }
}

pub fn invoice(s: InvoiceSummary, lines: Vec<InvoiceLine>) -> pb::Invoice {
    let kind = |k: InvoiceLineKind| match k {
        InvoiceLineKind::Usage => "usage",
        InvoiceLineKind::Adjustment => "adjustment",
        InvoiceLineKind::Credit => "credit",
    };
    pb::Invoice {
        id: s.id.to_string(),
        number: s.number.unwrap_or_default(),
        status: match s.status {
            InvoiceStatus::Draft => "draft",
            InvoiceStatus::Finalized => "finalized",
            InvoiceStatus::Void => "void",
        }
        .to_string(),
        period_start: Some(timestamp(s.period_start)),
        period_end: Some(timestamp(s.period_end)),
        currency: s.currency,
        subtotal: s.subtotal,
        credits: s.credits,
        total: s.total,
        finalize_time: opt_timestamp(s.finalized_at),
        void_time: opt_timestamp(s.voided_at),
        void_reason: s.void_reason.unwrap_or_default(),
        replaced_by: s.replaced_by.map(|id| id.to_string()).unwrap_or_default(),
        replaces: s.replaces.map(|id| id.to_string()).unwrap_or_default(),
        lines: lines
            .into_iter()
            .map(|l| pb::InvoiceLine {
                kind: kind(l.kind).to_string(),
                sku: l.sku,
                product: l.product,
                project: l.project,
                resource_id: l.resource_id,
                resource_name: l.resource_name,
                quantity: l.quantity,
                unit: l.unit,
                unit_price: l.unit_price,
                amount: l.amount,
                start_time: Some(timestamp(l.start)),
                end_time: Some(timestamp(l.end)),
            })
            .collect(),
    }
}

pub fn billing_balance(b: BillingBalanceView) -> pb::BillingBalance {
    pb::BillingBalance {
        currency: b.currency,
        month_to_date_usage: b.month_to_date_usage,
        credits_remaining: b.credits_remaining,
        month_to_date_balance: b.month_to_date_balance,
        generate_time: Some(timestamp(b.generated_at)),
    }
}

pub fn credit_grant(g: CreditGrantView) -> pb::CreditGrant {
    pb::CreditGrant {
        id: g.id.to_string(),
        kind: g.kind.as_str().to_string(),
        description: g.description,
        amount: g.amount,
        remaining: g.remaining,
        priority: g.priority,
        grant_time: Some(timestamp(g.granted_at)),
        expire_time: opt_timestamp(g.expires_at),
    }
}

pub fn budget(b: BudgetView) -> pb::Budget {
    pb::Budget {
        id: b.id.to_string(),
        name: b.name,
        amount: b.amount,
        currency: b.currency,
        thresholds: b.thresholds,
        basis: b.basis.as_str().to_string(),
        spend: b.spend,
        forecast: b.forecast,
        alerts: b
            .alerts
            .into_iter()
            .map(|a| pb::BudgetAlert { threshold: a.threshold, value: a.value, fire_time: Some(timestamp(a.fired_at)) })
            .collect(),
        create_time: Some(timestamp(b.created_at)),
        update_time: Some(timestamp(b.updated_at)),
    }
}

fn approval_policy(a: ApprovalPolicy) -> pb::ApprovalPolicy {
    pb::ApprovalPolicy {
        required_for: a.required_for.into_iter().map(|r| r.as_str().to_string()).collect(),
        scale_down_over_percent: a.scale_down_over_percent,
        approver_role: a.approver_role.as_str().to_string(),
        expires_after_hours: a.expires_after_hours,
    }
}

pub fn org_policy_version(v: OrgPolicyVersion) -> pb::OrgPolicyVersion {
    pb::OrgPolicyVersion {
        version: v.version,
        effective_time: Some(timestamp(v.effective_at)),
        approvals: Some(approval_policy(v.approvals)),
        limits: Some(pb::DisruptionLimits {
            max_per_cluster: v.limits.max_per_cluster.unwrap_or(0),
            max_per_region: v.limits.max_per_region.unwrap_or(0),
        }),
        created_by: v.created_by,
        create_time: Some(timestamp(v.created_at)),
        deploy: Some(pb::DeployRules {
            allowed_image_prefixes: v.deploy.allowed_image_prefixes,
            allowed_branches: v.deploy.allowed_branches,
        }),
    }
}

pub fn org_policy(p: OrgPolicyView) -> pb::OrgPolicy {
    pb::OrgPolicy {
        in_force: p.in_force.map(org_policy_version),
        scheduled: p.scheduled.into_iter().map(org_policy_version).collect(),
        etag: p.etag,
    }
}

/// A policy version to write, from its message (zeros and empty strings
/// are the REST defaults; a rule or role that does not exist is refused by field).
pub fn org_policy_update(r: pb::UpdateOrgPolicyRequest) -> Result<OrgPolicyUpdate, Status> {
    let defaults = ApprovalPolicy::default();
    let approvals = match r.approvals {
        None => defaults,
        Some(a) => ApprovalPolicy {
            required_for: a
                .required_for
                .iter()
                .map(|rule| {
                    ApprovalRule::parse(rule).ok_or_else(|| {
                        Error::invalid_field("approvals.required_for", "unknown_rule", format!("no rule {rule}"))
                    })
                })
                .collect::<Result<_, _>>()
                .map_err(super::status)?,
            scale_down_over_percent: if a.scale_down_over_percent == 0 {
                defaults.scale_down_over_percent
            } else {
                a.scale_down_over_percent
            },
            approver_role: match a.approver_role.as_str() {
                "" => defaults.approver_role,
                role => ApproverRole::parse(role).ok_or_else(|| {
                    super::status(Error::invalid_field("approvals.approver_role", "invalid", "owner or admin"))
                })?,
            },
            expires_after_hours: if a.expires_after_hours == 0 {
                defaults.expires_after_hours
            } else {
                a.expires_after_hours
            },
        },
    };
    let limits = r.limits.map_or_else(DisruptionLimits::default, |l| DisruptionLimits {
        max_per_cluster: (l.max_per_cluster != 0).then_some(l.max_per_cluster),
        max_per_region: (l.max_per_region != 0).then_some(l.max_per_region),
    });
    let effective_at = r.effective_time.map(|t| timestamp_in("effective_time", t)).transpose()?;
    let deploy = r.deploy.map_or_else(DeployRules::default, |d| DeployRules {
        allowed_image_prefixes: d.allowed_image_prefixes,
        allowed_branches: d.allowed_branches,
    });
    Ok(OrgPolicyUpdate { approvals, limits, deploy, effective_at })
}

pub fn approval(a: ApprovalView) -> pb::Approval {
    pb::Approval {
        operation: a.operation_id.to_string(),
        state: a.state.as_str().to_string(),
        rule: a.rule.as_str().to_string(),
        policy_version: a.policy_version,
        approver_role: a.approver_role.as_str().to_string(),
        requested_by: a.requested_by,
        request_time: Some(timestamp(a.requested_at)),
        expire_time: Some(timestamp(a.expires_at)),
        decided_by: a.decided_by.unwrap_or_default(),
        decide_time: opt_timestamp(a.decided_at),
        reason: a.reason.unwrap_or_default(),
        plan_json: serde_json::to_string(&a.plan).unwrap_or_default(),
    }
}
