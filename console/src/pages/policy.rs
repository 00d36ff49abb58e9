//! The organization's change policy: the version in force and those to
//! come, and a form that writes the next version (owners).

use leptos::prelude::*;
use moke_sdk::types;

use super::account::Fields;
use super::org::OrgTabs;
use crate::app::Frame;
use crate::error::ConsoleError;
use crate::session::request_session;
use crate::ui::{Csrf, Field, FormAlert, FormErrors, TextArea, action_error, error_view, when};

/// The approval rules, as the API names them, and what each holds.
const RULES: [(&str, &str); 6] = [
    ("cluster_delete", "Deleting a cluster"),
    ("control_plane_reduction", "Fewer control-plane replicas"),
    ("node_pool_scale_down", "A node pool scaled down past the share below"),
    ("node_pool_delete", "Deleting a node pool"),
    ("snapshot_restore", "Restoring etcd from a snapshot"),
    ("upgrade_outside_window", "An upgrade outside the maintenance window, or a change of the window"),
];

/// A number typed into the form, or `None` when left empty.
fn optional_number(fields: &mut Fields, field: &str, text: &str, message: &str) -> Option<serde_json::Value> {
    match text.trim() {
        "" => None,
        text => fields.parse::<i64>(field, text, message).map(serde_json::Value::from),
    }
}

/// A list of the SDK's string newtypes (image prefixes, branches) as text.
fn strings<L, I>(list: &Option<L>) -> Vec<String>
where
    L: std::ops::Deref<Target = Vec<I>>,
    I: std::ops::Deref<Target = String>,
{
    list.as_ref().map(|items| items.iter().map(|item| String::clone(item)).collect()).unwrap_or_default()
}

/// The lines of a text area, trimmed, without the empty ones.
fn lines(text: &str) -> Vec<String> {
    text.lines().map(str::trim).filter(|line| !line.is_empty()).map(str::to_string).collect()
}

