//! A cluster's lifecycle beyond its overview: one Operation with its steps
//! (and its cancel), the cluster's etcd snapshots (taken and restored), and
//! its spec history with what each generation changed.

use leptos::prelude::*;
use moke_sdk::types;

use super::account::Fields;
use super::clusters::{Select, cluster_crumbs, cluster_path};
use super::workloads::ClusterTabs;
use super::{param, query, segment};
use crate::app::Frame;
use crate::error::ConsoleError;
use crate::session::request_session;
use crate::ui::{
    Csrf, Field, FormAlert, FormErrors, IdempotencyKey, InProgress, action_error, error_view, operation_chip, when,
};

/// The page of Operation `id`.
pub(crate) fn operation_path(id: &str) -> String {
    format!("/operations/{}", segment(id))
}

/// Whether an Operation will change no more.
fn finished(status: types::OperationStatus) -> bool {
    matches!(status, types::OperationStatus::Succeeded | types::OperationStatus::Failed)
}

/// Where a change's answer leads: its approval page when the organization's
/// policy holds it, else its Operation's page.
pub(crate) fn after_change(op: types::OperationView) -> String {
    let id = op.id.as_str().to_string();
    super::approvals::held(&serde_json::to_value(op).unwrap_or_default()).unwrap_or_else(|| operation_path(&id))
}

/// Cancels Operation `operation` (or withdraws it while it awaits approval):
/// the API says whether that is still safe.
#[server(prefix = "/console/fn", endpoint = "operation_cancel")]
pub async fn operation_cancel(csrf: String, operation: String, confirm: Option<String>) -> Result<(), ConsoleError> {
    let session = request_session();
    session.check_csrf(&csrf)?;
    Fields::ticked(&confirm, "Confirm that the operation should stop.")?;
    let api = session.api().await?;
    api.operation_cancel().operation(&operation).send().await?;
    session.redirect(&format!("{}?cancelled=1", operation_path(&operation)));
    Ok(())
}

/// `/operations/:operation`: what an Operation does, every step it went
/// through with when, how it ended, and a cancel while it runs.
#[component]
pub fn Operation() -> impl IntoView {
    let cancel = ServerAction::<OperationCancel>::new();
    let errors = FormErrors::new(action_error(cancel.value().get_untracked()), &["confirm"]);
    let operation = param("operation");
    let cancelled = query("cancelled");
    let session = request_session();
    let content = {
        let (session, operation) = (session.clone(), operation.clone());
        Suspend::new(async move {
            let viewed = async {
                let api = session.api().await?;
                let (op, steps) = futures::join!(
                    api.operation_view().operation(&operation).send(),
                    api.operation_step_list().operation(&operation).send(),
                );
                Ok::<_, ConsoleError>((op?.into_inner(), steps?.into_inner()))
            };
            let (op, steps) = match viewed.await {
                Ok(found) => found,
                Err(error) => return error_view(&session, error),
            };
            let target = format!("{} {}", op.target.type_.replace('_', " "), op.target.name);
            let running = !finished(op.status);
            let awaiting = op.status == types::OperationStatus::AwaitingApproval;
            let ended_cancelled = op.error.as_ref().is_some_and(|e| e.code == "cancelled");
            let outcome = op.error.clone().map(|error| {
                view! {
                    <dt>"Error"</dt><dd><code>{error.code}</code>" "{error.message}</dd>
                }
            });
            view! {
                <h1>{format!("{} of {target}", op.kind.replace('_', " "))}</h1>
                {(cancelled.is_some() && ended_cancelled).then(|| {
                    // Said from the Operation's state, whatever the address claims.
                    view! { <div class="alert ok" role="status">"The operation was cancelled."</div> }
                })}
                <InProgress changing=running here=operation_path(&operation)/>
                <dl class="summary" id="operation-summary" data-live="">
                    <dt>"Status"</dt><dd>{operation_chip(op.status)}</dd>
                    <dt>"Step"</dt><dd>{op.step.clone()}" ("{op.progress}"%)"</dd>
                    <dt>"Started"</dt><dd>{when(op.created_at)}</dd>
                    {op.finished_at.map(|at| view! { <dt>"Finished"</dt><dd>{when(at)}</dd> })}
                    {outcome}
                    <dt>"Id"</dt><dd><code>{op.id.as_str().to_string()}</code></dd>
                </dl>
                {awaiting.then(|| view! {
                    <p><a href=format!("{}/approval", operation_path(&operation))>"Review the approval request"</a></p>
                })}
                <section aria-labelledby="steps-title">
                    <h2 id="steps-title">"Steps"</h2>
                    <table>
                        <caption class="visually-hidden">"Steps, oldest first"</caption>
                        <thead><tr><th scope="col">"When"</th><th scope="col">"Step"</th><th scope="col">"Status"</th><th scope="col">"Progress"</th></tr></thead>
                        <tbody>
                            {steps.items.into_iter().map(|step| view! {
                                <tr>
                                    <td>{when(step.at)}</td>
                                    <td>{step.step}</td>
                                    <td>{operation_chip(step.status)}</td>
                                    <td>{format!("{}%", step.progress)}</td>
                                </tr>
                            }).collect_view()}
                        </tbody>
                    </table>
                </section>
                {running.then(|| view! {
                    <section aria-labelledby="cancel-title">
                        <h2 id="cancel-title">{if awaiting { "Withdraw" } else { "Cancel" }}</h2>
                        <p>{if awaiting {
                            "Withdrawing the request means the change never happens."
                        } else {
                            "A change is cancelled where it is safe: before the region has it, or between steps, writing back what it replaced. Otherwise the reason is shown here."
                        }}</p>
                        <FormAlert errors=errors.clone()/>
                        <ActionForm action=cancel>
                            <Csrf/>
                            <input type="hidden" name="operation" value=operation.clone()/>
                            <crate::ui::Choice label="Stop this operation" name="confirm" errors=errors.clone() required=true/>
                            <button type="submit" class="danger">{if awaiting { "Withdraw the request" } else { "Cancel the operation" }}</button>
                        </ActionForm>
                    </section>
                })}
            }
            .into_any()
        })
    };
    view! {
        <Frame title="Operation">
            <Suspense fallback=|| ()>{content}</Suspense>
        </Frame>
    }
}

