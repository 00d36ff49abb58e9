//! Clusters: the create form (with the first node pool), the detail page
//! (status, conditions, endpoint, node pools, nodes, capacity, its
//! operations), the kubeconfig (view, download, revoke) and
//! deletion.

use std::sync::Arc;

use axum::extract::Path;
use axum::response::{IntoResponse, Response};
use leptos::prelude::*;
use moke_sdk::types;

use super::account::Fields;
use super::workloads::ClusterTabs;
use super::{param, query, segment};
use crate::Console;
use crate::app::Frame;
use crate::error::ConsoleError;
use crate::session::{RequestSession, request_session};
use crate::ui::{
    Choice, Csrf, Field, FormAlert, FormErrors, IdempotencyKey, InProgress, NAME_PATTERN, Pager, StatusChip,
    action_error, ago, error_view, operation_chip, when,
};

pub(crate) fn cluster_path(project: &str, cluster: &str) -> String {
    format!("/projects/{}/clusters/{}", segment(project), segment(cluster))
}

#[allow(clippy::too_many_arguments)]
#[server(prefix = "/console/fn", endpoint = "cluster_create")]
pub async fn cluster_create(
    csrf: String,
    idempotency_key: String,
    project: String,
    name: String,
    region: String,
    kubernetes_version: String,
    control_plane_replicas: String,
    machine_type: String,
    count: String,
    zones: Option<String>,
    deletion_protection: Option<String>,
    /// `estimate` from the "Update the estimate" button: back to the form,
    /// as it was, priced.
    intent: Option<String>,
) -> Result<(), ConsoleError> {
    let session = request_session();
    session.check_csrf(&csrf)?;
    let zones = zones.unwrap_or_default();
    let protection = if deletion_protection.is_some() { "on" } else { "" };
    let kept = [
        ("name", name.as_str()),
        ("region", region.as_str()),
        ("kubernetes_version", kubernetes_version.as_str()),
        ("control_plane_replicas", control_plane_replicas.as_str()),
        ("machine_type", machine_type.as_str()),
        ("count", count.as_str()),
        ("zones", zones.as_str()),
        ("deletion_protection", protection),
    ];
    // The page's script only prices the form; creating takes the person's own submit.
    if session.scripted() && intent.as_deref() != Some("estimate") {
        return Err(ConsoleError::csrf());
    }
    if intent.as_deref() == Some("estimate") {
        // Back to the form, priced: its values travel like a form's error,
        // sealed to this browser, so no link can fill the form in.
        return Err(ConsoleError::estimate().keep(&kept));
    }
    let form = ClusterForm {
        idempotency_key,
        project: project.clone(),
        name: name.clone(),
        region: region.clone(),
        kubernetes_version: kubernetes_version.clone(),
        control_plane_replicas: control_plane_replicas.clone(),
        machine_type: machine_type.clone(),
        count: count.clone(),
        zones: zones.clone(),
        deletion_protection: deletion_protection.is_some(),
    };
    create_cluster(&session, form).await.map_err(|e| e.keep(&kept))
}

/// The cluster form's values.
struct ClusterForm {
    idempotency_key: String,
    project: String,
    name: String,
    region: String,
    kubernetes_version: String,
    control_plane_replicas: String,
    machine_type: String,
    count: String,
    zones: String,
    deletion_protection: bool,
}

async fn create_cluster(session: &RequestSession, form: ClusterForm) -> Result<(), ConsoleError> {
    let ClusterForm {
        idempotency_key,
        project,
        name,
        region,
        kubernetes_version,
        control_plane_replicas,
        machine_type,
        count,
        zones,
        deletion_protection,
    } = form;
    let mut fields = Fields::default();
    let cluster_name = fields.parse::<types::ClusterCreateName>(
        "name",
        &name,
        "Use 1-63 lowercase letters, digits or '-', starting with a letter.",
    );
    let replicas =
        fields.parse::<i64>("spec.control_plane.replicas", &control_plane_replicas, "Choose 1 or 3 replicas.");
    let replicas = replicas.and_then(|r| types::ControlPlaneReplicas::try_from(r).ok());
    let count = fields.parse::<i64>("spec.count", &count, "Enter a number of nodes, 1 to 500.");
    if count.is_some_and(|count| !(1..=500).contains(&count)) {
        fields.problem("spec.count", "Enter a number of nodes, 1 to 500.");
    }
    if region.is_empty() {
        fields.problem("spec.region", "Choose a region.");
    }
    if machine_type.is_empty() {
        fields.problem("spec.machine_type", "Choose a machine type.");
    }
    fields.finish()?;
    let zones: Vec<String> =
        zones.split([',', ' ']).map(str::trim).filter(|z| !z.is_empty()).map(String::from).collect();
    let api = session.api().await?;
    let cluster = types::ClusterCreate {
        labels: None,
        name: cluster_name.expect("finish() refused a missing field"),
        spec: types::ClusterSpecInput {
            control_plane: replicas.map(|replicas| types::ControlPlaneInput { replicas }),
            deletion_protection: Some(deletion_protection),
            kubernetes_version: Some(kubernetes_version).filter(|v| !v.is_empty()),
            maintenance_window: None,
            region,
            snapshot_policy: None,
            control_plane_firewall: None,
            release_channel: None,
            maintenance_exclusions: None,
        },
    };
    api.cluster_create().project(&project).idempotency_key(idempotency_key.clone()).body(cluster).send().await?;
    // The first node pool, with a key of its own derived from the form's:
    // sending the form again after a failure here creates the cluster once.
    let pool = types::NodePoolCreate {
        labels: None,
        name: "pool-1".parse().map_err(|_| ConsoleError::invalid(Vec::new()))?,
        spec: types::NodePoolSpecInput {
            autoscaling: None,
            count: count.expect("finish() refused a missing field"),
            machine_type,
            node_labels: None,
            taints: Vec::new(),
            upgrade_policy: None,
            zones: (!zones.is_empty()).then_some(zones),
        },
    };
    let made = api
        .node_pool_create()
        .project(&project)
        .cluster(name.trim())
        .idempotency_key(format!("{idempotency_key}-pool"))
        .body(pool)
        .send()
        .await;
    let path = cluster_path(&project, name.trim());
    match made {
        Ok(_) => session.redirect(&format!("{path}?created=1")),
        Err(error) => {
            let error = ConsoleError::from(error);
            tracing::info!(%error, "the console created a cluster but not its first node pool");
            session.redirect(&format!("{path}?pool_failed=1"));
        }
    }
    Ok(())
}

