//! Node pools: adding one to a cluster, and one pool's page (its nodes,
//! size, autoscaling range, node labels and taints, and deletion).

use std::num::NonZeroU64;

use leptos::prelude::*;
use moke_sdk::types;

use super::account::Fields;
use super::clusters::{Select, cluster_path};
use super::workloads::ClusterTabs;
use super::{param, segment};
use crate::app::Frame;
use crate::error::ConsoleError;
use crate::session::request_session;
use crate::ui::{
    Csrf, Field, FormAlert, FormErrors, IdempotencyKey, NAME_PATTERN, StatusChip, TextArea, action_error, ago,
    error_view,
};

const LABELS_HINT: &str = "One key=value per line, e.g. workload=batch. Put on every node of the pool.";
const TAINTS_HINT: &str =
    "One key=value:Effect (or key:Effect) per line; Effect is NoSchedule, PreferNoSchedule or NoExecute.";

fn pool_path(project: &str, cluster: &str, pool: &str) -> String {
    format!("{}/node-pools/{}", cluster_path(project, cluster), segment(pool))
}

/// What the size part of a pool form says: a fixed count, or an
/// autoscaling range (then the count is kept inside it).
struct Size {
    count: Option<i64>,
    autoscaling: Option<types::Autoscaling>,
}

fn parse_size(fields: &mut Fields, count: &str, autoscale: bool, min: &str, max: &str) -> Size {
    let count = fields.parse::<i64>("spec.count", count, "Enter a number of nodes, 0 to 500.");
    if !autoscale {
        return Size { count, autoscaling: None };
    }
    let min_count = fields.parse::<i64>("spec.autoscaling.min_count", min, "Enter the fewest nodes, 0 to 500.");
    let max_count = fields.parse::<i64>("spec.autoscaling.max_count", max, "Enter the most nodes, 1 to 500.");
    match (min_count, max_count) {
        (Some(min_count), Some(max_count)) if min_count > max_count => {
            fields.problem("spec.autoscaling.min_count", "The fewest nodes cannot exceed the most.");
            Size { count, autoscaling: None }
        }
        (Some(min_count), Some(max_count)) => {
            let max = u64::try_from(max_count).ok().and_then(NonZeroU64::new);
            let Some(max) = max.filter(|_| min_count >= 0) else {
                fields.problem("spec.autoscaling.max_count", "The range is 0 to 500 nodes, at least 1 at most.");
                return Size { count, autoscaling: None };
            };
            Size {
                count: count.map(|count| count.clamp(min_count, max_count)),
                autoscaling: Some(types::Autoscaling { min_count, max_count: max }),
            }
        }
        _ => Size { count, autoscaling: None },
    }
}

/// `key=value` lines as node labels; a bad line is reported at the field.
fn parse_labels(fields: &mut Fields, text: &str) -> types::LabelMap {
    let mut labels = std::collections::HashMap::new();
    for (number, line) in text.lines().map(str::trim).enumerate().filter(|(_, line)| !line.is_empty()) {
        let Some((key, value)) = line.split_once('=') else {
            fields.problem("spec.node_labels", &format!("Line {}: write key=value.", number + 1));
            continue;
        };
        match value.trim().parse::<types::LabelMapValue>() {
            Ok(value) => {
                labels.insert(key.trim().to_string(), value);
            }
            Err(_) => fields.problem(
                "spec.node_labels",
                &format!("Line {}: a value is at most 63 letters, digits, '-', '_' or '.'.", number + 1),
            ),
        }
    }
    types::LabelMap(labels)
}