#[server(prefix = "/console/fn", endpoint = "cluster_snapshot_create")]
pub async fn cluster_snapshot_create(
    csrf: String,
    idempotency_key: String,
    project: String,
    cluster: String,
) -> Result<(), ConsoleError> {
    let session = request_session();
    session.check_csrf(&csrf)?;
    let api = session.api().await?;
    let op = api
        .cluster_snapshot_create()
        .project(&project)
        .cluster(&cluster)
        .idempotency_key(idempotency_key)
        .send()
        .await?
        .into_inner();
    session.redirect(&after_change(op));
    Ok(())
}

#[server(prefix = "/console/fn", endpoint = "cluster_snapshot_restore")]
pub async fn cluster_snapshot_restore(
    csrf: String,
    idempotency_key: String,
    project: String,
    cluster: String,
    snapshot: String,
    confirm: String,
) -> Result<(), ConsoleError> {
    let session = request_session();
    session.check_csrf(&csrf)?;
    let api = session.api().await?;
    // The name as the API knows the cluster, whatever the address called it.
    let named = api.cluster_view().project(&project).cluster(&cluster).send().await?.into_inner().name;
    Fields::typed(&confirm, &named, "Type the cluster's name exactly to restore it.")?;
    let mut fields = Fields::default();
    let snapshot =
        fields.parse::<types::ClusterSnapshotRestoreSnapshot>("snapshot", &snapshot, "Not a snapshot's name.");
    fields.finish()?;
    let snapshot = snapshot.expect("finish() refused a missing field");
    let op = api
        .cluster_snapshot_restore()
        .project(&project)
        .cluster(&cluster)
        .snapshot(snapshot)
        .idempotency_key(idempotency_key)
        .send()
        .await?
        .into_inner();
    session.redirect(&after_change(op));
    Ok(())
}

/// A size in bytes as people read it.
fn size(bytes: i64) -> String {
    const MIB: f64 = 1024.0 * 1024.0;
    if bytes >= 1024 * 1024 { format!("{:.1} MiB", bytes as f64 / MIB) } else { format!("{bytes} bytes") }
}