/// `/projects/:project/clusters/new`.
#[component]
pub fn ClusterNew() -> impl IntoView {
    let action = ServerAction::<ClusterCreate>::new();
    let order = [
        "name",
        "spec.region",
        "spec.kubernetes_version",
        "spec.control_plane.replicas",
        "spec.machine_type",
        "spec.count",
        "spec.zones",
    ];
    // The form sent back for an estimate comes back filled in, without an error.
    let errors = match action_error(action.value().get_untracked()) {
        Some(sent) if sent.code == ConsoleError::ESTIMATE => FormErrors::new(None, &order).prefilled(sent.values),
        other => FormErrors::new(other, &order),
    };
    let project = param("project");
    let session = request_session();
    let form = {
        let (session, project, errors) = (session.clone(), project.clone(), errors.clone());
        Suspend::new(async move {
            let catalogs = async {
                let api = session.api().await?;
                let (regions, versions, machines) = futures::try_join!(
                    async { api.region_list().send().await.map_err(ConsoleError::from) },
                    async { api.kubernetes_version_list().send().await.map_err(ConsoleError::from) },
                    async { api.machine_type_list().send().await.map_err(ConsoleError::from) },
                )?;
                // The project must exist (and be the caller's) before its form shows.
                api.project_view().project(&project).send().await?;
                Ok::<_, ConsoleError>((regions.into_inner(), versions.into_inner(), machines.into_inner()))
            };
            let (regions, versions, machines) = match catalogs.await {
                Ok(catalogs) => catalogs,
                Err(error) => return error_view(&session, error),
            };
            let zones_hint =
                regions.iter().map(|r| format!("{}: {}", r.name, r.zones.join(", "))).collect::<Vec<_>>().join("; ");
            // The form as shown (sent back, or its preselections), priced.
            let shown = |name: &str, default: Option<String>| errors.value(name).or(default).unwrap_or_default();
            let default_version = versions.iter().find(|v| v.default == Some(true)).map(|v| v.version.clone());
            let shape = EstimatedShape {
                region: shown("region", regions.first().map(|r| r.name.clone())),
                kubernetes_version: shown("kubernetes_version", default_version),
                control_plane_replicas: shown("control_plane_replicas", Some("1".into())),
                machine_type: shown("machine_type", machines.first().map(|m| m.name.clone())),
                count: shown("count", Some("3".into())),
                zones: shown("zones", None),
            };
            let replicas = shape.control_plane_replicas.clone();
            let protected = errors.value("deletion_protection").is_some_and(|v| v == "on");
            let few_nodes = shape.count.trim().parse::<i64>().is_ok_and(|count| count < 3);
            let estimate = estimate_cluster(&session, &project, shape).await;
            view! {
                <h1>"Create a cluster"</h1>
                <FormAlert errors=errors.clone()/>
                <ActionForm action=action attr:data-complete="" attr:data-live-estimate="estimate-body">
                    <Csrf/>
                    <IdempotencyKey/>
                    <input type="hidden" name="project" value=project.clone()/>
                    <Field label="Name" name="name" hint="Lowercase letters, digits and '-', e.g. prod." pattern=NAME_PATTERN required=true errors=errors.clone()/>
                    <Select label="Region" name="region" error_name="spec.region" errors=errors.clone()
                        options=regions.iter().map(|r| (r.name.clone(), format!("{} ({})", r.display_name, r.name), false)).collect()/>
                    <Select label="Kubernetes version" name="kubernetes_version" error_name="spec.kubernetes_version" errors=errors.clone()
                        options=versions.iter().map(|v| {
                            let default = v.default == Some(true);
                            let label = if default { format!("{} (default)", v.version) } else { v.version.clone() };
                            (v.version.clone(), label, default)
                        }).collect()/>
                    <fieldset>
                        <legend>"Control plane"</legend>
                        <div class="choice">
                            <input type="radio" id="cp-1" name="control_plane_replicas" value="1" checked=replicas != "3"/>
                            <label for="cp-1">"1 replica: for development"</label>
                        </div>
                        <div class="choice">
                            <input type="radio" id="cp-3" name="control_plane_replicas" value="3" checked=replicas == "3"/>
                            <label for="cp-3">"3 replicas (highly available): for production"</label>
                        </div>
                    </fieldset>
                    <fieldset>
                        <legend>"First node pool"</legend>
                        <Select label="Machine type" name="machine_type" error_name="spec.machine_type" errors=errors.clone()
                            options=machines.iter().map(|m| (m.name.clone(), format!("{}: {} vCPU, {} GiB", m.name, m.vcpus, m.memory_gib), false)).collect()/>
                        <Field label="Nodes" name="count" error_name="spec.count" kind="number" value="3" min="1" max="500" required=true
                            hint="Fewer than 3 nodes leave no room to move workloads during upgrades and repairs."
                            errors=errors.clone()/>
                        <Field label="Zones (optional)" name="zones" error_name="spec.zones" placeholder="spread over all zones"
                            hint="Comma-separated; the region's zones are listed below." errors=errors.clone()/>
                        <p class="hint">{zones_hint}</p>
                    </fieldset>
                    <div class="choice">
                        <input type="checkbox" id="deletion-protection" name="deletion_protection" value="on" checked=protected/>
                        <label for="deletion-protection">"Deletion protection: refuse to delete this cluster until it is turned off"</label>
                    </div>
                    <PriceEstimate estimate=estimate few_nodes=few_nodes/>
                    <button type="submit" data-needs-complete="">"Create cluster"</button>
                </ActionForm>
            }
            .into_any()
        })
    };
    let crumbs = project_crumbs(&project);
    view! {
        <Frame title="Create a cluster" crumbs=crumbs>
            <Suspense fallback=|| ()>{form}</Suspense>
        </Frame>
    }
}

/// What the create form prices: the cluster and its first node pool.
struct EstimatedShape {
    region: String,
    kubernetes_version: String,
    control_plane_replicas: String,
    machine_type: String,
    count: String,
    zones: String,
}

/// The API's monthly price for `shape`, or why there is none (the API's
/// message for each field it could not price).
async fn estimate_cluster(
    session: &RequestSession,
    project: &str,
    shape: EstimatedShape,
) -> Result<types::PriceEstimate, String> {
    let unpriceable = |what: &str| format!("Enter {what} to see a price.");
    let replicas =
        shape.control_plane_replicas.parse::<i64>().ok().and_then(|r| types::ControlPlaneReplicas::try_from(r).ok());
    let count = shape.count.parse::<i64>().map_err(|_| unpriceable("a number of nodes"))?;
    let zones: Vec<String> =
        shape.zones.split([',', ' ']).map(str::trim).filter(|z| !z.is_empty()).map(String::from).collect();
    let request = types::ClusterEstimateRequest {
        // The price does not depend on the name: any valid one will do.
        cluster: types::ClusterCreate {
            labels: None,
            name: "new-cluster".parse().map_err(|_| unpriceable("a name"))?,
            spec: types::ClusterSpecInput {
                control_plane: replicas.map(|replicas| types::ControlPlaneInput { replicas }),
                deletion_protection: None,
                kubernetes_version: Some(shape.kubernetes_version).filter(|v| !v.is_empty()),
                maintenance_window: None,
                region: shape.region,
                snapshot_policy: None,
                control_plane_firewall: None,
                release_channel: None,
                maintenance_exclusions: None,
            },
        },
        node_pools: vec![types::NodePoolCreate {
            labels: None,
            name: "pool-1".parse().map_err(|_| unpriceable("a node pool"))?,
            spec: types::NodePoolSpecInput {
                autoscaling: None,
                count,
                machine_type: shape.machine_type,
                node_labels: None,
                taints: Vec::new(),
                upgrade_policy: None,
                zones: (!zones.is_empty()).then_some(zones),
            },
        }],
    };
    let api = session.api().await.map_err(|e| e.detail)?;
    match api.cluster_estimate().project(project).body(request).send().await {
        Ok(estimate) => Ok(estimate.into_inner()),
        Err(error) => {
            let error = ConsoleError::from(error);
            let fields: Vec<String> = error.fields.iter().map(|f| f.message.clone()).collect();
            Err(if fields.is_empty() { error.detail } else { fields.join(" ") })
        }
    }
}