/// Writes the next version of the policy from the form: every rule is the
/// API's, whose refusals name their fields.
#[allow(clippy::too_many_arguments)]
#[server(prefix = "/console/fn", endpoint = "org_policy_update")]
pub async fn org_policy_update(
    csrf: String,
    etag: String,
    rule_cluster_delete: Option<String>,
    rule_control_plane_reduction: Option<String>,
    rule_node_pool_scale_down: Option<String>,
    rule_node_pool_delete: Option<String>,
    rule_snapshot_restore: Option<String>,
    rule_upgrade_outside_window: Option<String>,
    scale_down_over_percent: String,
    approver_role: String,
    expires_after_hours: String,
    max_per_cluster: String,
    max_per_region: String,
    allowed_image_prefixes: String,
    allowed_branches: String,
    effective_at: String,
) -> Result<(), ConsoleError> {
    let session = request_session();
    session.check_csrf(&csrf)?;
    // One box per rule, in the order of [`RULES`].
    let ticked = [
        rule_cluster_delete,
        rule_control_plane_reduction,
        rule_node_pool_scale_down,
        rule_node_pool_delete,
        rule_snapshot_restore,
        rule_upgrade_outside_window,
    ];
    let rules: Vec<&str> =
        RULES.iter().zip(&ticked).filter(|(_, on)| on.is_some()).map(|((rule, _), _)| *rule).collect();
    let kept_rules = rules.join(",");
    let kept = [
        ("rules", kept_rules.as_str()),
        ("scale_down_over_percent", scale_down_over_percent.as_str()),
        ("approver_role", approver_role.as_str()),
        ("expires_after_hours", expires_after_hours.as_str()),
        ("max_per_cluster", max_per_cluster.as_str()),
        ("max_per_region", max_per_region.as_str()),
        ("allowed_image_prefixes", allowed_image_prefixes.as_str()),
        ("allowed_branches", allowed_branches.as_str()),
        ("effective_at", effective_at.as_str()),
    ];
    let saved = async {
        let mut fields = Fields::default();
        let percent = fields.parse::<i64>(
            "approvals.scale_down_over_percent",
            &scale_down_over_percent,
            "Enter a percent, 1 to 99.",
        );
        let hours = fields.parse::<i64>("approvals.expires_after_hours", &expires_after_hours, "Enter 1 to 168 hours.");
        let per_cluster = optional_number(&mut fields, "limits.max_per_cluster", &max_per_cluster, "Enter 1 to 50.");
        let per_region = optional_number(&mut fields, "limits.max_per_region", &max_per_region, "Enter 1 to 1000.");
        let effective_at = match effective_at.trim() {
            "" => None,
            text => match chrono::NaiveDateTime::parse_from_str(text, "%Y-%m-%d %H:%M") {
                Ok(at) => Some(at.and_utc().to_rfc3339()),
                Err(_) => {
                    fields.problem("effective_at", "Write it as YYYY-MM-DD HH:MM (UTC), or leave it empty for now.");
                    None
                }
            },
        };
        fields.finish()?;
        let mut limits = serde_json::Map::new();
        if let Some(max) = per_cluster {
            limits.insert("max_per_cluster".into(), max);
        }
        if let Some(max) = per_region {
            limits.insert("max_per_region".into(), max);
        }
        let mut document = serde_json::json!({
            "approvals": {
                "required_for": rules,
                "scale_down_over_percent": percent,
                "approver_role": approver_role,
                "expires_after_hours": hours,
            },
            "limits": limits,
            "deploy": {
                "allowed_image_prefixes": lines(&allowed_image_prefixes),
                "allowed_branches": lines(&allowed_branches),
            },
        });
        if let Some(at) = effective_at {
            document["effective_at"] = at.into();
        }
        let org = session.acting_organization()?;
        let path = format!("/v1/orgs/{}/policy", moke_sdk::encode_path(&org));
        let api = session.api().await?;
        api.put_json(&path, &document, Some(&etag)).await.map_err(|error| {
            if error.status == 412 {
                ConsoleError::new(
                    412,
                    "Changed meanwhile",
                    "Someone wrote a version after this page was drawn; it is shown above. Check it, then send again.",
                )
            } else {
                error
            }
        })?;
        session.redirect("/org/policy?saved=1");
        Ok(())
    };
    // A form refused as stale comes back as the policy now is; any other, as it was sent.
    saved.await.map_err(|e: ConsoleError| if e.status == 412 { e } else { e.keep(&kept) })
}

/// One version's rules, as a summary.
#[component]
fn VersionSummary(version: types::OrgPolicyVersion) -> impl IntoView {
    let rules = if version.approvals.required_for.is_empty() {
        "none: nothing waits for approval".to_string()
    } else {
        version.approvals.required_for.iter().map(|r| r.to_string().replace('_', " ")).collect::<Vec<_>>().join(", ")
    };
    let role = version.approvals.approver_role.map_or("owner".to_string(), |r| r.to_string());
    let limit = |max: Option<std::num::NonZeroU64>| max.map_or("no limit".to_string(), |m| m.to_string());
    let listed = |items: &[String], none: &str| if items.is_empty() { none.to_string() } else { items.join(", ") };
    view! {
        <dl class="summary">
            <dt>"Version"</dt><dd>{format!("{} (in force from {}, by {})", version.version, when(version.effective_at), version.created_by)}</dd>
            <dt>"Wait for approval"</dt><dd>{rules}</dd>
            <dt>"Approved by"</dt><dd>{format!("an organization {role} other than who asked, within {} h", version.approvals.expires_after_hours)}</dd>
            <dt>"Scale-downs held past"</dt><dd>{format!("{}% of a pool's nodes", version.approvals.scale_down_over_percent)}</dd>
            <dt>"Disruptive operations at once"</dt><dd>{format!("{} per cluster, {} per region", limit(version.limits.max_per_cluster), limit(version.limits.max_per_region))}</dd>
            <dt>"Images from"</dt><dd>{listed(&strings(&version.deploy.allowed_image_prefixes), "any registry the project allows")}</dd>
            <dt>"CI deploys from branches"</dt><dd>{listed(&strings(&version.deploy.allowed_branches), "any branch the project allows")}</dd>
        </dl>
    }
}