/// `/projects/:project/clusters/:cluster/snapshots`: the etcd snapshots the
/// region keeps, newest first, one taken on request, and each restorable.
#[component]
pub fn ClusterSnapshots() -> impl IntoView {
    let take = ServerAction::<ClusterSnapshotCreate>::new();
    let errors = FormErrors::new(action_error(take.value().get_untracked()), &[]);
    let (project, name) = (param("project"), param("cluster"));
    let path = cluster_path(&project, &name);
    let session = request_session();
    let content = {
        let (session, project, name) = (session.clone(), project.clone(), name.clone());
        Suspend::new(async move {
            let listed = async {
                let api = session.api().await?;
                let (cluster, snapshots) = futures::join!(
                    api.cluster_view().project(&project).cluster(&name).send(),
                    api.cluster_snapshot_list().project(&project).cluster(&name).send(),
                );
                Ok::<_, ConsoleError>((cluster?.into_inner(), snapshots?.into_inner()))
            };
            let (cluster, snapshots) = match listed.await {
                Ok(found) => found,
                Err(error) => return error_view(&session, error),
            };
            let policy = &cluster.spec.snapshot_policy;
            let policy = (policy.every_hours.to_string(), policy.keep.to_string());
            let body = if snapshots.items.is_empty() {
                view! { <p class="empty">"No snapshot yet: the first is taken within the hour once the control plane runs, or take one now."</p> }.into_any()
            } else {
                view! {
                    <table>
                        <caption class="visually-hidden">"Snapshots, newest first"</caption>
                        <thead><tr><th scope="col">"Taken"</th><th scope="col">"Name"</th><th scope="col">"Kubernetes"</th><th scope="col">"Size"</th><th scope="col">"Why"</th><th scope="col"><span class="visually-hidden">"Actions"</span></th></tr></thead>
                        <tbody>
                            {snapshots.items.into_iter().map(|snapshot| {
                                let snapshot_name = String::clone(&snapshot.name);
                                let restore = format!("{path}/snapshots/{}/restore", segment(&snapshot_name));
                                view! {
                                    <tr>
                                        <td>{when(snapshot.taken_at)}</td>
                                        <td><code>{snapshot_name.clone()}</code></td>
                                        <td>{snapshot.kubernetes_version}</td>
                                        <td>{size(snapshot.size_bytes)}</td>
                                        <td>{match snapshot.trigger { types::SnapshotTrigger::Scheduled => "scheduled", types::SnapshotTrigger::OnDemand => "on request" }}</td>
                                        <td><a href=restore aria-label=format!("Restore {snapshot_name}")>"Restore…"</a></td>
                                    </tr>
                                }
                            }).collect_view()}
                        </tbody>
                    </table>
                }
                .into_any()
            };
            view! {
                <h1>{format!("Snapshots of {name}")}</h1>
                <ClusterTabs project=project.clone() cluster=name.clone() current="snapshots"/>
                <p class="muted">{format!("etcd is snapshotted every {} hour(s), and the newest {} are kept.", policy.0, policy.1)}</p>
                <FormAlert errors=errors.clone()/>
                <ActionForm action=take>
                    <Csrf/>
                    <IdempotencyKey/>
                    <input type="hidden" name="project" value=project.clone()/>
                    <input type="hidden" name="cluster" value=name.clone()/>
                    <button type="submit" class="secondary">"Take a snapshot now"</button>
                </ActionForm>
                {body}
            }
            .into_any()
        })
    };
    let crumbs = cluster_crumbs(&project, &name);
    view! {
        <Frame title=format!("Snapshots of {name}") crumbs=crumbs>
            <Suspense fallback=|| ()>{content}</Suspense>
        </Frame>
    }
}