/// The create form's monthly price, and the button that prices the form
/// as it is now (no JavaScript needed: the form comes back priced).
#[component]
fn PriceEstimate(
    estimate: Result<types::PriceEstimate, String>,
    /// The pool priced has fewer than 3 nodes.
    few_nodes: bool,
) -> impl IntoView {
    let body = match estimate {
        Ok(estimate) => {
            let currency = estimate.currency.clone();
            view! {
                <table>
                    <thead><tr><th scope="col">"Part"</th><th scope="col" class="number">"Count"</th><th scope="col" class="number">"Hours"</th>
                        <th scope="col" class="number">"Price an hour"</th><th scope="col" class="number">"A month"</th></tr></thead>
                    <tbody>
                        {estimate.lines.into_iter().map(|line| view! {
                            <tr><td>{line.product}</td><td class="number">{line.count}</td><td class="number">{line.hours}</td>
                                <td class="number">{crate::ui::price(&line.unit_price)}</td><td class="number">{line.amount.to_string()}</td></tr>
                        }).collect_view()}
                    </tbody>
                    <tfoot><tr><th scope="row" colspan="4">"Total a month"</th>
                        <td class="number estimate-total">{format!("{currency} {}", *estimate.monthly_total)}</td></tr></tfoot>
                </table>
                <p class="hint">{format!(
                    "At today's prices (price list {}), for a month of 730 hours; node time is charged at most 672 hours a month.",
                    estimate.price_version
                )}</p>
            }
            .into_any()
        }
        Err(why) => view! { <p class="hint estimate-missing">{why}</p> }.into_any(),
    };
    view! {
        <section class="estimate" aria-labelledby="estimate-title">
            <h2 id="estimate-title">"Monthly price estimate"</h2>
            // The part the console's script swaps in as the form is filled in.
            <div id="estimate-body">
                {few_nodes.then(|| view! {
                    <p class="alert" role="status">"Fewer than 3 nodes: an upgrade or a repair has no room to move your workloads, which then stop while a node is replaced."</p>
                })}
                {body}
            </div>
            <button type="submit" name="intent" value="estimate" formnovalidate=true class="secondary" data-estimate-button="">"Update the estimate"</button>
        </section>
    }
}

/// A labelled `<select>`; `options` are (value, label, preselected).
#[component]
pub(crate) fn Select(
    label: &'static str,
    name: &'static str,
    /// The API's name for the field, for its errors.
    error_name: &'static str,
    errors: FormErrors,
    options: Vec<(String, String, bool)>,
) -> impl IntoView {
    let id = format!("field-{name}");
    let messages = errors.messages_for(error_name);
    let invalid = !messages.is_empty();
    let error_id = format!("{id}-error");
    let autofocus = errors.is_first(error_name);
    // After an error, what the person had chosen; else the preselection.
    let chosen = errors.value(name);
    view! {
        <div class="field" class:invalid=invalid>
            <label for=id.clone()>{label}</label>
            <select id=id name=name required=true autofocus=autofocus aria-invalid=invalid.then_some("true")
                aria-describedby=invalid.then(|| error_id.clone())>
                {options.into_iter().map(|(value, label, preselected)| {
                    let selected = chosen.as_ref().map_or(preselected, |chosen| *chosen == value);
                    view! { <option value=value selected=selected>{label}</option> }
                }).collect_view()}
            </select>
            {invalid.then(|| view! { <p class="field-error" id=error_id.clone()>{messages.join(" ")}</p> })}
        </div>
    }
}

/// Everything the cluster page shows, read in parallel.
struct ClusterPageData {
    cluster: types::ClusterView,
    pools: Vec<types::NodePoolView>,
    nodes: Vec<types::NodeView>,
    metrics: Option<types::ClusterMetrics>,
    operations: Vec<types::OperationView>,
    older_operations: Option<String>,
}

/// Operations shown per page of a cluster's page.
const OPERATIONS_PER_PAGE: u32 = 10;

async fn cluster_page_data(
    session: &RequestSession,
    project: &str,
    cluster: &str,
    operations_page: Option<String>,
) -> Result<ClusterPageData, ConsoleError> {
    let api = session.api().await?;
    let viewed = api.cluster_view().project(project).cluster(cluster).send().await?.into_inner();
    let newest_operations =
        || api.cluster_operation_list().project(project).cluster(cluster).limit(OPERATIONS_PER_PAGE);
    let paged = operations_page.is_some();
    let operations = match operations_page {
        Some(token) => newest_operations().page_token(token),
        None => newest_operations(),
    };
    let (pools, nodes, metrics, operations) = futures::join!(
        api.node_pool_list().project(project).cluster(cluster).limit(100u32).send(),
        api.cluster_node_list().project(project).cluster(cluster).limit(100u32).send(),
        api.cluster_metrics_view().project(project).cluster(cluster).send(),
        operations.send(),
    );
    let operations = match operations {
        Ok(listed) => listed.into_inner(),
        // A stale or altered `?page=` shows the newest operations, not an error page.
        Err(_) if paged => newest_operations().send().await?.into_inner(),
        Err(error) => return Err(error.into()),
    };
    Ok(ClusterPageData {
        cluster: viewed,
        pools: pools?.into_inner().items,
        nodes: nodes.map(|n| n.into_inner().items).unwrap_or_default(),
        metrics: metrics.ok().map(|m| m.into_inner()),
        operations: operations.items,
        older_operations: operations.next_page,
    })
}

fn settled(phase: &str) -> bool {
    matches!(phase, "running" | "failed")
}