/// `/org/policy`: the change policy in force, versions to come, and the
/// next version's form, filled in from the one in force.
#[component]
pub fn OrgPolicy() -> impl IntoView {
    let save = ServerAction::<OrgPolicyUpdate>::new();
    let order = [
        "approvals.required_for",
        "approvals.scale_down_over_percent",
        "approvals.approver_role",
        "approvals.expires_after_hours",
        "limits.max_per_cluster",
        "limits.max_per_region",
        "deploy.allowed_image_prefixes",
        "deploy.allowed_branches",
        "effective_at",
    ];
    let errors = FormErrors::new(action_error(save.value().get_untracked()), &order);
    let saved = super::query("saved").is_some();
    let session = request_session();
    let content = {
        let session = session.clone();
        Suspend::new(async move {
            let viewed = async {
                let org = session.acting_organization()?;
                let api = session.api().await?;
                Ok::<_, ConsoleError>(api.org_policy_view().org(org).send().await?.into_inner())
            };
            let policy = match viewed.await {
                Ok(policy) => policy,
                Err(error) => return error_view(&session, error),
            };
            let current = policy.in_force.clone();
            // The form starts from the newest version written (a scheduled one, if any), so that
            // saving never drops rules written after the one in force.
            let newest = policy.scheduled.iter().chain(current.iter()).max_by_key(|v| v.version).cloned();
            // After a refused write, as the person left it; else as the newest version.
            let value = |input: &str, now: String| errors.value(input).unwrap_or(now);
            let chosen: Vec<String> = match errors.value("rules") {
                Some(kept) => kept.split(',').filter(|r| !r.is_empty()).map(str::to_string).collect(),
                None => newest
                    .as_ref()
                    .map(|v| v.approvals.required_for.iter().map(|r| r.to_string()).collect())
                    .unwrap_or_default(),
            };
            let approvals = newest.as_ref().map(|v| &v.approvals);
            let percent = value(
                "scale_down_over_percent",
                approvals.map_or("50".into(), |a| a.scale_down_over_percent.to_string()),
            );
            let role = value(
                "approver_role",
                approvals.and_then(|a| a.approver_role).map_or("owner".into(), |r| r.to_string()),
            );
            let hours =
                value("expires_after_hours", approvals.map_or("24".into(), |a| a.expires_after_hours.to_string()));
            let limits = newest.as_ref().map(|v| &v.limits);
            let per_cluster = value(
                "max_per_cluster",
                limits.and_then(|l| l.max_per_cluster).map(|m| m.to_string()).unwrap_or_default(),
            );
            let per_region = value(
                "max_per_region",
                limits.and_then(|l| l.max_per_region).map(|m| m.to_string()).unwrap_or_default(),
            );
            let deploy = newest.as_ref().map(|v| &v.deploy);
            let prefixes = value(
                "allowed_image_prefixes",
                deploy.map(|d| strings(&d.allowed_image_prefixes).join("\n")).unwrap_or_default(),
            );
            let branches =
                value("allowed_branches", deploy.map(|d| strings(&d.allowed_branches).join("\n")).unwrap_or_default());
            let starts = value("effective_at", String::new());
            let rule_error = errors.messages_for("approvals.required_for");
            view! {
                <h1>"Change policy"</h1>
                <OrgTabs current="policy"/>
                {saved.then(|| view! { <div class="alert ok" role="status">"The new version is saved."</div> })}
                <section aria-labelledby="in-force-title">
                    <h2 id="in-force-title">"In force"</h2>
                    {match current.clone() {
                        Some(version) => view! { <VersionSummary version=version/> }.into_any(),
                        None => view! { <p class="empty">"No policy yet: nothing waits for approval and nothing is limited."</p> }.into_any(),
                    }}
                </section>
                {(!policy.scheduled.is_empty()).then(|| view! {
                    <section aria-labelledby="scheduled-title">
                        <h2 id="scheduled-title">"Scheduled"</h2>
                        {policy.scheduled.clone().into_iter().map(|version| view! { <VersionSummary version=version/> }).collect_view()}
                    </section>
                })}
                <section class="card" aria-labelledby="next-title">
                    <h2 id="next-title">"Write the next version"</h2>
                    <p class="muted">"Owners write versions; a version is never changed. Each regional change records the version that allowed it in its audit event."</p>
                    <FormAlert errors=errors.clone()/>
                    <ActionForm action=save>
                        <Csrf/>
                        <input type="hidden" name="etag" value=policy.etag.clone()/>
                        <fieldset class:invalid=!rule_error.is_empty()>
                            <legend>"Changes that wait for another person's approval"</legend>
                            {RULES.iter().map(|(rule, label)| {
                                let id = format!("field-rule_{rule}");
                                let ticked = chosen.iter().any(|c| c == rule);
                                view! {
                                    <div class="choice">
                                        <input type="checkbox" id=id.clone() name=format!("rule_{rule}") value="on" checked=ticked/>
                                        <label for=id>{*label}</label>
                                    </div>
                                }
                            }).collect_view()}
                            {(!rule_error.is_empty()).then(|| view! { <p class="field-error">{rule_error.join(" ")}</p> })}
                        </fieldset>
                        <Field label="Scale-downs wait when they remove more than (%)" name="scale_down_over_percent" error_name="approvals.scale_down_over_percent"
                            kind="number" min="1" max="99" value=percent errors=errors.clone()/>
                        <super::clusters::Select label="Who approves" name="approver_role" error_name="approvals.approver_role" errors=errors.clone()
                            options=vec![
                                ("owner".to_string(), "An owner other than who asked".to_string(), role == "owner"),
                                ("admin".to_string(), "An admin or owner other than who asked".to_string(), role == "admin"),
                            ]/>
                        <Field label="Requests expire after (hours)" name="expires_after_hours" error_name="approvals.expires_after_hours"
                            kind="number" min="1" max="168" value=hours errors=errors.clone()/>
                        <fieldset>
                            <legend>"Disruptive operations at once (upgrades, restores, recycles, deletions)"</legend>
                            <Field label="Per cluster (empty: no limit)" name="max_per_cluster" error_name="limits.max_per_cluster"
                                kind="number" min="1" max="50" value=per_cluster errors=errors.clone()/>
                            <Field label="Per region (empty: no limit)" name="max_per_region" error_name="limits.max_per_region"
                                kind="number" min="1" max="1000" value=per_region errors=errors.clone()/>
                        </fieldset>
                        <fieldset>
                            <legend>"Deployments"</legend>
                            <TextArea label="Images only from (one registry path per line, ending in /)" name="allowed_image_prefixes"
                                error_name="deploy.allowed_image_prefixes" hint="E.g. registry.acme.com/; empty: any registry each project allows." rows=3 optional=true
                                value=prefixes errors=errors.clone()/>
                            <TextArea label="CI deploys only from branches (one per line)" name="allowed_branches"
                                error_name="deploy.allowed_branches" hint="Empty: each project's deploy policy decides." rows=3 optional=true
                                value=branches errors=errors.clone()/>
                        </fieldset>
                        <Field label="In force from (UTC, YYYY-MM-DD HH:MM; empty: now)" name="effective_at" error_name="effective_at"
                            value=starts errors=errors.clone()/>
                        <button type="submit">"Save as the next version"</button>
                    </ActionForm>
                </section>
            }
            .into_any()
        })
    };
    view! {
        <Frame title="Change policy">
            <Suspense fallback=|| ()>{content}</Suspense>
        </Frame>
    }
}