/// `/projects/:project/clusters/:cluster/snapshots/:snapshot/restore`: what
/// a restore does, confirmed by typing the cluster's name.
#[component]
pub fn ClusterSnapshotRestore() -> impl IntoView {
    let restore = ServerAction::<ClusterSnapshotRestore>::new();
    let errors = FormErrors::new(action_error(restore.value().get_untracked()), &["confirm"]);
    let (project, name, snapshot) = (param("project"), param("cluster"), param("snapshot"));
    let session = request_session();
    let content = {
        let (session, project, name, snapshot) = (session.clone(), project.clone(), name.clone(), snapshot.clone());
        Suspend::new(async move {
            let found = async {
                let api = session.api().await?;
                let listed = api.cluster_snapshot_list().project(&project).cluster(&name).send().await?.into_inner();
                listed
                    .items
                    .into_iter()
                    .find(|s| s.name.as_str() == snapshot)
                    .ok_or_else(|| ConsoleError::new(404, "Not found", "The cluster keeps no snapshot of that name."))
            };
            let found = match found.await {
                Ok(found) => found,
                Err(error) => return error_view(&session, error),
            };
            view! {
                <h1>{format!("Restore {name} from a snapshot")}</h1>
                <dl class="summary">
                    <dt>"Snapshot"</dt><dd><code>{snapshot.clone()}</code></dd>
                    <dt>"Taken"</dt><dd>{when(found.taken_at)}</dd>
                    <dt>"Kubernetes"</dt><dd>{found.kubernetes_version.clone()}</dd>
                    <dt>"Size"</dt><dd>{size(found.size_bytes)}</dd>
                </dl>
                <p>"The cluster's API servers stop, etcd is restored from the snapshot as a single member and scaled back to three, and the API servers start on the snapshot's state. Everything the cluster's API stored since the snapshot is lost."</p>
                <FormAlert errors=errors.clone()/>
                <ActionForm action=restore>
                    <Csrf/>
                    <IdempotencyKey/>
                    <input type="hidden" name="project" value=project.clone()/>
                    <input type="hidden" name="cluster" value=name.clone()/>
                    <input type="hidden" name="snapshot" value=snapshot.clone()/>
                    <Field label=r#"Type the cluster's name to confirm"# name="confirm" autocomplete="off" required=true errors=errors.clone()/>
                    <button type="submit" class="danger">"Restore from this snapshot"</button>
                </ActionForm>
            }
            .into_any()
        })
    };
    let crumbs = cluster_crumbs(&project, &name);
    view! {
        <Frame title=format!("Restore {name}") crumbs=crumbs>
            <Suspense fallback=|| ()>{content}</Suspense>
        </Frame>
    }
}

/// A value of a spec diff as the page shows it.
fn shown(value: Option<serde_json::Value>) -> String {
    match value {
        None => "(absent)".to_string(),
        Some(serde_json::Value::String(text)) => text,
        Some(other) => other.to_string(),
    }
}

/// `/projects/:project/clusters/:cluster/revisions`: every generation of the
/// cluster's spec, newest first, who or what made it, and (`?generation=`)
/// what it changed from the one before.
#[component]
pub fn ClusterRevisions() -> impl IntoView {
    let (project, name) = (param("project"), param("cluster"));
    let path = cluster_path(&project, &name);
    let page = query("page");
    let chosen = query("generation").and_then(|g| g.parse::<std::num::NonZeroU64>().ok());
    let session = request_session();
    let content = {
        let (session, project, name, path) = (session.clone(), project.clone(), name.clone(), path.clone());
        Suspend::new(async move {
            let listed = async {
                let api = session.api().await?;
                let newest = || api.cluster_revision_list().project(&project).cluster(&name).limit(20);
                let revisions = match &page {
                    Some(token) => match newest().page_token(token.clone()).send().await {
                        Ok(listed) => listed,
                        // A stale or altered `?page=` shows the newest revisions, not an error page.
                        Err(_) => newest().send().await?,
                    },
                    None => newest().send().await?,
                }
                .into_inner();
                let diff = match chosen {
                    Some(generation) => Some(
                        api.cluster_revision_diff()
                            .project(&project)
                            .cluster(&name)
                            .generation(generation)
                            .send()
                            .await?
                            .into_inner(),
                    ),
                    None => None,
                };
                Ok::<_, ConsoleError>((revisions, diff))
            };
            let (revisions, diff) = match listed.await {
                Ok(found) => found,
                Err(error) => return error_view(&session, error),
            };
            let diff = diff.map(|diff| {
                let title = format!("What generation {} changed from {}", diff.to, diff.from);
                view! {
                    <section class="summary plan" aria-labelledby="diff-title">
                        <h2 id="diff-title">{title}</h2>
                        {if diff.changes.is_empty() {
                            view! { <p>"Nothing in the spec changed."</p> }.into_any()
                        } else {
                            view! {
                                <table>
                                    <caption class="visually-hidden">"Changed values by JSON Pointer"</caption>
                                    <thead><tr><th scope="col">"Field"</th><th scope="col">"Before"</th><th scope="col">"After"</th></tr></thead>
                                    <tbody>
                                        {diff.changes.into_iter().map(|change| view! {
                                            <tr><td><code>{change.path}</code></td><td><code>{shown(change.before)}</code></td><td><code>{shown(change.after)}</code></td></tr>
                                        }).collect_view()}
                                    </tbody>
                                </table>
                            }.into_any()
                        }}
                    </section>
                }
            });
            view! {
                <h1>{format!("History of {name}")}</h1>
                <ClusterTabs project=project.clone() cluster=name.clone() current="revisions"/>
                <p class="muted">"Every generation of the cluster's spec (the newest 100 are kept): what changed, when, and by whom."</p>
                {diff}
                <table>
                    <caption class="visually-hidden">"Revisions, newest first"</caption>
                    <thead><tr><th scope="col">"Generation"</th><th scope="col">"When"</th><th scope="col">"By"</th><th scope="col">"Operation"</th><th scope="col"><span class="visually-hidden">"Changes"</span></th></tr></thead>
                    <tbody>
                        {revisions.items.into_iter().map(|revision| {
                            let generation = revision.generation;
                            let by = revision.created_by.clone().or(revision.cause.clone()).unwrap_or_default();
                            let current = chosen.is_some_and(|chosen| i64::try_from(chosen.get()) == Ok(generation));
                            view! {
                                <tr class:current=current aria-current=current.then_some("true")>
                                    <td>{generation}</td>
                                    <td>{when(revision.created_at)}</td>
                                    <td><code>{by}</code></td>
                                    <td>{revision.operation_id.map(|id| {
                                        let id = id.as_str().to_string();
                                        view! { <a href=operation_path(&id)><code>{id.clone()}</code></a> }
                                    })}</td>
                                    <td>{(generation > 1).then(|| view! {
                                        <a href=format!("{path}/revisions?generation={generation}") aria-label=format!("What changed in generation {generation}")>"What changed"</a>
                                    })}</td>
                                </tr>
                            }
                        }).collect_view()}
                    </tbody>
                </table>
                <crate::ui::Pager base=format!("{path}/revisions") next=revisions.next_page paged=page.is_some()/>
            }
            .into_any()
        })
    };
    let crumbs = cluster_crumbs(&project, &name);
    view! {
        <Frame title=format!("History of {name}") crumbs=crumbs>
            <Suspense fallback=|| ()>{content}</Suspense>
        </Frame>
    }
}

