//! Nodes replaced through the public API against the simulated region:
//! a recycle of named nodes, an upgrade policy, a change of machine type,
//! and a node deleted with and without a replacement, each with every pod
//! still running.

use moke_api::model::{
    ClusterEventKind, ClusterEventView, DeploymentView, NodePoolView, NodeView, OperationStatus, OperationSteps,
    OperationView, Page,
};
use moke_region::{AgentConfig, Transport};
use reqwest::StatusCode;
use serde_json::json;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};

use crate::common::{BackgroundAgent, Client, TestApp, zones};

/// Follows `op` until it succeeds, checking at every poll that the
/// deployment at `deployment` keeps its three pods ready; the steps seen.
async fn follow(client: &Client<'_>, op: &OperationView, deployment: &str) -> Vec<String> {
    let mut seen: Vec<String> = Vec::new();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(90);
    loop {
        let now = client.operation(op.id).await;
        if seen.last() != Some(&now.step) {
            seen.push(now.step.clone());
        }
        let web: DeploymentView = client.get(deployment).await.expect(StatusCode::OK);
        assert!(web.status.ready_replicas >= 3, "no pod is lost: {:?} at {:?}", web.status, now.step);
        if now.status == OperationStatus::Succeeded {
            return seen;
        }
        assert_ne!(now.status, OperationStatus::Failed, "{now:?}");
        assert!(std::time::Instant::now() < deadline, "{} did not finish: {seen:?}", op.kind);
        tokio::time::sleep(std::time::Duration::from_millis(40)).await;
    }
}

/// The steps of `op`'s history, checked to be in time order.
async fn steps(client: &Client<'_>, op: &OperationView) -> Vec<String> {
    let history: OperationSteps = client.get(&format!("/v1/operations/{}/steps", op.id)).await.expect(StatusCode::OK);
    assert!(history.items.windows(2).all(|w| w[0].at <= w[1].at), "{history:?}");
    assert!(history.items.windows(2).all(|w| w[0].step != w[1].step), "no step twice in a row: {history:?}");
    history.items.into_iter().map(|s| s.step).collect()
}