/// `/projects/:project/clusters/:cluster`: the cluster's status and what is in it.
#[component]
pub fn Cluster() -> impl IntoView {
    let (project, name) = (param("project"), param("cluster"));
    let session = request_session();
    let notice = if query("created").is_some() {
        Some("The cluster is being created: its operations below show how far it has come.")
    } else if query("pool_failed").is_some() {
        Some("The cluster is being created, but its first node pool could not be: add one below.")
    } else if query("pool_deleted").is_some() {
        Some("The node pool is being deleted.")
    } else {
        None
    };
    let path = cluster_path(&project, &name);
    let content = {
        let (session, project, name, path) = (session.clone(), project.clone(), name.clone(), path.clone());
        Suspend::new(async move {
            let operations_page = query("page");
            let data = match cluster_page_data(&session, &project, &name, operations_page.clone()).await {
                Ok(data) => data,
                Err(error) => return error_view(&session, error),
            };
            let ClusterPageData { cluster, pools, nodes, metrics, operations, older_operations } = data;
            // Running without an endpoint: its serving certificate is still on its way.
            let changing = !settled(&cluster.status.phase)
                || (cluster.status.phase == "running" && cluster.status.endpoint.is_none())
                || cluster.status.observed_generation < cluster.generation
                || pools.iter().any(|p| !settled(&p.status.phase) || p.status.observed_generation < p.generation)
                || operations.iter().any(|op| !finished(op.status));
            let mut conditions = cluster.status.conditions.clone();
            conditions.sort_by_key(|c| std::cmp::Reverse(c.last_transition_time));
            let endpoint = cluster.status.endpoint.clone();
            view! {
                <h1>{format!("Cluster {name}")}</h1>
                <ClusterTabs project=project.clone() cluster=name.clone() current="overview"/>
                <InProgress changing=changing here=path.clone()/>
                <section class="summary" aria-label="Summary">
                    <dl>
                        <div><dt>"Status"</dt><dd><StatusChip phase=cluster.status.phase.clone() stale=cluster.status.stale/></dd></div>
                        <div><dt>"Region"</dt><dd>{cluster.spec.region.clone()}</dd></div>
                        <div><dt>"Kubernetes"</dt><dd>
                            {cluster.spec.kubernetes_version.clone()}
                            {cluster.upgrade_available.clone().map(|version| view! {
                                <a class="chip upgrade" href=format!("{path}/upgrade")>{format!("{version} available")}</a>
                            })}
                        </dd></div>
                        <div><dt>"Control plane"</dt><dd>{format!("{} replica{}", cluster.spec.control_plane.replicas, if cluster.spec.control_plane.replicas == 1 { "" } else { "s" })}</dd></div>
                        <div><dt>"Endpoint"</dt><dd>{match endpoint {
                            Some(endpoint) => view! { <code>{endpoint}</code> }.into_any(),
                            None => view! { <span class="muted">"not yet"</span> }.into_any(),
                        }}</dd></div>
                        <div><dt>"Release channel"</dt><dd>{release_channel(cluster.spec.release_channel)}</dd></div>
                        <div><dt>"Deletion protection"</dt><dd>{if cluster.spec.deletion_protection { "on" } else { "off" }}</dd></div>
                        <div><dt>"Created"</dt><dd>{when(cluster.created_at)}</dd></div>
                    </dl>
                    <p class="actions">
                        <a class="button" href=format!("{path}/kubeconfig")>"Kubeconfig"</a>
                        <a class="button secondary" href=format!("{path}/workloads")>"Workloads"</a>
                        <a class="button danger" href=format!("{path}/delete")>"Delete cluster"</a>
                    </p>
                </section>
                {metrics.map(|m| view! { <Capacity metrics=m/> })}
                <section aria-labelledby="pools-title">
                    <h2 id="pools-title">"Node pools"</h2>
                    <p class="muted">"Open a pool to resize it, set its autoscaling range, node labels and taints."</p>
                    {if pools.is_empty() {
                        view! { <p class="empty">"No node pools: workloads have nowhere to run."</p> }.into_any()
                    } else {
                        view! {
                            <table>
                                <caption class="visually-hidden">"Node pools"</caption>
                                <thead><tr><th scope="col">"Name"</th><th scope="col">"Status"</th><th scope="col">"Machine type"</th><th scope="col">"Nodes"</th><th scope="col">"Autoscaling"</th><th scope="col">"Zones"</th></tr></thead>
                                <tbody>
                                    {pools.into_iter().map(|pool| {
                                        let zones = pool.spec.zones.join(", ");
                                        let autoscaling = pool.spec.autoscaling.as_ref().map_or_else(
                                            || "off".to_string(),
                                            |a| format!("{} to {}", a.min_count, a.max_count),
                                        );
                                        view! {
                                            <tr>
                                                <td><a href=format!("{path}/node-pools/{}", segment(&pool.name))>{pool.name.clone()}</a></td>
                                                <td><StatusChip phase=pool.status.phase.clone() stale=pool.status.stale/></td>
                                                <td>{pool.spec.machine_type.clone()}</td>
                                                <td>{pool.spec.count}</td>
                                                <td>{autoscaling}</td>
                                                <td>{zones}</td>
                                            </tr>
                                        }
                                    }).collect_view()}
                                </tbody>
                            </table>
                        }.into_any()
                    }}
                    <p class="actions"><a class="button secondary" href=format!("{path}/node-pools/new")>"Add a node pool"</a></p>
                </section>
                <section aria-labelledby="nodes-title">
                    <h2 id="nodes-title">"Nodes"</h2>
                    {if nodes.is_empty() {
                        view! { <p class="muted">"No nodes have joined yet."</p> }.into_any()
                    } else {
                        view! {
                            <table>
                                <caption class="visually-hidden">"Nodes"</caption>
                                <thead><tr><th scope="col">"Name"</th><th scope="col">"Pool"</th><th scope="col">"Zone"</th><th scope="col">"Kubernetes"</th><th scope="col">"Ready"</th><th scope="col">"Pods"</th><th scope="col">"CPU requested"</th></tr></thead>
                                <tbody>
                                    {nodes.into_iter().map(|node| view! {
                                        <tr>
                                            <td>{node.name}</td>
                                            <td>{node.node_pool}</td>
                                            <td>{node.zone}</td>
                                            <td>{node.kubernetes_version.unwrap_or_default()}</td>
                                            <td>{if node.ready { "yes" } else { "no" }}{if node.unschedulable { " (cordoned)" } else { "" }}</td>
                                            <td>{node.pods}</td>
                                            <td>{format!("{} / {} m", node.requested_cpu_millis, node.allocatable_cpu_millis)}</td>
                                        </tr>
                                    }).collect_view()}
                                </tbody>
                            </table>
                        }.into_any()
                    }}
                </section>
                <section aria-labelledby="conditions-title">
                    <h2 id="conditions-title">"Conditions"</h2>
                    {if conditions.is_empty() {
                        view! { <p class="muted">"The region has reported no conditions yet."</p> }.into_any()
                    } else {
                        view! {
                            <ol class="timeline">
                                {conditions.into_iter().map(|c| view! {
                                    <li>
                                        <time datetime=c.last_transition_time.to_rfc3339()>{ago(c.last_transition_time)}</time>
                                        <strong>{c.type_}</strong>" "<StatusChip phase=c.status.to_lowercase()/>
                                        <span class="reason">{c.reason}</span>
                                        <p>{c.message}</p>
                                    </li>
                                }).collect_view()}
                            </ol>
                        }.into_any()
                    }}
                </section>
                <Operations operations=operations highlight=query("operation") base=path.clone() older=older_operations paged=operations_page.is_some()/>
            }
            .into_any()
        })
    };
    let crumbs = project_crumbs(&project);
    view! {
        <Frame title=format!("Cluster {name}") crumbs=crumbs>
            <div class="live" role="status" aria-live="polite">
                {notice.map(|notice| view! { <div class="alert ok">{notice}</div> })}
            </div>
            <Suspense fallback=|| ()><div id="cluster-live" data-live="">{content}</div></Suspense>
        </Frame>
    }
}