/// The days a maintenance window may start on, as the API spells them.
const DAYS: [&str; 7] = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"];

/// One exclusion per line: `name YYYY-MM-DD YYYY-MM-DD`.
const EXCLUSIONS_HINT: &str =
    "One per line: a name, the first day and the last day (YYYY-MM-DD), e.g. \"black-friday 2026-11-26 2026-12-01\".";

/// A text number as JSON, or a problem for `field`.
fn number(fields: &mut Fields, field: &str, text: &str, message: &str) -> serde_json::Value {
    fields.parse::<i64>(field, text, message).map(serde_json::Value::from).unwrap_or_default()
}

/// Saves the cluster's upgrade and access settings in one PATCH: the API
/// checks every value and names the field of each it refuses.
#[allow(clippy::too_many_arguments)]
#[server(prefix = "/console/fn", endpoint = "cluster_settings")]
pub async fn cluster_settings(
    csrf: String,
    project: String,
    cluster: String,
    release_channel: String,
    window_day: String,
    window_start: String,
    window_hours: String,
    exclusions: String,
    snapshot_every_hours: String,
    snapshot_keep: String,
    firewall: Option<String>,
    allowed_addresses: String,
    /// The cluster's ETag when the form was filled in.
    etag: String,
) -> Result<(), ConsoleError> {
    let session = request_session();
    session.check_csrf(&csrf)?;
    let kept = [
        ("release_channel", release_channel.as_str()),
        ("window_day", window_day.as_str()),
        ("window_start", window_start.as_str()),
        ("window_hours", window_hours.as_str()),
        ("exclusions", exclusions.as_str()),
        ("snapshot_every_hours", snapshot_every_hours.as_str()),
        ("snapshot_keep", snapshot_keep.as_str()),
        ("firewall", if firewall.is_some() { "on" } else { "" }),
        ("allowed_addresses", allowed_addresses.as_str()),
    ];
    let saved = async {
        let mut fields = Fields::default();
        // No day means no window: an explicit `null`, which the SDK's types cannot send.
        let window = if window_day.is_empty() {
            serde_json::Value::Null
        } else {
            serde_json::json!({
                "day": window_day,
                "start_time": window_start.trim(),
                "duration_hours": number(&mut fields, "spec.maintenance_window.duration_hours", &window_hours, "Enter 1 to 24 hours."),
            })
        };
        let mut excluded = Vec::new();
        for (index, line) in exclusions.lines().map(str::trim).filter(|l| !l.is_empty()).enumerate() {
            match line.split_whitespace().collect::<Vec<_>>()[..] {
                [name, start, end] => {
                    excluded.push(serde_json::json!({ "name": name, "start_date": start, "end_date": end }))
                }
                _ => fields.problem(
                    &format!("spec.maintenance_exclusions[{index}]"),
                    "Write a name, the first day and the last day, separated by spaces.",
                ),
            }
        }
        let snapshots = serde_json::json!({
            "every_hours": number(&mut fields, "spec.snapshot_policy.every_hours", &snapshot_every_hours, "Enter 1 to 168 hours."),
            "keep": number(&mut fields, "spec.snapshot_policy.keep", &snapshot_keep, "Enter 1 to 50 snapshots."),
        });
        fields.finish()?;
        let addresses: Vec<&str> = allowed_addresses.split_whitespace().collect();
        let mut access = serde_json::json!({ "enabled": firewall.is_some() });
        if !addresses.is_empty() {
            access["allowed_addresses"] = addresses.into();
        }
        let spec = serde_json::json!({
            "release_channel": release_channel,
            "maintenance_window": window,
            "maintenance_exclusions": excluded,
            "snapshot_policy": snapshots,
            "control_plane_firewall": access,
        });
        let path =
            format!("/v1/projects/{}/clusters/{}", moke_sdk::encode_path(&project), moke_sdk::encode_path(&cluster));
        let api = session.api().await?;
        // Sent whole, so only over the spec the form showed: a colleague's change since is refused, not undone.
        let op = api.patch_json(&path, &serde_json::json!({ "spec": spec }), Some(&etag)).await.map_err(|error| {
            if error.status == 412 {
                ConsoleError::new(412, "Changed meanwhile", "Someone changed this cluster since the form was shown; open the settings again to see their change, then save yours.")
            } else {
                error
            }
        })?;
        // A changed window may wait for an approver, as the policy says.
        let next = super::approvals::held(&op)
            .or_else(|| op["id"].as_str().filter(|id| id.starts_with("op_")).map(operation_path))
            .unwrap_or_else(|| format!("{}/settings?saved=1", cluster_path(&project, &cluster)));
        session.redirect(&next);
        Ok(())
    };
    // A form refused as stale comes back as the cluster now is; any other, as it was sent.
    saved.await.map_err(|e: ConsoleError| if e.status == 412 { e } else { e.keep(&kept) })
}

