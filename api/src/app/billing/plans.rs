//! Plans: what customers choose between, each setting quota limits over
//! `[quotas]` (configured in `billing.plans`), and an organization's
//! choice. A downgrade is refused while the organization uses more than
//! the smaller plan allows; operators' overrides stay in force either way.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use moke_iam::Action;

use super::store;
use crate::app::kernel::audit::{self, AuditRecord};
use crate::app::kernel::quotas;
use crate::app::{App, Error, RequestContext, Result};
use crate::config::Plan;
use crate::ids::OrgId;
use crate::model::{OrgPlanView, PlanChange, PlanView};

/// Quotas a downgrade does not wait for: a rate, not something held.
const NOT_HELD: [&str; 1] = ["invitations_per_hour"];

impl App {
    /// `plan_list`: every plan on offer, with the limits it sets.
    pub fn plan_list(&self) -> Vec<PlanView> {
        self.config().billing.plans.iter().map(|plan| self.plan_view(plan)).collect()
    }

    /// `billing_plan_view`: the organization's plan, and since when.
    pub async fn billing_plan_view(&self, ctx: &RequestContext, org: OrgId) -> Result<OrgPlanView> {
        self.org_authorized(ctx, org, Action::ReadBilling).await?;
        let mut conn = self.db().acquire().await?;
        let (plan, changed_at) = store::org_plan(&mut conn, org.uuid()).await?;
        Ok(self.org_plan_view(plan.as_deref(), changed_at))
    }

    /// `billing_plan_update`: moves the organization to another
    /// self-serve plan (a plan that is not is refused, 403
    /// `plan_needs_operator`). Choosing the current plan again changes nothing.
    pub async fn billing_plan_update(
        &self,
        ctx: &RequestContext,
        org: OrgId,
        input: PlanChange,
    ) -> Result<OrgPlanView> {
        self.org_authorized(ctx, org, Action::ReadBilling).await?;
        self.org_authorized(ctx, org, Action::ManageBilling).await?;
        let wanted = self.configured_plan(&input.plan)?;
        if !wanted.self_serve {
            return Err(Error::refused(
                "plan_needs_operator",
                format!("the {} plan is given by Moke's sales team; contact them to move to it", wanted.display_name),
            ));
        }
        self.change_plan(ctx, org, wanted, None).await
    }

    /// Moves `org` to any plan (an operator's act, `moke-server billing
    /// set-plan`), audited with `reason`.
    pub async fn set_plan(&self, org: OrgId, plan: &str, reason: &str) -> Result<OrgPlanView> {
        let mut v = crate::app::error::Validator::new();
        v.check((1..=500).contains(&reason.chars().count()), "reason", "invalid", "1 to 500 characters");
        v.finish()?;
        let wanted = self.configured_plan(plan)?;
        self.change_plan(&RequestContext::system(org.uuid()), org, wanted, Some(reason)).await
    }

    fn configured_plan(&self, id: &str) -> Result<&Plan> {
        let billing = &self.config().billing;
        billing.plans.iter().find(|plan| plan.id == id).ok_or_else(|| {
            let ids: Vec<&str> = billing.plans.iter().map(|p| p.id.as_str()).collect();
            Error::invalid_field("plan", "unknown_plan", format!("one of {}", ids.join(", ")))
        })
    }

    /// Moves `org` to `wanted` under the organization's quota lock (as
    /// quota checks take it, so no create slips past a downgrade), refusing
    /// a plan the organization uses more than; audited.
    async fn change_plan(
        &self,
        ctx: &RequestContext,
        org: OrgId,
        wanted: &Plan,
        reason: Option<&str>,
    ) -> Result<OrgPlanView> {
        let billing = &self.config().billing;
        let mut tx = self.db().begin().await?;
        quotas::lock_org(&mut tx, org.uuid()).await?;
        let (current, changed_at) = store::org_plan(&mut tx, org.uuid()).await?;
        let current_id = billing.plan(current.as_deref()).id.clone();
        if current_id == wanted.id {
            return Ok(self.org_plan_view(current.as_deref(), changed_at));
        }
        let over: Vec<String> = quotas::usage_under_plan(&mut tx, self.config(), org.uuid(), wanted)
            .await?
            .into_iter()
            .filter(|(quota, limit, usage)| usage > limit && !NOT_HELD.contains(quota))
            .map(|(quota, limit, usage)| format!("{quota} {usage} (the plan allows {limit})"))
            .collect();
        if !over.is_empty() {
            return Err(Error::conflict(
                "plan_limits_exceeded",
                format!("the organization uses more than the {} plan allows: {}", wanted.display_name, over.join(", ")),
            ));
        }
        let changed_at = store::set_org_plan(&mut tx, org.uuid(), &wanted.id).await?;
        let mut details = serde_json::json!({ "from": current_id, "to": wanted.id });
        if let Some(reason) = reason {
            details["reason"] = serde_json::json!(reason);
        }
        let record = AuditRecord {
            action: "billing.plan.change",
            resource_type: "organization",
            resource_id: Some(org.to_string()),
            details,
        };
        audit::record(&mut tx, ctx, record).await?;
        self.commit(ctx, tx).await?;
        Ok(self.org_plan_view(Some(&wanted.id), Some(changed_at)))
    }

    fn org_plan_view(&self, plan: Option<&str>, changed_at: Option<DateTime<Utc>>) -> OrgPlanView {
        OrgPlanView { plan: self.plan_view(self.config().billing.plan(plan)), changed_at }
    }

    fn plan_view(&self, plan: &Plan) -> PlanView {
        let (limits, _) = plan.quotas.over(&self.config().quotas);
        let limits = serde_json::to_value(limits).unwrap_or_default();
        let limits: BTreeMap<String, i64> = limits
            .as_object()
            .into_iter()
            .flatten()
            .filter_map(|(name, limit)| Some((name.trim_start_matches("max_").to_string(), limit.as_i64()?)))
            .collect();
        PlanView {
            id: plan.id.clone(),
            display_name: plan.display_name.clone(),
            description: plan.description.clone(),
            self_serve: plan.self_serve,
            limits,
        }
    }
}