fn finished(status: types::OperationStatus) -> bool {
    matches!(status, types::OperationStatus::Succeeded | types::OperationStatus::Failed)
}

/// The work on the cluster, its node pools and deployments, newest first,
/// each with its step and progress; `highlight` (an action's answer, from
/// `?operation=`) is marked.
#[component]
fn Operations(
    operations: Vec<types::OperationView>,
    highlight: Option<String>,
    base: String,
    older: Option<String>,
    paged: bool,
) -> impl IntoView {
    view! {
        <section aria-labelledby="operations-title">
            <h2 id="operations-title">"Operations"</h2>
            {if operations.is_empty() {
                view! { <p class="muted">"No operations yet."</p> }.into_any()
            } else {
                view! {
                    <table class="operations">
                        <caption class="visually-hidden">"Operations, newest first"</caption>
                        <thead><tr><th scope="col">"Operation"</th><th scope="col">"On"</th><th scope="col">"Status"</th><th scope="col">"Progress"</th><th scope="col">"Started"</th></tr></thead>
                        <tbody>
                            {operations.into_iter().map(|op| {
                                let current = highlight.as_deref() == Some(op.id.as_str());
                                let target = format!("{} {}", op.target.type_.replace('_', " "), op.target.name);
                                let error = op.error.as_ref().map(|e| e.message.clone());
                                view! {
                                    <tr class:current=current aria-current=current.then_some("true")>
                                        <td><a href=super::lifecycle::operation_path(op.id.as_str())><code>{op.kind.clone()}</code></a></td>
                                        <td>{target}</td>
                                        <td>{operation_chip(op.status)}</td>
                                        <td>
                                            <progress max="100" value=op.progress.to_string() aria-label=format!("{} {}%", op.kind, op.progress)>{format!("{}%", op.progress)}</progress>
                                            " " <span class="muted">{op.step.clone()}</span>
                                            {(op.status == types::OperationStatus::AwaitingApproval).then(|| view! {
                                                " " <a href=format!("/operations/{}/approval", op.id.as_str())>"Review the request"</a>
                                            })}
                                            {error.map(|message| view! { <p class="field-error">{message}</p> })}
                                        </td>
                                        <td><time datetime=op.created_at.to_rfc3339()>{ago(op.created_at)}</time></td>
                                    </tr>
                                }
                            }).collect_view()}
                        </tbody>
                    </table>
                }.into_any()
            }}
            <Pager base=base next=older paged=paged/>
        </section>
    }
}

/// Requested against allocatable CPU and memory, as bars (SVG, no script).
#[component]
fn Capacity(metrics: types::ClusterMetrics) -> impl IntoView {
    let bar = |label: &'static str, used: i64, total: i64, unit: &'static str| {
        let share = if total > 0 { (used as f64 / total as f64).clamp(0.0, 1.0) } else { 0.0 };
        let width = format!("{:.1}", share * 100.0);
        view! {
            <figure class="meter">
                <figcaption>{format!("{label}: {used} of {total} {unit} requested")}</figcaption>
                <svg viewBox="0 0 100 6" preserveAspectRatio="none" role="img" aria-label=format!("{label} {:.0}% requested", share * 100.0)>
                    <rect x="0" y="0" width="100" height="6" class="meter-track"/>
                    <rect x="0" y="0" width=width height="6" class="meter-fill"/>
                </svg>
            </figure>
        }
    };
    view! {
        <section aria-labelledby="capacity-title">
            <h2 id="capacity-title">"Capacity"</h2>
            <p>{format!("{} of {} nodes ready, {} of {} pods ready", metrics.ready_nodes, metrics.nodes, metrics.ready_pods, metrics.pods)}</p>
            {bar("CPU", metrics.requested_cpu_millis, metrics.allocatable_cpu_millis, "millicores")}
            {bar("Memory", metrics.requested_memory_mib, metrics.allocatable_memory_mib, "MiB")}
        </section>
    }
}

#[server(prefix = "/console/fn", endpoint = "cluster_credentials_revoke")]
pub async fn cluster_credentials_revoke(
    csrf: String,
    project: String,
    cluster: String,
    confirm: Option<String>,
) -> Result<(), ConsoleError> {
    let session = request_session();
    session.check_csrf(&csrf)?;
    Fields::ticked(&confirm, "Tick the box to confirm: every kubeconfig of this cluster stops working.")?;
    let api = session.api().await?;
    api.cluster_credentials_revoke().project(&project).cluster(&cluster).send().await?;
    session.redirect(&format!("{}/kubeconfig?revoked=1", cluster_path(&project, &cluster)));
    Ok(())
}

/// `/projects/:project/clusters/:cluster/kubeconfig`: download or view a
/// kubeconfig (an embedded client certificate), or revoke them all.
#[component]
pub fn Kubeconfig() -> impl IntoView {
    let revoke = ServerAction::<ClusterCredentialsRevoke>::new();
    let errors = FormErrors::new(action_error(revoke.value().get_untracked()), &["confirm"]);
    let (project, name) = (param("project"), param("cluster"));
    let path = cluster_path(&project, &name);
    let show = query("show").is_some();
    let revoked = query("revoked").is_some();
    let session = request_session();
    let shown = {
        let (session, project, name, path) = (session.clone(), project.clone(), name.clone(), path.clone());
        let file = format!("{name}-kubeconfig.yaml");
        Suspend::new(async move {
            let viewed = async {
                let api = session.api().await?;
                let cluster = api.cluster_view().project(&project).cluster(&name).send().await?.into_inner();
                let kubeconfig = if show {
                    Some(api.cluster_kubeconfig_view().project(&project).cluster(&name).send().await?.into_inner())
                } else {
                    None
                };
                Ok::<_, ConsoleError>((cluster, kubeconfig))
            };
            match viewed.await {
                Err(error) => error_view(&session, error),
                Ok((cluster, kubeconfig)) => view! {
                    <h1>{format!("Kubeconfig of {name}")}</h1>
                    <ClusterTabs project=project.clone() cluster=name.clone() current="kubeconfig"/>
                    <div class="live" role="status" aria-live="polite">
                        {revoked.then(|| view! { <div class="alert ok">"Every kubeconfig of this cluster has been revoked. Download a new one."</div> })}
                    </div>
                    {cluster.status.endpoint.is_none().then(|| view! {
                        <p class="alert">"The cluster has no endpoint yet; a kubeconfig works once it is running."</p>
                    })}
                    <p>"A kubeconfig holds a client certificate for you. Keep it like a password."</p>
                    <p class="actions">
                        <a class="button" href=format!("{path}/kubeconfig.yaml") download=file.clone()>{format!("Download {file}")}</a>
                        <a class="button secondary" href=format!("{path}/kubeconfig?show=1")>"View"</a>
                    </p>
                    <p class="hint">"Then: " <code>{format!("kubectl --kubeconfig {file} get nodes")}</code></p>
                    {kubeconfig.map(|k| view! {
                        <section aria-labelledby="yaml-title">
                            <h2 id="yaml-title">"Your kubeconfig"</h2>
                            <p class="hint">{format!("Groups: {}. ", k.groups.join(", "))}{k.expires_at.map(|at| format!("Valid until {}.", when(at)))}</p>
                            <label for="kubeconfig-yaml" class="visually-hidden">"Kubeconfig YAML"</label>
                            <textarea id="kubeconfig-yaml" readonly=true rows="16" spellcheck="false" data-copy="kubeconfig">{k.kubeconfig}</textarea>
                        </section>
                    })}
                    <section class="card danger" aria-labelledby="revoke-title">
                        <h2 id="revoke-title">"Revoke all kubeconfigs"</h2>
                        <p>"Every kubeconfig issued for this cluster, to anyone, stops working at once."</p>
                        <FormAlert errors=errors.clone()/>
                        <ActionForm action=revoke>
                            <Csrf/>
                            <input type="hidden" name="project" value=project.clone()/>
                            <input type="hidden" name="cluster" value=name.clone()/>
                            <Choice label="I understand that every kubeconfig of this cluster stops working" name="confirm" required=true errors=errors.clone()/>
                            <button type="submit" class="danger">"Revoke all"</button>
                        </ActionForm>
                    </section>
                }
                .into_any(),
            }
        })
    };
    let crumbs = vec![
        ("Projects".to_string(), "/projects".to_string()),
        (project.clone(), format!("/projects/{}", segment(&project))),
        (name.clone(), path.clone()),
    ];
    view! {
        <Frame title=format!("Kubeconfig of {name}") crumbs=crumbs>
            <Suspense fallback=|| ()>{shown}</Suspense>
        </Frame>
    }
}