/// `/projects/:project/clusters/:cluster/settings`: how and when the cluster
/// is upgraded (release channel, maintenance window and exclusions), its
/// etcd snapshot schedule, and who may reach its API endpoint.
#[component]
pub fn ClusterSettings() -> impl IntoView {
    let save = ServerAction::<ClusterSettings>::new();
    let order = [
        "spec.release_channel",
        "spec.maintenance_window",
        "spec.maintenance_exclusions",
        "spec.snapshot_policy",
        "spec.control_plane_firewall",
    ];
    let errors = FormErrors::new(action_error(save.value().get_untracked()), &order);
    let (project, name) = (param("project"), param("cluster"));
    let saved = query("saved").is_some();
    let session = request_session();
    let content = {
        let (session, project, name) = (session.clone(), project.clone(), name.clone());
        Suspend::new(async move {
            let viewed = async {
                let api = session.api().await?;
                Ok::<_, ConsoleError>(api.cluster_view().project(&project).cluster(&name).send().await?.into_inner())
            };
            let cluster = match viewed.await {
                Ok(cluster) => cluster,
                Err(error) => return error_view(&session, error),
            };
            let spec = cluster.spec.clone();
            // After a refused change, as the person left it; else as the cluster is.
            let value = |input: &str, current: String| errors.value(input).unwrap_or(current);
            let channel = value("release_channel", spec.release_channel.to_string());
            let window = spec.maintenance_window.as_ref();
            let day = value("window_day", window.map(|w| w.day.to_string()).unwrap_or_default());
            let start = value("window_start", window.map_or("03:00".into(), |w| w.start_time.to_string()));
            let hours = value("window_hours", window.map_or("4".into(), |w| w.duration_hours.to_string()));
            let excluded = spec
                .maintenance_exclusions
                .iter()
                .map(|e| format!("{} {} {}", e.name.as_str(), e.start_date, e.end_date))
                .collect::<Vec<_>>()
                .join("\n");
            let excluded = value("exclusions", excluded);
            let every = value("snapshot_every_hours", spec.snapshot_policy.every_hours.to_string());
            let keep = value("snapshot_keep", spec.snapshot_policy.keep.to_string());
            let firewall_on = if errors.is_empty() {
                spec.control_plane_firewall.enabled
            } else {
                errors.value("firewall").is_some_and(|v| v == "on")
            };
            let addresses = spec
                .control_plane_firewall
                .allowed_addresses
                .as_ref()
                .map(|list| list.iter().map(|a| a.as_str()).collect::<Vec<_>>().join("\n"))
                .unwrap_or_default();
            let addresses = value("allowed_addresses", addresses);
            let channels = ["none", "rapid", "regular", "stable"]
                .into_iter()
                .map(|c| (c.to_string(), c.to_string(), c == channel))
                .collect::<Vec<_>>();
            let mut days =
                vec![(String::new(), "No window: upgrades may start at any time".to_string(), day.is_empty())];
            days.extend(DAYS.iter().map(|d| (d.to_string(), d.to_string(), *d == day)));
            view! {
                <h1>{format!("Settings of {name}")}</h1>
                <ClusterTabs project=project.clone() cluster=name.clone() current="settings"/>
                {saved.then(|| view! { <div class="alert ok" role="status">"Saved."</div> })}
                <FormAlert errors=errors.clone()/>
                <ActionForm action=save>
                    <Csrf/>
                    <input type="hidden" name="project" value=project.clone()/>
                    <input type="hidden" name="cluster" value=name.clone()/>
                    <input type="hidden" name="etag" value=cluster.etag.clone()/>
                    <fieldset>
                        <legend>"Upgrades"</legend>
                        <Select label="Release channel" name="release_channel" error_name="spec.release_channel" errors=errors.clone() options=channels/>
                        <p class="hint">"On a channel the cluster is upgraded on its own, one minor version at a time, inside the window and never on an excluded day; \"none\" leaves upgrades to you (until a version's end of life)."</p>
                        <Select label="Maintenance window: day" name="window_day" error_name="spec.maintenance_window.day" errors=errors.clone() options=days/>
                        <Field label="Starts at (UTC, HH:MM)" name="window_start" error_name="spec.maintenance_window.start_time" value=start errors=errors.clone()/>
                        <Field label="Lasts (hours)" name="window_hours" error_name="spec.maintenance_window.duration_hours" kind="number" min="1" max="24" value=hours errors=errors.clone()/>
                        <crate::ui::TextArea label="Maintenance exclusions" name="exclusions" error_name="spec.maintenance_exclusions" hint=EXCLUSIONS_HINT rows=3 optional=true
                            value=excluded errors=errors.clone()/>
                    </fieldset>
                    <fieldset>
                        <legend>"etcd snapshots"</legend>
                        <Field label="Every (hours)" name="snapshot_every_hours" error_name="spec.snapshot_policy.every_hours" kind="number" min="1" max="168" value=every errors=errors.clone()/>
                        <Field label="Snapshots kept" name="snapshot_keep" error_name="spec.snapshot_policy.keep" kind="number" min="1" max="50" value=keep errors=errors.clone()/>
                    </fieldset>
                    <fieldset>
                        <legend>"API endpoint access"</legend>
                        <div class="choice">
                            <input type="checkbox" id="field-firewall" name="firewall" value="on" checked=firewall_on/>
                            <label for="field-firewall">"Only these addresses may reach the cluster's API endpoint"</label>
                        </div>
                        <crate::ui::TextArea label="Allowed addresses (CIDR)" name="allowed_addresses" error_name="spec.control_plane_firewall" hint="One CIDR per line, e.g. 203.0.113.0/24." rows=3 optional=true
                            value=addresses errors=errors.clone()/>
                    </fieldset>
                    <button type="submit">"Save settings"</button>
                </ActionForm>
            }
            .into_any()
        })
    };
    let crumbs = cluster_crumbs(&project, &name);
    view! {
        <Frame title=format!("Settings of {name}") crumbs=crumbs>
            <Suspense fallback=|| ()>{content}</Suspense>
        </Frame>
    }
}