/// `key=value:Effect` lines as taints; a bad line is reported at the field.
fn parse_taints(fields: &mut Fields, text: &str) -> Vec<types::Taint> {
    let mut taints = Vec::new();
    for (number, line) in text.lines().map(str::trim).enumerate().filter(|(_, line)| !line.is_empty()) {
        let bad = |fields: &mut Fields| {
            fields.problem("spec.taints", &format!("Line {}: write key=value:Effect or key:Effect.", number + 1))
        };
        let Some((key_value, effect)) = line.rsplit_once(':') else {
            bad(fields);
            continue;
        };
        let (key, value) = match key_value.split_once('=') {
            Some((key, value)) => (key.trim(), Some(value.trim())),
            None => (key_value.trim(), None),
        };
        let key = key.parse::<types::TaintKey>();
        let value = value.filter(|v| !v.is_empty()).map(str::parse::<types::TaintValue>).transpose();
        let effect = effect.trim().parse::<types::TaintEffect>();
        match (key, value, effect) {
            (Ok(key), Ok(value), Ok(effect)) => taints.push(types::Taint { effect, key, value }),
            _ => bad(fields),
        }
    }
    taints
}

fn labels_text(labels: &types::LabelMap) -> String {
    let mut lines: Vec<_> = labels.iter().map(|(k, v)| format!("{k}={}", v.as_str())).collect();
    lines.sort();
    lines.join("\n")
}