/// `GET …/kubeconfig.yaml`: the kubeconfig as a file download.
pub(crate) async fn kubeconfig_download(
    axum::Extension(console): axum::Extension<Arc<Console>>,
    Path((project, cluster)): Path<(String, String)>,
    request: axum::extract::Request,
) -> Response {
    let (parts, _) = request.into_parts();
    let (session, response) = RequestSession::outside_leptos(console, &parts);
    let fetched = async {
        let api = session.api().await?;
        Ok::<_, ConsoleError>(
            api.cluster_kubeconfig_view().project(&project).cluster(&cluster).send().await?.into_inner(),
        )
    };
    let answer = match fetched.await {
        Ok(kubeconfig) => {
            let file: String =
                cluster.chars().filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_').collect();
            (
                [
                    (http::header::CONTENT_TYPE, "application/yaml".to_string()),
                    (http::header::CONTENT_DISPOSITION, format!("attachment; filename=\"{file}-kubeconfig.yaml\"")),
                    (http::header::CACHE_CONTROL, "no-store".to_string()),
                ],
                kubeconfig.kubeconfig,
            )
                .into_response()
        }
        Err(error) if error.status == 401 => {
            let next: String = form_urlencoded::byte_serialize(parts.uri.path().as_bytes()).collect();
            (http::StatusCode::SEE_OTHER, [(http::header::LOCATION, format!("/signin?next={next}"))]).into_response()
        }
        Err(error) => {
            let status = http::StatusCode::from_u16(error.status).unwrap_or(http::StatusCode::BAD_GATEWAY);
            let text = if error.is_not_found() {
                "Not found.".to_string()
            } else {
                format!("{}: {}", error.title, error.detail)
            };
            (status, text).into_response()
        }
    };
    RequestSession::with_cookie(&response, answer)
}

#[server(prefix = "/console/fn", endpoint = "cluster_delete")]
pub async fn cluster_delete(
    csrf: String,
    project: String,
    cluster: String,
    confirm: String,
) -> Result<(), ConsoleError> {
    let session = request_session();
    session.check_csrf(&csrf)?;
    Fields::typed(&confirm, &cluster, "Type the cluster's name exactly to delete it.")?;
    let api = session.api().await?;
    let op = api.cluster_delete().project(&project).cluster(&cluster).send().await?.into_inner();
    // The organization's policy may hold it: then it waits for someone else.
    match super::approvals::held(&serde_json::to_value(op).unwrap_or_default()) {
        Some(held) => session.redirect(&held),
        None => session.redirect(&format!("/projects/{}?deleted={}", segment(&project), segment(&cluster))),
    }
    Ok(())
}

#[server(prefix = "/console/fn", endpoint = "cluster_protection")]
pub async fn cluster_protection(
    csrf: String,
    project: String,
    cluster: String,
    enabled: String,
) -> Result<(), ConsoleError> {
    let session = request_session();
    session.check_csrf(&csrf)?;
    let api = session.api().await?;
    let body = types::ClusterUpdate {
        labels: None,
        spec: Some(types::ClusterSpecPatch { deletion_protection: Some(enabled == "true"), ..Default::default() }),
    };
    api.cluster_update().project(&project).cluster(&cluster).body(body).send().await?;
    session.redirect(&format!("{}/delete", cluster_path(&project, &cluster)));
    Ok(())
}

#[server(prefix = "/console/fn", endpoint = "cluster_upgrade")]
pub async fn cluster_upgrade(
    csrf: String,
    idempotency_key: String,
    project: String,
    cluster: String,
    kubernetes_version: String,
    confirm: Option<String>,
) -> Result<(), ConsoleError> {
    let session = request_session();
    session.check_csrf(&csrf)?;
    let mut fields = Fields::default();
    let version = fields.parse::<types::ClusterUpgradeRequestKubernetesVersion>(
        "kubernetes_version",
        &kubernetes_version,
        "Choose a version from the list.",
    );
    if confirm.is_none() {
        fields.problem("confirm", "Confirm that the nodes may be replaced.");
    }
    fields.finish()?;
    let body = types::ClusterUpgradeRequest { kubernetes_version: version.expect("finish() refused a missing field") };
    let api = session.api().await?;
    let op = api
        .cluster_upgrade()
        .project(&project)
        .cluster(&cluster)
        .idempotency_key(idempotency_key)
        .body(body)
        .send()
        .await?
        .into_inner();
    session.redirect(&format!("{}?operation={}", cluster_path(&project, &cluster), op.id.as_str()));
    Ok(())
}

/// Events on a page of a cluster's events.
const EVENTS_PER_PAGE: u32 = 50;