async fn node_names(client: &Client<'_>, cluster_path: &str) -> Vec<String> {
    let nodes: Page<NodeView> = client.get(&format!("{cluster_path}/nodes")).await.expect(StatusCode::OK);
    nodes.items.into_iter().map(|n| n.name).collect()
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn nodes_are_recycled_resized_and_removed_without_losing_a_pod(
    options: PgPoolOptions,
    connect: PgConnectOptions,
) {
    let t = TestApp::start(options, connect).await;
    let _region = BackgroundAgent::start(
        AgentConfig::new("eu-central-1", zones("eu-central-1")),
        Transport::Postgres(t.pool.clone()),
    );
    let tenant = t.tenant("acme").await;
    let owner = t.client(&tenant);
    let project = owner.create_project("web").await.id.to_string();
    let (cluster, op) = owner.create_cluster(&project, "prod", json!({ "region": "eu-central-1" })).await;
    owner.succeeds(&op).await;
    let cluster = cluster.id.to_string();
    let (_, op) = owner.create_node_pool(&project, &cluster, "workers", 3).await;
    owner.succeeds(&op).await;
    let (deployment, op) = owner
        .create_deployment(&project, &cluster, "web", json!({ "image": "registry.example.com/web:1", "replicas": 3 }))
        .await;
    owner.succeeds(&op).await;
    let path = format!("/v1/projects/{project}/clusters/{cluster}");
    let pool_path = format!("{path}/node-pools/workers");
    let web = format!("{path}/namespaces/default/deployments/{}", deployment.id);
    let first = node_names(&owner, &path).await;
    assert_eq!(first.len(), 3);

    // Recycle: names the pool does not have are refused by index; a retry with the same key starts nothing new.
    let refused = owner
        .post::<OperationView>(&format!("{pool_path}/recycle"), json!({ "nodes": [first[0], "not-a-node"] }))
        .await
        .refused(StatusCode::BAD_REQUEST);
    assert_eq!(refused.fields(), ["nodes[1]"]);
    assert_eq!(refused.code_of("nodes[1]"), "unknown_node");
    let send = || {
        let request = owner.request(reqwest::Method::POST, &format!("{pool_path}/recycle"));
        owner
            .send::<OperationView>(request.header("idempotency-key", "recycle-1").json(&json!({ "nodes": [first[1]] })))
    };
    let op = send().await.expect(StatusCode::ACCEPTED);
    let recycle = op.id;
    assert_eq!(op.kind, "node_pool_recycle");
    assert_eq!(send().await.expect(StatusCode::ACCEPTED).id, op.id, "the retry answers the same Operation");
    // One node change of a pool at a time.
    let second = owner.post::<OperationView>(&format!("{pool_path}/recycle"), json!({})).await;
    second.refused_with(StatusCode::CONFLICT, "nodes_changing");
    follow(&owner, &op, &web).await;
    // Every step is in the Operation's history, in order, with its time.
    let history = steps(&owner, &op).await;
    let named = format!("node pool workers: replacing node(s) {}", first[1]);
    let draining = format!("node pool workers: node {} cordoned, draining", first[1]);
    let recycled = format!("node pool workers: node {} cordoned, drained and replaced", first[1]);
    let expected = ["queued", "accepted", named.as_str(), draining.as_str(), recycled.as_str(), "done"];
    assert_eq!(history, expected, "the steps name the node");
    let now = node_names(&owner, &path).await;
    assert_eq!(now.len(), 3);
    assert!(now.contains(&first[0]) && now.contains(&first[2]) && !now.contains(&first[1]), "{now:?}");

    // An upgrade policy: checked by field, then three surge nodes at once.
    let pool: NodePoolView = owner.get(&pool_path).await.expect(StatusCode::OK);
    assert_eq!((pool.spec.upgrade_policy.max_surge, pool.spec.upgrade_policy.max_unavailable), (1, 0), "the default");
    let stuck = json!({ "spec": { "upgrade_policy": { "max_surge": 0, "max_unavailable": 0 } } });
    let refused = owner.patch::<OperationView>(&pool_path, stuck).await.refused(StatusCode::BAD_REQUEST);
    assert_eq!(refused.code_of("spec.upgrade_policy"), "no_progress");
    let wide = json!({ "spec": { "upgrade_policy": { "max_surge": 11, "max_unavailable": 0 } } });
    let refused = owner.patch::<OperationView>(&pool_path, wide).await.refused(StatusCode::BAD_REQUEST);
    assert_eq!(refused.code_of("spec.upgrade_policy.max_surge"), "out_of_range");
    let faster = json!({ "spec": { "upgrade_policy": { "max_surge": 3, "max_unavailable": 0 } } });
    let op: OperationView = owner.patch(&pool_path, faster).await.expect(StatusCode::ACCEPTED);
    owner.succeeds(&op).await;
    assert_eq!(node_names(&owner, &path).await, now, "a policy alone replaces no node");
    // Surge nodes beyond the first are held against the quotas: 3 nodes and 2 more.
    assert_eq!(t.count("node_pools WHERE name = 'workers' AND reserved_nodes = 5").await, 1);

    // A new machine type: every node replaced onto it by surge, the pool kept.
    let op: OperationView =
        owner.patch(&pool_path, json!({ "spec": { "machine_type": "bm.medium" } })).await.expect(StatusCode::ACCEPTED);
    follow(&owner, &op, &web).await;
    let pool: NodePoolView = owner.get(&pool_path).await.expect(StatusCode::OK);
    assert_eq!(pool.spec.machine_type, "bm.medium");
    let nodes: Page<NodeView> = owner.get(&format!("{path}/nodes")).await.expect(StatusCode::OK);
    assert_eq!(nodes.items.len(), 3);
    assert!(nodes.items.iter().all(|n| !now.contains(&n.name)), "every node replaced: {nodes:?}");
    let medium_cpu = 32 * 1000 - 250;
    assert!(nodes.items.iter().all(|n| n.allocatable_cpu_millis == medium_cpu), "{nodes:?}");

    // A node deleted with a replacement: the count stays.
    let resized = node_names(&owner, &path).await;
    let op: OperationView =
        owner.delete(&format!("{pool_path}/nodes/{}?replace=true", resized[0])).await.expect(StatusCode::ACCEPTED);
    assert_eq!(op.kind, "node_pool_node_delete");
    follow(&owner, &op, &web).await;
    let now = node_names(&owner, &path).await;
    assert_eq!(now.len(), 3);
    assert!(!now.contains(&resized[0]), "{now:?}");

    // Without one: that very node goes and the count is one lower; asked twice, one Operation.
    let gone = now[1].clone();
    let op: OperationView = owner.delete(&format!("{pool_path}/nodes/{gone}")).await.expect(StatusCode::ACCEPTED);
    let again: OperationView = owner.delete(&format!("{pool_path}/nodes/{gone}")).await.expect(StatusCode::ACCEPTED);
    assert_eq!(again.id, op.id, "asked again while it goes: the same Operation, the count lowered once");
    follow(&owner, &op, &web).await;
    let history = steps(&owner, &op).await;
    assert!(history.contains(&format!("node pool workers: node {gone} cordoned, drained and removed")), "{history:?}");
    let pool: NodePoolView = owner.get(&pool_path).await.expect(StatusCode::OK);
    assert_eq!(pool.spec.count, 2);
    let left = node_names(&owner, &path).await;
    assert_eq!(left.len(), 2);
    assert!(!left.contains(&gone) && now.iter().filter(|n| **n != gone).all(|n| left.contains(n)), "{left:?}");
    owner.delete::<OperationView>(&format!("{pool_path}/nodes/{gone}")).await.refused(StatusCode::NOT_FOUND);

    // At the autoscaling minimum a node can only be replaced.
    let op: OperationView = owner
        .patch(&pool_path, json!({ "spec": { "autoscaling": { "min_count": 2, "max_count": 4 } } }))
        .await
        .expect(StatusCode::ACCEPTED);
    owner.succeeds(&op).await;
    let at_minimum = owner.delete::<OperationView>(&format!("{pool_path}/nodes/{}", left[0])).await;
    at_minimum.refused_with(StatusCode::CONFLICT, "at_minimum");

    let bad_name = owner.delete::<OperationView>(&format!("{pool_path}/nodes/Not_A_Node")).await;
    assert_eq!(bad_name.refused(StatusCode::BAD_REQUEST).fields(), ["node"]);

    // The project's operations, filtered by kind, target and status.
    let ops = format!("/v1/projects/{project}/operations");
    let recycles: Page<OperationView> =
        owner.get(&format!("{ops}?kind=node_pool_recycle")).await.expect(StatusCode::OK);
    assert_eq!(recycles.items.len(), 1);
    let pool: NodePoolView = owner.get(&pool_path).await.expect(StatusCode::OK);
    let on_pool: Page<OperationView> = owner.get(&format!("{ops}?target={}", pool.id)).await.expect(StatusCode::OK);
    let kinds: Vec<&str> = on_pool.items.iter().map(|o| o.kind.as_str()).collect();
    assert_eq!(
        kinds,
        [
            "node_pool_update",
            "node_pool_node_delete",
            "node_pool_node_delete",
            "node_pool_update",
            "node_pool_update",
            "node_pool_recycle",
            "node_pool_create"
        ],
        "newest first"
    );
    let first_two: Page<OperationView> =
        owner.get(&format!("{ops}?target={}&limit=2", pool.id)).await.expect(StatusCode::OK);
    let token = first_two.next_page.clone().expect("more than two");
    let rest: Page<OperationView> =
        owner.get(&format!("{ops}?target={}&page_token={token}", pool.id)).await.expect(StatusCode::OK);
    assert_eq!(first_two.items.len() + rest.items.len(), kinds.len(), "paged with the filter kept");
    let failed: Page<OperationView> = owner.get(&format!("{ops}?status=failed")).await.expect(StatusCode::OK);
    assert!(failed.items.is_empty());
    let all: Page<OperationView> = owner.get(&ops).await.expect(StatusCode::OK);
    assert!(
        all.items.iter().any(|o| o.kind == "cluster_create") && all.items.iter().any(|o| o.kind == "deployment_create")
    );
    let refused = owner.get::<Page<OperationView>>(&format!("{ops}?target=prj_0123")).await;
    assert_eq!(refused.refused(StatusCode::BAD_REQUEST).fields(), ["target"]);

    // The cluster's events tell the story: phases, nodes joining and leaving, operation steps.
    let events: Page<ClusterEventView> = owner.get(&format!("{path}/events?limit=500")).await.expect(StatusCode::OK);
    assert!(events.items.windows(2).all(|w| w[0].at >= w[1].at), "newest first");
    let said =
        |kind: ClusterEventKind, message: &str| events.items.iter().any(|e| e.kind == kind && e.message == message);
    assert!(said(ClusterEventKind::PhaseChanged, "phase pending -> running"), "{events:?}");
    assert!(said(ClusterEventKind::NodeLeft, &format!("node {} left", first[1])), "the recycled node left");
    assert!(said(ClusterEventKind::NodeLeft, &format!("node {gone} left")), "the removed node left");
    assert!(events.items.iter().any(|e| e.kind == ClusterEventKind::NodeJoined && e.resource_name == "workers"));
    let recycled_step =
        format!("node_pool_recycle running: node pool workers: node {} cordoned, drained and replaced", first[1]);
    let step = events.items.iter().find(|e| e.kind == ClusterEventKind::OperationStep && e.message == recycled_step);
    assert_eq!(step.and_then(|e| e.operation_id), Some(recycle), "the step names its Operation: {events:?}");
    let newest = events.items.first().unwrap().at;
    let since = (newest - chrono::Duration::milliseconds(1)).to_rfc3339_opts(chrono::SecondsFormat::Micros, true);
    let recent: Page<ClusterEventView> =
        owner.get(&format!("{path}/events?since={}", urlencoding(&since))).await.expect(StatusCode::OK);
    assert!(!recent.items.is_empty() && recent.items.iter().all(|e| e.at > newest - chrono::Duration::milliseconds(1)));
    let two: Page<ClusterEventView> = owner.get(&format!("{path}/events?limit=2")).await.expect(StatusCode::OK);
    let token = two.next_page.clone().expect("more than two events");
    let next: Page<ClusterEventView> =
        owner.get(&format!("{path}/events?limit=2&page_token={token}")).await.expect(StatusCode::OK);
    assert_eq!(next.items[0].message, events.items[2].message, "the next page goes on where the first ended");

    let audit: serde_json::Value = owner.get(&owner.org_path("/audit-events?limit=100")).await.expect(StatusCode::OK);
    let actions: Vec<&str> = audit["items"].as_array().unwrap().iter().filter_map(|e| e["action"].as_str()).collect();
    assert_eq!(actions.iter().filter(|a| **a == "node_pool.recycle").count(), 1, "{actions:?}");
    assert_eq!(actions.iter().filter(|a| **a == "node_pool.node_delete").count(), 2, "{actions:?}");
}

/// `text` for a query string (an RFC 3339 time's `+` and `:`).
fn urlencoding(text: &str) -> String {
    text.replace('+', "%2B").replace(':', "%3A")
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn the_autoscaler_grows_a_pool_for_pending_pods_and_shrinks_it_when_they_go(
    options: PgPoolOptions,
    connect: PgConnectOptions,
) {
    let t = TestApp::start(options, connect).await;
    let _region = BackgroundAgent::start(
        AgentConfig::new("eu-central-1", zones("eu-central-1")),
        Transport::Postgres(t.pool.clone()),
    );
    let tenant = t.tenant("acme").await;
    let owner = t.client(&tenant);
    let project = owner.create_project("web").await.id.to_string();
    let (cluster, op) = owner.create_cluster(&project, "prod", json!({ "region": "eu-central-1" })).await;
    owner.succeeds(&op).await;
    let path = format!("/v1/projects/{project}/clusters/{}", cluster.id);
    let pool = json!({ "name": "workers", "spec": {
        "machine_type": "bm.small", "count": 1, "autoscaling": { "min_count": 1, "max_count": 3 },
    } });
    let op: OperationView = owner.post(&format!("{path}/node-pools"), pool).await.expect(StatusCode::ACCEPTED);
    owner.succeeds(&op).await;
    assert_eq!(node_names(&owner, &path).await.len(), 1);

    // Three pods of 5 CPUs fit one to a node of 8: two pend, and the pool grows to three.
    let spec = json!({ "image": "registry.example.com/web:1", "replicas": 3, "resources": { "cpu_millis": 5000 } });
    let (deployment, op) = owner.create_deployment(&project, &cluster.id.to_string(), "web", spec).await;
    owner.succeeds(&op).await;
    assert_eq!(node_names(&owner, &path).await.len(), 3);
    let web = format!("{path}/namespaces/default/deployments/{}", deployment.id);
    let running: DeploymentView = owner.get(&web).await.expect(StatusCode::OK);
    assert_eq!(running.status.ready_replicas, 3);

    // A PATCH of the count (sent to the region) does not fight the autoscaler.
    let op: OperationView = owner
        .patch(&format!("{path}/node-pools/workers"), json!({ "spec": { "count": 2 } }))
        .await
        .expect(StatusCode::ACCEPTED);
    owner.succeeds(&op).await;
    assert_eq!(node_names(&owner, &path).await.len(), 3, "the autoscaler's size stays");

    // One pod left: the idle nodes are drained, down to the minimum.
    let op: OperationView = owner.post(&format!("{web}/scale"), json!({ "replicas": 1 })).await.ok();
    owner.succeeds(&op).await;
    crate::common::eventually(60, "the pool back at one node", async || node_names(&owner, &path).await.len() == 1)
        .await;

    // Each decision is a cluster event, beside the nodes joining and leaving.
    let events: Page<ClusterEventView> = owner.get(&format!("{path}/events?limit=500")).await.expect(StatusCode::OK);
    let scaled: Vec<&str> =
        events.items.iter().filter(|e| e.kind == ClusterEventKind::Autoscaled).map(|e| e.message.as_str()).collect();
    assert!(scaled.contains(&"autoscaler scaled up from 2 to 3 node(s): 1 pod(s) pending"), "{scaled:?}");
    assert!(scaled.iter().any(|m| m.starts_with("autoscaler scaled down from 2 to 1 node(s): node ")), "{scaled:?}");
}