fn taints_text(taints: &[types::Taint]) -> String {
    taints
        .iter()
        .map(|t| match &t.value {
            Some(value) => format!("{}={}:{}", t.key.as_str(), value.as_str(), t.effect.as_str()),
            None => format!("{}:{}", t.key.as_str(), t.effect.as_str()),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[allow(clippy::too_many_arguments)]
#[server(prefix = "/console/fn", endpoint = "node_pool_create")]
pub async fn node_pool_create(
    csrf: String,
    idempotency_key: String,
    project: String,
    cluster: String,
    name: String,
    machine_type: String,
    count: String,
    zones: Option<String>,
    autoscale: Option<String>,
    min_count: Option<String>,
    max_count: Option<String>,
    node_labels: Option<String>,
    taints: Option<String>,
) -> Result<(), ConsoleError> {
    let session = request_session();
    session.check_csrf(&csrf)?;
    let (zones, node_labels, taints) =
        (zones.unwrap_or_default(), node_labels.unwrap_or_default(), taints.unwrap_or_default());
    let (min_count, max_count) = (min_count.unwrap_or_default(), max_count.unwrap_or_default());
    let kept = [
        ("name", name.as_str()),
        ("machine_type", machine_type.as_str()),
        ("count", count.as_str()),
        ("zones", zones.as_str()),
        ("autoscale", autoscale.as_deref().unwrap_or_default()),
        ("min_count", min_count.as_str()),
        ("max_count", max_count.as_str()),
        ("node_labels", node_labels.as_str()),
        ("taints", taints.as_str()),
    ];
    let made = async {
        let mut fields = Fields::default();
        let pool_name = fields.parse::<types::NodePoolCreateName>(
            "name",
            &name,
            "Use 1-63 lowercase letters, digits or '-', starting with a letter.",
        );
        if machine_type.is_empty() {
            fields.problem("spec.machine_type", "Choose a machine type.");
        }
        let size = parse_size(&mut fields, &count, autoscale.is_some(), &min_count, &max_count);
        let labels = parse_labels(&mut fields, &node_labels);
        let taints = parse_taints(&mut fields, &taints);
        fields.finish()?;
        let zones: Vec<String> =
            zones.split([',', ' ']).map(str::trim).filter(|z| !z.is_empty()).map(String::from).collect();
        let pool_name = pool_name.expect("finish() refused a missing field");
        let path = pool_path(&project, &cluster, &pool_name);
        let body = types::NodePoolCreate {
            labels: None,
            name: pool_name.clone(),
            spec: types::NodePoolSpecInput {
                autoscaling: size.autoscaling,
                count: size.count.expect("finish() refused a missing field"),
                machine_type: machine_type.clone(),
                node_labels: (!labels.is_empty()).then_some(labels),
                taints,
                upgrade_policy: None,
                zones: (!zones.is_empty()).then_some(zones),
            },
        };
        session
            .api()
            .await?
            .node_pool_create()
            .project(&project)
            .cluster(&cluster)
            .idempotency_key(idempotency_key)
            .body(body)
            .send()
            .await?;
        session.redirect(&format!("{path}?created=1"));
        Ok(())
    };
    made.await.map_err(|e: ConsoleError| e.keep(&kept))
}

/// `/projects/:project/clusters/:cluster/node-pools/new`.
#[component]
pub fn NodePoolNew() -> impl IntoView {
    let action = ServerAction::<NodePoolCreate>::new();
    let order = [
        "name",
        "spec.machine_type",
        "spec.count",
        "spec.zones",
        "spec.autoscaling.min_count",
        "spec.autoscaling.max_count",
        "spec.node_labels",
        "spec.taints",
    ];
    let errors = FormErrors::new(action_error(action.value().get_untracked()), &order);
    let (project, cluster) = (param("project"), param("cluster"));
    let session = request_session();
    let form = {
        let (session, project, cluster) = (session.clone(), project.clone(), cluster.clone());
        Suspend::new(async move {
            let fetched = async {
                let api = session.api().await?;
                let viewed = api.cluster_view().project(&project).cluster(&cluster).send().await?.into_inner();
                let (machines, regions) = futures::try_join!(
                    async { api.machine_type_list().send().await.map_err(ConsoleError::from) },
                    async { api.region_list().send().await.map_err(ConsoleError::from) },
                )?;
                let zones = regions
                    .into_inner()
                    .into_iter()
                    .find(|r| r.name == viewed.spec.region)
                    .map(|r| r.zones.join(", "))
                    .unwrap_or_default();
                Ok::<_, ConsoleError>((machines.into_inner(), zones))
            };
            let (machines, zones) = match fetched.await {
                Ok(data) => data,
                Err(error) => return error_view(&session, error),
            };
            view! {
                <h1>"Add a node pool"</h1>
                <ClusterTabs project=project.clone() cluster=cluster.clone() current="overview"/>
                <FormAlert errors=errors.clone()/>
                <ActionForm action=action>
                    <Csrf/>
                    <IdempotencyKey/>
                    <input type="hidden" name="project" value=project.clone()/>
                    <input type="hidden" name="cluster" value=cluster.clone()/>
                    <Field label="Name" name="name" pattern=NAME_PATTERN hint="e.g. pool-2 or gpu" required=true errors=errors.clone()/>
                    <Select label="Machine type" name="machine_type" error_name="spec.machine_type" errors=errors.clone()
                        options=machines.iter().map(|m| (m.name.clone(), format!("{}: {} vCPU, {} GiB", m.name, m.vcpus, m.memory_gib), false)).collect()/>
                    <Field label="Nodes" name="count" error_name="spec.count" kind="number" value="3" min="0" max="500" required=true
                        hint="Fewer than 3 nodes leave no room to move workloads during upgrades and repairs." errors=errors.clone()/>
                    <Field label="Zones (optional)" name="zones" error_name="spec.zones" placeholder="spread over all zones"
                        hint="Comma-separated; this cluster's region has the zones listed below." errors=errors.clone()/>
                    <p class="hint">{zones}</p>
                    <fieldset>
                        <legend>"Autoscaling (optional)"</legend>
                        <div class="choice">
                            <input type="checkbox" id="field-autoscale" name="autoscale" value="on" checked=errors.value("autoscale").is_some_and(|v| v == "on")/>
                            <label for="field-autoscale">"Let the autoscaler choose the size within this range"</label>
                        </div>
                        <Field label="Fewest nodes" name="min_count" error_name="spec.autoscaling.min_count" kind="number" value="1" min="0" max="500" errors=errors.clone()/>
                        <Field label="Most nodes" name="max_count" error_name="spec.autoscaling.max_count" kind="number" value="5" min="1" max="500" errors=errors.clone()/>
                    </fieldset>
                    <TextArea label="Node labels (optional)" name="node_labels" error_name="spec.node_labels" hint=LABELS_HINT rows=3 optional=true errors=errors.clone()/>
                    <TextArea label="Taints (optional)" name="taints" error_name="spec.taints" hint=TAINTS_HINT rows=3 optional=true errors=errors.clone()/>
                    <button type="submit">"Add node pool"</button>
                </ActionForm>
            }
            .into_any()
        })
    };
    let crumbs = vec![
        ("Projects".to_string(), "/projects".to_string()),
        (project.clone(), format!("/projects/{}", segment(&project))),
        (cluster.clone(), cluster_path(&project, &cluster)),
    ];
    view! {
        <Frame title="Add a node pool" crumbs=crumbs>
            <Suspense fallback=|| ()>{form}</Suspense>
        </Frame>
    }
}

#[allow(clippy::too_many_arguments)]
#[server(prefix = "/console/fn", endpoint = "node_pool_update")]
pub async fn node_pool_update(
    csrf: String,
    project: String,
    cluster: String,
    node_pool: String,
    count: String,
    autoscale: Option<String>,
    min_count: Option<String>,
    max_count: Option<String>,
    node_labels: Option<String>,
    taints: Option<String>,
    max_surge: Option<String>,
    max_unavailable: Option<String>,
) -> Result<(), ConsoleError> {
    let session = request_session();
    session.check_csrf(&csrf)?;
    let (node_labels, taints) = (node_labels.unwrap_or_default(), taints.unwrap_or_default());
    let (max_surge, max_unavailable) = (max_surge.unwrap_or_default(), max_unavailable.unwrap_or_default());
    let (min_count, max_count) = (min_count.unwrap_or_default(), max_count.unwrap_or_default());
    let kept = [
        ("count", count.as_str()),
        ("autoscale", autoscale.as_deref().unwrap_or_default()),
        ("min_count", min_count.as_str()),
        ("max_count", max_count.as_str()),
        ("node_labels", node_labels.as_str()),
        ("taints", taints.as_str()),
        ("max_surge", max_surge.as_str()),
        ("max_unavailable", max_unavailable.as_str()),
    ];
    let updated = async {
        let mut fields = Fields::default();
        let autoscale = autoscale.is_some();
        let size = parse_size(&mut fields, &count, autoscale, &min_count, &max_count);
        let labels = parse_labels(&mut fields, &node_labels);
        let taints = parse_taints(&mut fields, &taints);
        let surge = fields.parse::<i64>("spec.upgrade_policy.max_surge", &max_surge, "Enter 0 to 10 nodes.");
        let unavailable =
            fields.parse::<i64>("spec.upgrade_policy.max_unavailable", &max_unavailable, "Enter 0 to 10 nodes.");
        fields.finish()?;
        let upgrade_policy = surge
            .zip(unavailable)
            .map(|(max_surge, max_unavailable)| types::UpgradePolicy { max_surge, max_unavailable });
        let spec = types::NodePoolSpecPatch {
            autoscaling: size.autoscaling,
            count: size.count,
            node_labels: Some(labels),
            taints: Some(taints),
            upgrade_policy,
            ..Default::default()
        };
        let api = session.api().await?;
        let op: serde_json::Value = if autoscale {
            let body = types::NodePoolUpdate { labels: None, spec: Some(spec) };
            let op = api.node_pool_update().project(&project).cluster(&cluster).node_pool(&node_pool).body(body);
            serde_json::to_value(op.send().await?.into_inner()).unwrap_or_default()
        } else {
            // Turning autoscaling off is an explicit `null`, which the SDK's
            // Rust types cannot send.
            let mut spec = serde_json::to_value(&spec).map_err(|_| ConsoleError::invalid(Vec::new()))?;
            spec["autoscaling"] = serde_json::Value::Null;
            let path = format!(
                "/v1/projects/{}/clusters/{}/node-pools/{}",
                moke_sdk::encode_path(&project),
                moke_sdk::encode_path(&cluster),
                moke_sdk::encode_path(&node_pool)
            );
            api.patch_json(&path, &serde_json::json!({ "spec": spec }), None).await?
        };
        if let Some(held) = super::approvals::held(&op) {
            session.redirect(&held);
            return Ok(());
        }
        session.redirect(&format!("{}?saved=1", pool_path(&project, &cluster, &node_pool)));
        Ok(())
    };
    updated.await.map_err(|e: ConsoleError| {
        // "Not both 0" is a rule over the two numbers: shown at the second.
        e.shown_at("spec.upgrade_policy", "spec.upgrade_policy.max_unavailable").keep(&kept)
    })
}

#[server(prefix = "/console/fn", endpoint = "node_pool_delete")]
pub async fn node_pool_delete(
    csrf: String,
    project: String,
    cluster: String,
    node_pool: String,
    confirm: String,
) -> Result<(), ConsoleError> {
    let session = request_session();
    session.check_csrf(&csrf)?;
    Fields::typed(&confirm, &node_pool, "Type the node pool's name exactly to delete it.")?;
    let api = session.api().await?;
    let op = api.node_pool_delete().project(&project).cluster(&cluster).node_pool(&node_pool).send().await?;
    match super::approvals::held(&serde_json::to_value(op.into_inner()).unwrap_or_default()) {
        Some(held) => session.redirect(&held),
        None => session.redirect(&format!("{}?pool_deleted=1", cluster_path(&project, &cluster))),
    }
    Ok(())
}

/// Replaces the pool's nodes by surge (`nodes` = `all`), or one of them.
#[server(prefix = "/console/fn", endpoint = "node_pool_recycle")]
pub async fn node_pool_recycle(
    csrf: String,
    idempotency_key: String,
    project: String,
    cluster: String,
    node_pool: String,
    nodes: String,
    recycle_confirm: Option<String>,
) -> Result<(), ConsoleError> {
    let session = request_session();
    session.check_csrf(&csrf)?;
    let mut fields = Fields::default();
    let chosen = match nodes.as_str() {
        "all" => None,
        one => fields.parse::<types::NodeNamesItem>("nodes", one, "Choose a node of the pool.").map(|n| vec![n]),
    };
    if recycle_confirm.is_none() {
        fields.problem("recycle_confirm", "Confirm that the nodes may be drained and replaced.");
    }
    fields.finish().map_err(|e| e.keep(&[("nodes", nodes.as_str())]))?;
    let body = types::NodePoolRecycleRequest { nodes: chosen.map(types::NodeNames) };
    let api = session.api().await?;
    let op = api
        .node_pool_recycle()
        .project(&project)
        .cluster(&cluster)
        .node_pool(&node_pool)
        .idempotency_key(idempotency_key)
        .body(body)
        .send()
        .await?
        .into_inner();
    session.redirect(&super::lifecycle::operation_path(op.id.as_str()));
    Ok(())
}

/// Drains and removes one node, with a replacement or lowering the count.
#[server(prefix = "/console/fn", endpoint = "node_pool_node_delete")]
pub async fn node_pool_node_delete(
    csrf: String,
    project: String,
    cluster: String,
    node_pool: String,
    node: String,
    replace: Option<String>,
    remove_confirm: Option<String>,
) -> Result<(), ConsoleError> {
    let session = request_session();
    session.check_csrf(&csrf)?;
    let mut fields = Fields::default();
    let chosen = fields.parse::<types::NodePoolNodeDeleteNode>("node", &node, "Choose a node of the pool.");
    if remove_confirm.is_none() {
        fields.problem("remove_confirm", "Confirm that the node may be drained and removed.");
    }
    fields.finish().map_err(|e| e.keep(&[("node", node.as_str())]))?;
    let api = session.api().await?;
    let op = api
        .node_pool_node_delete()
        .project(&project)
        .cluster(&cluster)
        .node_pool(&node_pool)
        .node(chosen.expect("finish() refused a missing field"))
        .replace(replace.is_some())
        .send()
        .await?
        .into_inner();
    // Removing a node without a replacement may wait for an approver.
    session.redirect(&super::lifecycle::after_change(op));
    Ok(())
}

/// `/projects/:project/clusters/:cluster/node-pools/:node_pool`.
#[component]
pub fn NodePool() -> impl IntoView {
    let update = ServerAction::<NodePoolUpdate>::new();
    let delete = ServerAction::<NodePoolDelete>::new();
    let order = [
        "spec.count",
        "spec.autoscaling.min_count",
        "spec.autoscaling.max_count",
        "spec.node_labels",
        "spec.taints",
        "spec.upgrade_policy.max_surge",
        "spec.upgrade_policy.max_unavailable",
    ];
    let update_errors = FormErrors::new(action_error(update.value().get_untracked()), &order);
    let delete_errors = FormErrors::new(action_error(delete.value().get_untracked()), &["confirm"]);
    let recycle = ServerAction::<NodePoolRecycle>::new();
    let recycle_errors = FormErrors::new(action_error(recycle.value().get_untracked()), &["nodes", "recycle_confirm"]);
    let remove = ServerAction::<NodePoolNodeDelete>::new();
    let remove_errors = FormErrors::new(action_error(remove.value().get_untracked()), &["node", "remove_confirm"]);
    let (project, cluster, name) = (param("project"), param("cluster"), param("node_pool"));
    let notice = if super::query("created").is_some() {
        Some("The node pool is being created.")
    } else if super::query("saved").is_some() {
        Some("Saved: the region is applying the change.")
    } else {
        None
    };
    let session = request_session();
    let content = {
        let (session, project, cluster, name) = (session.clone(), project.clone(), cluster.clone(), name.clone());
        Suspend::new(async move {
            let fetched = async {
                let api = session.api().await?;
                let pool = api
                    .node_pool_view()
                    .project(&project)
                    .cluster(&cluster)
                    .node_pool(&name)
                    .send()
                    .await?
                    .into_inner();
                let nodes = api
                    .cluster_node_list()
                    .project(&project)
                    .cluster(&cluster)
                    .limit(500u32)
                    .send()
                    .await
                    .map(|n| n.into_inner().items)
                    .unwrap_or_default();
                Ok::<_, ConsoleError>((pool, nodes))
            };
            let (pool, nodes) = match fetched.await {
                Ok(data) => data,
                Err(error) => return error_view(&session, error),
            };
            let nodes: Vec<_> = nodes.into_iter().filter(|n| n.node_pool == pool.name).collect();
            let node_names: Vec<String> = nodes.iter().map(|n| n.name.clone()).collect();
            let mut every = vec![("all".to_string(), "Every node, one at a time".to_string(), true)];
            every.extend(node_names.iter().map(|n| (n.clone(), n.clone(), false)));
            let one: Vec<_> = node_names.iter().enumerate().map(|(i, n)| (n.clone(), n.clone(), i == 0)).collect();
            let has_nodes = !node_names.is_empty();
            let (n3, n4) = (pool.name.clone(), pool.name.clone());
            let (p3, p4, c3, c4) = (project.clone(), project.clone(), cluster.clone(), cluster.clone());
            let autoscaling = pool.spec.autoscaling.clone();
            // After a refused change, as the person left it.
            let autoscale_ticked = if update_errors.is_empty() {
                autoscaling.is_some()
            } else {
                update_errors.value("autoscale").is_some_and(|v| v == "on")
            };
            let (min, max) = autoscaling.as_ref().map_or((1, 5), |a| (a.min_count, a.max_count.get()));
            let labels = labels_text(&pool.spec.node_labels);
            let taints = taints_text(&pool.spec.taints);
            let (n1, n2) = (pool.name.clone(), pool.name.clone());
            let (p1, p2, c1, c2) = (project.clone(), project.clone(), cluster.clone(), cluster.clone());
            view! {
                <h1>{format!("Node pool {}", pool.name)}</h1>
                <ClusterTabs project=project.clone() cluster=cluster.clone() current="overview"/>
                <section class="summary" aria-label="Summary">
                    <dl>
                        <div><dt>"Status"</dt><dd><StatusChip phase=pool.status.phase.clone() stale=pool.status.stale/></dd></div>
                        <div><dt>"Machine type"</dt><dd>{pool.spec.machine_type.clone()}</dd></div>
                        <div><dt>"Nodes"</dt><dd>{pool.spec.count}</dd></div>
                        <div><dt>"Autoscaling"</dt><dd>{match &autoscaling {
                            Some(a) => format!("{} to {} nodes", a.min_count, a.max_count),
                            None => "off".to_string(),
                        }}</dd></div>
                        <div><dt>"Zones"</dt><dd>{pool.spec.zones.join(", ")}</dd></div>
                        <div><dt>"Created"</dt><dd>{ago(pool.created_at)}</dd></div>
                    </dl>
                </section>
                <section aria-labelledby="pool-nodes-title">
                    <h2 id="pool-nodes-title">"Nodes"</h2>
                    {if nodes.is_empty() {
                        view! { <p class="muted">"No nodes of this pool have joined yet."</p> }.into_any()
                    } else {
                        view! {
                            <table>
                                <caption class="visually-hidden">"Nodes of the pool"</caption>
                                <thead><tr><th scope="col">"Name"</th><th scope="col">"Zone"</th><th scope="col">"Ready"</th><th scope="col">"Pods"</th></tr></thead>
                                <tbody>
                                    {nodes.into_iter().map(|node| view! {
                                        <tr>
                                            <td>{node.name}</td>
                                            <td>{node.zone}</td>
                                            <td>{if node.ready { "yes" } else { "no" }}{if node.unschedulable { " (cordoned)" } else { "" }}</td>
                                            <td>{node.pods}</td>
                                        </tr>
                                    }).collect_view()}
                                </tbody>
                            </table>
                        }.into_any()
                    }}
                </section>
                <section class="card" aria-labelledby="edit-title">
                    <h2 id="edit-title">"Size, labels and taints"</h2>
                    <FormAlert errors=update_errors.clone()/>
                    <ActionForm action=update>
                        <Csrf/>
                        <input type="hidden" name="project" value=p1/>
                        <input type="hidden" name="cluster" value=c1/>
                        <input type="hidden" name="node_pool" value=n1/>
                        <Field label="Nodes" name="count" error_name="spec.count" kind="number" min="0" max="500" required=true
                            value=pool.spec.count.to_string() hint="With autoscaling on, the autoscaler moves this within its range."
                            errors=update_errors.clone()/>
                        <fieldset>
                            <legend>"Autoscaling"</legend>
                            <div class="choice">
                                <input type="checkbox" id="field-autoscale" name="autoscale" value="on" checked=autoscale_ticked/>
                                <label for="field-autoscale">"Let the autoscaler choose the size within this range"</label>
                            </div>
                            <Field label="Fewest nodes" name="min_count" error_name="spec.autoscaling.min_count" kind="number" min="0" max="500"
                                value=min.to_string() errors=update_errors.clone()/>
                            <Field label="Most nodes" name="max_count" error_name="spec.autoscaling.max_count" kind="number" min="1" max="500"
                                value=max.to_string() errors=update_errors.clone()/>
                        </fieldset>
                        <TextArea label="Node labels" name="node_labels" error_name="spec.node_labels" hint=LABELS_HINT rows=3 optional=true
                            value=labels errors=update_errors.clone()/>
                        <TextArea label="Taints" name="taints" error_name="spec.taints" hint=TAINTS_HINT rows=3 optional=true
                            value=taints errors=update_errors.clone()/>
                        <fieldset>
                            <legend>"Replacing nodes (upgrades, recycles, machine-type changes)"</legend>
                            <Field label="Extra nodes at once (surge)" name="max_surge" error_name="spec.upgrade_policy.max_surge" kind="number" min="0" max="10"
                                value=pool.spec.upgrade_policy.max_surge.to_string() errors=update_errors.clone()/>
                            <Field label="Nodes down at once (unavailable)" name="max_unavailable" error_name="spec.upgrade_policy.max_unavailable" kind="number" min="0" max="10"
                                value=pool.spec.upgrade_policy.max_unavailable.to_string() hint="Not both 0: a replacement needs room to move."
                                errors=update_errors.clone()/>
                        </fieldset>
                        <button type="submit">"Save"</button>
                    </ActionForm>
                </section>
                {has_nodes.then(|| view! {
                    <section class="card" aria-labelledby="replace-title">
                        <h2 id="replace-title">"Replace nodes"</h2>
                        <p>"Each node is cordoned and drained, and a new one takes its place within the pool's surge and unavailability limits."</p>
                        <FormAlert errors=recycle_errors.clone()/>
                        <ActionForm action=recycle>
                            <Csrf/>
                            <IdempotencyKey/>
                            <input type="hidden" name="project" value=p3/>
                            <input type="hidden" name="cluster" value=c3/>
                            <input type="hidden" name="node_pool" value=n3/>
                            <Select label="Nodes to replace" name="nodes" error_name="nodes" errors=recycle_errors.clone() options=every/>
                            <crate::ui::Choice label="Drain and replace them" name="recycle_confirm" errors=recycle_errors.clone() required=true/>
                            <button type="submit" class="secondary">"Replace"</button>
                        </ActionForm>
                        <h3>"Remove one node"</h3>
                        <FormAlert errors=remove_errors.clone()/>
                        <ActionForm action=remove>
                            <Csrf/>
                            <input type="hidden" name="project" value=p4/>
                            <input type="hidden" name="cluster" value=c4/>
                            <input type="hidden" name="node_pool" value=n4/>
                            <Select label="Node to remove" name="node" error_name="node" errors=remove_errors.clone() options=one/>
                            <div class="choice">
                                <input type="checkbox" id="field-replace" name="replace" value="yes" checked=true/>
                                <label for="field-replace">"Add a replacement (else the pool shrinks by one)"</label>
                            </div>
                            <crate::ui::Choice label="Drain and remove this node" name="remove_confirm" errors=remove_errors.clone() required=true/>
                            <button type="submit" class="danger">"Remove the node"</button>
                        </ActionForm>
                    </section>
                })}
                <section class="card danger" aria-labelledby="delete-pool-title">
                    <h2 id="delete-pool-title">"Delete this node pool"</h2>
                    <p>"Its nodes are drained and removed; workloads move to the cluster's other pools if they fit."</p>
                    <FormAlert errors=delete_errors.clone()/>
                    <ActionForm action=delete>
                        <Csrf/>
                        <input type="hidden" name="project" value=p2/>
                        <input type="hidden" name="cluster" value=c2/>
                        <input type="hidden" name="node_pool" value=n2/>
                        <Field label=r#"Type the node pool's name to confirm"# name="confirm" autocomplete="off" required=true errors=delete_errors.clone()/>
                        <button type="submit" class="danger">"Delete node pool"</button>
                    </ActionForm>
                </section>
            }
            .into_any()
        })
    };
    let crumbs = vec![
        ("Projects".to_string(), "/projects".to_string()),
        (project.clone(), format!("/projects/{}", segment(&project))),
        (cluster.clone(), cluster_path(&project, &cluster)),
    ];
    view! {
        <Frame title=format!("Node pool {name}") crumbs=crumbs>
            <div class="live" role="status" aria-live="polite">
                {notice.map(|notice| view! { <div class="alert ok">{notice}</div> })}
            </div>
            <Suspense fallback=|| ()>{content}</Suspense>
        </Frame>
    }
}