/// `/projects/:project/clusters/:cluster/events`: what happened in the
/// cluster, newest first (operation steps, phases, nodes joining and
/// leaving, the autoscaler's decisions), a page at a time.
#[component]
pub fn ClusterEvents() -> impl IntoView {
    let (project, name) = (param("project"), param("cluster"));
    let path = cluster_path(&project, &name);
    let page = query("page");
    let session = request_session();
    let content = {
        let (session, project, name, path) = (session.clone(), project.clone(), name.clone(), path.clone());
        Suspend::new(async move {
            let listed = async {
                let api = session.api().await?;
                let newest = || api.cluster_event_list().project(&project).cluster(&name).limit(EVENTS_PER_PAGE);
                let listed = match &page {
                    Some(token) => match newest().page_token(token.clone()).send().await {
                        Ok(listed) => listed,
                        // A stale or altered `?page=` shows the newest events, not an error page.
                        Err(_) => newest().send().await?,
                    },
                    None => newest().send().await?,
                };
                Ok::<_, ConsoleError>(listed.into_inner())
            };
            let events = match listed.await {
                Ok(events) => events,
                Err(error) => return error_view(&session, error),
            };
            let body = if events.items.is_empty() {
                view! { <p class="empty">"Nothing has happened in this cluster yet."</p> }.into_any()
            } else {
                view! {
                    <table>
                        <caption class="visually-hidden">"Cluster events, newest first"</caption>
                        <thead><tr><th scope="col">"When"</th><th scope="col">"What"</th><th scope="col">"On"</th><th scope="col">"Event"</th></tr></thead>
                        <tbody>
                            {events.items.into_iter().map(|event| view! {
                                <tr>
                                    <td>{when(event.at)}</td>
                                    <td>{event_kind(event.kind)}</td>
                                    <td>{format!("{} {}", event.resource_type.replace('_', " "), event.resource_name)}</td>
                                    <td>{event.message}</td>
                                </tr>
                            }).collect_view()}
                        </tbody>
                    </table>
                }
                .into_any()
            };
            view! {
                <h1>{format!("Events of {name}")}</h1>
                <ClusterTabs project=project.clone() cluster=name.clone() current="events"/>
                <p class="muted">"What happened in the cluster, newest first: operation steps, phase changes, nodes joining and leaving, and the autoscaler's decisions."</p>
                {body}
                <Pager base=format!("{path}/events") next=events.next_page paged=page.is_some()/>
            }
            .into_any()
        })
    };
    let crumbs = cluster_crumbs(&project, &name);
    view! {
        <Frame title=format!("Events of {name}") crumbs=crumbs>
            <Suspense fallback=|| ()>{content}</Suspense>
        </Frame>
    }
}

/// An event's kind as the events page names it.
fn event_kind(kind: types::ClusterEventKind) -> &'static str {
    match kind {
        types::ClusterEventKind::OperationStep => "Operation step",
        types::ClusterEventKind::PhaseChanged => "Phase changed",
        types::ClusterEventKind::NodeJoined => "Node joined",
        types::ClusterEventKind::NodeLeft => "Node left",
        types::ClusterEventKind::NodeReady => "Node ready",
        types::ClusterEventKind::NodeNotReady => "Node not ready",
        types::ClusterEventKind::Autoscaled => "Autoscaled",
    }
}

/// A release channel as the summary names it.
fn release_channel(channel: types::ReleaseChannel) -> &'static str {
    match channel {
        types::ReleaseChannel::None => "none (upgraded by hand)",
        types::ReleaseChannel::Rapid => "rapid",
        types::ReleaseChannel::Regular => "regular",
        types::ReleaseChannel::Stable => "stable",
    }
}

/// `/projects/:project/clusters/:cluster/upgrade`: the versions on offer
/// and what an upgrade does, confirmed before it starts.
#[component]
pub fn ClusterUpgrade() -> impl IntoView {
    let upgrade = ServerAction::<ClusterUpgrade>::new();
    let errors = FormErrors::new(action_error(upgrade.value().get_untracked()), &["kubernetes_version", "confirm"]);
    let (project, name) = (param("project"), param("cluster"));
    let preview = query("preview");
    let session = request_session();
    let content = {
        let (session, project, name) = (session.clone(), project.clone(), name.clone());
        Suspend::new(async move {
            let offered = async {
                let api = session.api().await?;
                Ok::<_, ConsoleError>(
                    api.cluster_upgrade_list().project(&project).cluster(&name).send().await?.into_inner(),
                )
            };
            let offered = match offered.await {
                Ok(offered) => offered,
                Err(error) => return error_view(&session, error),
            };
            let current = offered.current;
            let support = |support: types::VersionSupport| match support {
                types::VersionSupport::Supported => "supported",
                types::VersionSupport::Deprecated => "deprecated",
                types::VersionSupport::EndOfLife => "past its end of life",
            };
            let standing = format!(
                "The cluster runs Kubernetes {}, {} until {}.",
                current.version,
                support(current.support),
                current.end_of_life
            );
            let automatic = offered.automatic.map(|a| {
                let why = match a.reason {
                    types::AutomaticUpgradeReason::ReleaseChannel => "its release channel is on it".to_string(),
                    types::AutomaticUpgradeReason::EndOfLife => format!("{} is past its end of life", current.version),
                };
                let when = match (a.operation_id, a.noticed_at, a.earliest_start) {
                    (Some(_), _, _) => "It has started: follow it on the cluster's page.".to_string(),
                    (None, Some(told), Some(start)) => format!(
                        "The owners were told on {}; it starts no sooner than {} UTC, inside the maintenance window and outside every exclusion.",
                        told.format("%Y-%m-%d"),
                        start.format("%Y-%m-%d %H:%M")
                    ),
                    (None, Some(told), None) => format!(
                        "The owners were told on {}; no time inside the maintenance window and outside its exclusions comes within a year.",
                        told.format("%Y-%m-%d")
                    ),
                    (None, None, _) => "The owners are told first, well before it may start.".to_string(),
                };
                view! {
                    <section class="summary" aria-labelledby="automatic-title">
                        <h2 id="automatic-title">"Automatic upgrade"</h2>
                        <p>{format!("The cluster moves to Kubernetes {} on its own, because {why}. {when}", a.kubernetes_version)}</p>
                    </section>
                }
            });
            if offered.available.is_empty() {
                return view! {
                    <h1>{format!("Upgrade cluster {name}")}</h1>
                    <p>{standing}</p>
                    {automatic}
                    <p class="empty">"No newer version is offered yet: the cluster is up to date."</p>
                }
                .into_any();
            }
            let preview = preview.filter(|version| offered.available.iter().any(|v| v.version == *version));
            let planned = match &preview {
                None => None,
                Some(version) => match upgrade_plan(&session, &project, &name, version).await {
                    Ok(plan) => Some((version.clone(), plan)),
                    Err(error) => return error_view(&session, error),
                },
            };
            let choices: Vec<(String, String, bool)> = offered
                .available
                .iter()
                .map(|v| {
                    let chosen = preview.as_ref().map_or(v.default, |p| *p == v.version);
                    (
                        v.version.clone(),
                        format!("{} ({}, until {})", v.version, support(v.support), v.end_of_life),
                        chosen,
                    )
                })
                .collect();
            let preview_choices = choices.clone();
            let planned = planned.map(|(version, plan)| view! { <UpgradePlan version=version plan=plan/> });
            view! {
                <h1>{format!("Upgrade cluster {name}")}</h1>
                <p>{standing}</p>
                {automatic}
                <p>"An upgrade starts new API servers on the new version beside the old ones, moves traffic to them and retires the old ones. Then each node pool's nodes are replaced as its upgrade policy says (one at a time by default): new nodes join, old ones are cordoned and drained, their pods move, and they go. Follow the steps on the cluster's page."</p>
                <FormAlert errors=errors.clone()/>
                <ActionForm action=upgrade>
                    <Csrf/>
                    <IdempotencyKey/>
                    <input type="hidden" name="project" value=project.clone()/>
                    <input type="hidden" name="cluster" value=name.clone()/>
                    <Select label="New version" name="kubernetes_version" error_name="kubernetes_version" errors=errors.clone() options=choices/>
                    <Choice label="I understand that every node is replaced" name="confirm" required=true errors=errors.clone()/>
                    <button type="submit">"Upgrade"</button>
                </ActionForm>
                <form method="get" class="preview" aria-label="Preview an upgrade">
                    <Select label="Version to preview" name="preview" error_name="preview" errors=FormErrors::default() options=preview_choices/>
                    <button type="submit" class="secondary">"Preview the upgrade"</button>
                </form>
                {planned}
            }
            .into_any()
        })
    };
    let crumbs = cluster_crumbs(&project, &name);
    view! {
        <Frame title=format!("Upgrade cluster {name}") crumbs=crumbs>
            <Suspense fallback=|| ()>{content}</Suspense>
        </Frame>
    }
}

/// What upgrading cluster `name` to `version` would do, from a dry run of
/// the upgrade: checked as the upgrade itself (a refusal is its error), and
/// nothing changes.
async fn upgrade_plan(
    session: &RequestSession,
    project: &str,
    name: &str,
    version: &str,
) -> Result<types::DryRunView, ConsoleError> {
    let kubernetes_version = version
        .parse::<types::ClusterUpgradeRequestKubernetesVersion>()
        .map_err(|_| ConsoleError::new(404, "Not Found", "no such version is on offer"))?;
    let body = types::ClusterUpgradeRequest { kubernetes_version };
    let api = session.api().await?;
    Ok(api.dry_run(async |c| c.cluster_upgrade().project(project).cluster(name).body(body).send().await).await?)
}

/// A dry run's plan of an upgrade: the spec it changes and the steps it takes.
#[component]
fn UpgradePlan(version: String, plan: types::DryRunView) -> impl IntoView {
    view! {
        <section class="summary plan" aria-labelledby="plan-title">
            <h2 id="plan-title">{format!("What upgrading to {version} would do")}</h2>
            <p>"Checked as the upgrade itself would be, with your rights and the cluster as it is now; nothing has changed."</p>
            <PlannedOperations plan=plan/>
        </section>
    }
}

/// Each Operation of a dry run's plan: what changes in its target's spec,
/// and the steps it takes.
#[component]
pub(crate) fn PlannedOperations(plan: types::DryRunView) -> impl IntoView {
    let show = |value: &Option<serde_json::Value>| value.as_ref().map_or("nothing".to_string(), |v| v.to_string());
    plan.operations
        .into_iter()
        .map(|op| {
            let changes = (!op.diff.is_empty()).then(|| {
                let diff = op
                    .diff
                    .iter()
                    .map(|c| view! { <li><code>{c.path.clone()}</code>": "{show(&c.before)}" → "{show(&c.after)}</li> })
                    .collect_view();
                view! {
                    <p>"What changes in its spec:"</p>
                    <ul class="diff">{diff}</ul>
                }
            });
            let steps = op.steps.into_iter().map(|step| view! { <li>{step}</li> }).collect_view();
            let heading =
                format!("{} of {} {}", op.kind.replace('_', " "), op.target.type_.replace('_', " "), op.target.name);
            view! {
                <h3>{heading}</h3>
                {changes}
                <p>"The steps it takes:"</p>
                <ol class="steps">{steps}</ol>
            }
        })
        .collect_view()
}

/// `/projects/:project/clusters/:cluster/delete`: type the name to delete;
/// a protected cluster must have its protection turned off first.
#[component]
pub fn ClusterDelete() -> impl IntoView {
    let delete = ServerAction::<ClusterDelete>::new();
    let protection = ServerAction::<ClusterProtection>::new();
    let errors = FormErrors::new(action_error(delete.value().get_untracked()), &["confirm"]);
    let protection_errors = FormErrors::new(action_error(protection.value().get_untracked()), &[]);
    let (project, name) = (param("project"), param("cluster"));
    let session = request_session();
    let content = {
        let (session, project, name) = (session.clone(), project.clone(), name.clone());
        Suspend::new(async move {
            let viewed = async {
                let api = session.api().await?;
                Ok::<_, ConsoleError>(api.cluster_view().project(&project).cluster(&name).send().await?.into_inner())
            };
            match viewed.await {
                Err(error) => error_view(&session, error),
                Ok(cluster) if cluster.spec.deletion_protection => view! {
                    <h1>{format!("Delete cluster {name}")}</h1>
                    <p role="status">"Deletion protection is on: this cluster cannot be deleted until it is turned off."</p>
                    <FormAlert errors=protection_errors.clone()/>
                    <ActionForm action=protection>
                        <Csrf/>
                        <input type="hidden" name="project" value=project.clone()/>
                        <input type="hidden" name="cluster" value=name.clone()/>
                        <input type="hidden" name="enabled" value="false"/>
                        <button type="submit" class="secondary">"Turn deletion protection off"</button>
                    </ActionForm>
                }
                .into_any(),
                Ok(_) => view! {
                    <h1>{format!("Delete cluster {name}")}</h1>
                    <p>"Deleting the cluster removes its control plane, its node pools and every workload in it. This cannot be undone."</p>
                    <FormAlert errors=errors.clone()/>
                    <ActionForm action=delete>
                        <Csrf/>
                        <input type="hidden" name="project" value=project.clone()/>
                        <input type="hidden" name="cluster" value=name.clone()/>
                        <Field label=r#"Type the cluster's name to confirm"# name="confirm" autocomplete="off" required=true errors=errors.clone()/>
                        <button type="submit" class="danger">"Delete cluster"</button>
                    </ActionForm>
                }
                .into_any(),
            }
        })
    };
    let crumbs = cluster_crumbs(&project, &name);
    view! {
        <Frame title=format!("Delete cluster {name}") crumbs=crumbs>
            <Suspense fallback=|| ()>{content}</Suspense>
        </Frame>
    }
}

/// The breadcrumbs of a page in `project`: the projects, the project.
fn project_crumbs(project: &str) -> Vec<(String, String)> {
    vec![
        ("Projects".to_string(), "/projects".to_string()),
        (project.to_string(), format!("/projects/{}", segment(project))),
    ]
}

/// The breadcrumbs of a page of cluster `name`: the project's, then the cluster.
pub(crate) fn cluster_crumbs(project: &str, name: &str) -> Vec<(String, String)> {
    let mut crumbs = project_crumbs(project);
    crumbs.push((name.to_string(), cluster_path(project, name)));
    crumbs
}
