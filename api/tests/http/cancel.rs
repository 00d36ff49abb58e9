//! Cancelling a spec change: before the region received it (taken back,
//! nothing for the region to do) and between steps (the region converges
//! back, undoing what it did), with what may not be cancelled refused.

use moke_api::model::{
    AuditEventView, ClusterRevisionView, NodePoolView, NodeView, OperationStatus, OperationSteps, OperationView, Page,
    SpecDiff,
};
use moke_region::{Agent, AgentConfig, Transport};
use reqwest::StatusCode;
use serde_json::{Value, json};
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};

use crate::common::{Client, TestApp, zones};

/// Lets the region take its commands and move one tick at a time (the
/// gateway ingests on its own) until `done` holds.
pub async fn drive(region: &Agent, what: &str, mut done: impl AsyncFnMut() -> bool) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !done().await {
        assert!(std::time::Instant::now() < deadline, "{what}: not reached");
        region.run_once().await.unwrap();
        region.tick().await.unwrap();
        tokio::time::sleep(std::time::Duration::from_millis(30)).await;
    }
}

pub async fn finished(client: &Client<'_>, op: &OperationView, status: OperationStatus) -> bool {
    let now = client.operation(op.id).await;
    assert!(!now.status.is_terminal() || now.status == status, "{now:?}");
    now.status == status
}

async fn steps(client: &Client<'_>, op: &OperationView) -> Vec<String> {
    let history: OperationSteps = client.get(&format!("/v1/operations/{}/steps", op.id)).await.expect(StatusCode::OK);
    history.items.into_iter().map(|s| s.step).collect()
}

/// The newest Operation of `kind` on `target`.
async fn newest(client: &Client<'_>, project: &str, target: &str, kind: &str) -> OperationView {
    let ops: Page<OperationView> = client
        .get(&format!("/v1/projects/{project}/operations?target={target}&kind={kind}"))
        .await
        .expect(StatusCode::OK);
    ops.items.into_iter().next().expect("an operation")
}

/// The simulated region, moved by [`drive`] only.
pub fn region(t: &TestApp) -> Agent {
    Agent::new(AgentConfig::new("eu-central-1", zones("eu-central-1")), Transport::Postgres(t.pool.clone())).unwrap()
}

/// Project `web`, its cluster `prod` and pool `workers` of `count` nodes, driven until they run.
pub async fn cluster_with_pool(
    region: &Agent,
    owner: &Client<'_>,
    count: i64,
) -> (String, moke_api::model::ClusterView, NodePoolView) {
    let project = owner.create_project("web").await.id.to_string();
    let (cluster, create) = owner.create_cluster(&project, "prod", json!({ "region": "eu-central-1" })).await;
    drive(region, "cluster created", async || finished(owner, &create, OperationStatus::Succeeded).await).await;
    let (pool, create) = owner.create_node_pool(&project, &cluster.id.to_string(), "workers", count).await;
    drive(region, "pool created", async || finished(owner, &create, OperationStatus::Succeeded).await).await;
    (project, cluster, pool)
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn a_change_the_region_never_received_is_taken_back(options: PgPoolOptions, connect: PgConnectOptions) {
    // No region agent runs: the commands wait in the gateway's queue.
    let t = TestApp::start(options, connect).await;
    let tenant = t.tenant("acme").await;
    let owner = t.client(&tenant);
    let project = owner.create_project("web").await.id.to_string();
    let (cluster, create) =
        owner.create_cluster(&project, "prod", json!({ "region": "eu-central-1", "kubernetes_version": "1.32" })).await;
    let path = format!("/v1/projects/{project}/clusters/{}", cluster.id);
    let cancel = |op: &OperationView| format!("/v1/operations/{}/cancel", op.id);

    // What is not a spec change is refused with the reason.
    let refused = owner.post::<OperationView>(&cancel(&create), json!({})).await;
    let problem = refused.refused_with(StatusCode::CONFLICT, "not_cancellable");
    assert!(problem.detail.contains("deleting it"), "{problem:?}");

    let upgrade: OperationView = owner
        .post(&format!("{path}/upgrade"), json!({ "kubernetes_version": "1.33" }))
        .await
        .expect(StatusCode::ACCEPTED);
    let queued = |op: OperationView| {
        let pool = t.pool.clone();
        async move {
            sqlx::query_scalar::<_, i64>("SELECT count(*) FROM outbox WHERE operation_id = $1")
                .bind(op.id.uuid())
                .fetch_one(&pool)
                .await
                .unwrap()
        }
    };
    assert_eq!(queued(upgrade.clone()).await, 1);

    // A viewer may not cancel; another organization does not see it.
    let (_, viewer_token) = t.member(&tenant, "viewer@acme.test", "viewer").await;
    let (status, _) = t.post(&cancel(&upgrade), &viewer_token, json!({})).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let other = t.tenant("globex").await;
    t.client(&other)
        .post::<OperationView>(&cancel(&upgrade), json!({}))
        .await
        .refused_with(StatusCode::NOT_FOUND, "not_found");

    let cancelled: OperationView = owner.post(&cancel(&upgrade), json!({})).await.expect(StatusCode::OK);
    assert_eq!(cancelled.status, OperationStatus::Failed);
    let error = cancelled.error.clone().expect("an error");
    assert_eq!(error.code, "cancelled");
    assert!(error.message.contains("before the region received it"), "{error:?}");
    assert_eq!(queued(upgrade.clone()).await, 0, "the command is taken back: the region never sees it");
    assert_eq!(steps(&owner, &upgrade).await.last().map(String::as_str), Some("cancelled"));
    // Asked again: the same answer, on GraphQL too.
    let again: OperationView = owner.post(&cancel(&upgrade), json!({})).await.expect(StatusCode::OK);
    assert_eq!((again.id, again.status), (upgrade.id, OperationStatus::Failed));
    let (status, answer) = t
        .send(t.request(reqwest::Method::POST, "/graphql", &tenant.token).json(&json!({
            "query": "mutation($id: ID!) { cancelOperation(id: $id, idempotencyKey: \"cancel-1\") { id status error { code } } }",
            "variables": { "id": upgrade.id.to_string() },
        })))
        .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(
        answer["data"]["cancelOperation"],
        json!({ "id": upgrade.id.to_string(), "status": "FAILED", "error": { "code": "cancelled" } }),
        "{answer}"
    );

    // The spec before it is back, as a revision of its own.
    let now: moke_api::model::ClusterView = owner.get(&path).await.expect(StatusCode::OK);
    assert_eq!((now.spec.kubernetes_version.as_str(), now.generation), ("1.32", 3));
    let revisions: Page<ClusterRevisionView> = owner.get(&format!("{path}/revisions")).await.expect(StatusCode::OK);
    assert_eq!(revisions.items[0].cause.as_deref(), Some("cluster_update"));
    let diff: SpecDiff = owner.get(&format!("{path}/revisions/3/diff")).await.expect(StatusCode::OK);
    assert_eq!(diff.changes.len(), 1, "{diff:?}");
    assert_eq!(diff.changes[0].path, "/kubernetes_version");
    let audit: Page<AuditEventView> =
        owner.get(&owner.org_path("/audit-events?action=operation.cancel")).await.expect(StatusCode::OK);
    assert_eq!(audit.items.len(), 1, "{audit:?}");
    assert_eq!(audit.items[0].details["withdrawn"], json!(true));
    let revert = audit.items[0].details["revert_operation_id"].as_str().unwrap().to_string();
    assert_eq!(owner.operation(&revert).await.kind, "cluster_update");

    // Cancelling the revert would move the version again: refused. A
    // change followed by another cannot be cancelled alone.
    let revert_op = owner.operation(&revert).await;
    owner
        .post::<OperationView>(&cancel(&revert_op), json!({}))
        .await
        .refused_with(StatusCode::CONFLICT, "not_cancellable");
    let protect: OperationView =
        owner.patch(&path, json!({ "spec": { "deletion_protection": true } })).await.expect(StatusCode::ACCEPTED);
    let _: OperationView = owner
        .patch(&path, json!({ "spec": { "snapshot_policy": { "every_hours": 2, "keep": 5 } } }))
        .await
        .expect(StatusCode::ACCEPTED);
    owner.post::<OperationView>(&cancel(&protect), json!({})).await.refused_with(StatusCode::CONFLICT, "superseded");
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn a_machine_type_change_cancelled_between_steps_converges_back(
    options: PgPoolOptions,
    connect: PgConnectOptions,
) {
    let t = TestApp::start(options, connect).await;
    let region = region(&t);
    let tenant = t.tenant("acme").await;
    let owner = t.client(&tenant);
    let (project, cluster, pool) = cluster_with_pool(&region, &owner, 3).await;
    let path = format!("/v1/projects/{project}/clusters/{}", cluster.id);
    let pool_path = format!("{path}/node-pools/{}", pool.id);
    let nodes = async || -> Vec<NodeView> {
        let page: Page<NodeView> = owner.get(&format!("{path}/nodes")).await.expect(StatusCode::OK);
        page.items
    };
    let small_cpu = nodes().await[0].allocatable_cpu_millis;

    // A move to bigger machines, stopped once the first node was replaced.
    let change: OperationView =
        owner.patch(&pool_path, json!({ "spec": { "machine_type": "bm.medium" } })).await.expect(StatusCode::ACCEPTED);
    drive(&region, "a node replaced", async || {
        steps(&owner, &change).await.iter().any(|s| s.contains(": 1 of 3 node(s) replaced"))
    })
    .await;
    assert!(nodes().await.iter().any(|n| n.allocatable_cpu_millis != small_cpu), "a node on the new type");
    let cancelled: OperationView =
        owner.post(&format!("/v1/operations/{}/cancel", change.id), json!({})).await.expect(StatusCode::OK);
    assert_eq!(cancelled.error.as_ref().map(|e| e.code.as_str()), Some("cancelled"), "{cancelled:?}");
    assert!(cancelled.error.as_ref().unwrap().message.contains("converges back"), "{cancelled:?}");

    // The pool goes back to its machines by the same surge replacement, and
    // the cancelled Operation stays cancelled whatever the region reports.
    let revert = newest(&owner, &project, &pool.id.to_string(), "node_pool_update").await;
    assert_ne!(revert.id, change.id);
    drive(&region, "reverted", async || finished(&owner, &revert, OperationStatus::Succeeded).await).await;
    let now = nodes().await;
    assert_eq!(now.len(), 3, "{now:?}");
    assert!(now.iter().all(|n| n.allocatable_cpu_millis == small_cpu && n.ready), "{now:?}");
    let pool: NodePoolView = owner.get(&pool_path).await.expect(StatusCode::OK);
    assert_eq!((pool.spec.machine_type.as_str(), pool.generation), ("bm.small", 3));
    assert_eq!(pool.status.observed_generation, 3);
    let after = owner.operation(change.id).await;
    assert_eq!((after.status, after.error.map(|e| e.code)), (OperationStatus::Failed, Some("cancelled".to_string())));
    // Once over, nothing is left to cancel.
    owner
        .post::<OperationView>(&format!("/v1/operations/{}/cancel", revert.id), json!({}))
        .await
        .refused_with(StatusCode::CONFLICT, "operation_finished");

    // Nor is a pool's change once its cluster is being deleted.
    let grow: OperationView =
        owner.patch(&pool_path, json!({ "spec": { "count": 4 } })).await.expect(StatusCode::ACCEPTED);
    let _: OperationView = owner.delete(&path).await.expect(StatusCode::ACCEPTED);
    owner
        .post::<OperationView>(&format!("/v1/operations/{}/cancel", grow.id), json!({}))
        .await
        .refused_with(StatusCode::CONFLICT, "deleting");
}

/// An etcd snapshot, a restore and a recycle are cancelled while their
/// command waits in the gateway (the region never hears of them, and a
/// recycle replaces no node), and refused once the region has them.
#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn etcd_work_and_recycles_are_cancelled_only_before_the_region_has_them(
    options: PgPoolOptions,
    connect: PgConnectOptions,
) {
    let t = TestApp::start(options, connect).await;
    let region = region(&t);
    let tenant = t.tenant("acme").await;
    let owner = t.client(&tenant);
    let (project, cluster, pool) = cluster_with_pool(&region, &owner, 2).await;
    let path = format!("/v1/projects/{project}/clusters/{}", cluster.id);
    let pool_path = format!("{path}/node-pools/{}", pool.id);
    let cancel = |op: &OperationView| format!("/v1/operations/{}/cancel", op.id);
    // The region's reports are ingested meanwhile: a cancel that meets one
    // may be told to retry (503), as any client is.
    let cancel_now = async |op: &OperationView| -> crate::common::Answer<OperationView> {
        for _ in 0..5 {
            let answer = owner.post::<OperationView>(&cancel(op), json!({})).await;
            if answer.status != StatusCode::SERVICE_UNAVAILABLE {
                return answer;
            }
            tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        }
        panic!("still told to retry")
    };
    let cancelled_before = |op: OperationView| {
        let error = op.error.expect("cancelled");
        assert_eq!(error.code, "cancelled");
        assert!(error.message.contains("before the region received it"), "{error:?}");
    };
    let node_names = async || -> Vec<String> {
        let page: Page<NodeView> = owner.get(&format!("{path}/nodes")).await.expect(StatusCode::OK);
        let mut names: Vec<String> = page.items.into_iter().map(|n| n.name).collect();
        names.sort();
        names
    };

    // A snapshot, cancelled while queued; another, refused once the region has it.
    let snapshot: OperationView =
        owner.post(&format!("{path}/snapshots"), json!({})).await.expect(StatusCode::ACCEPTED);
    cancelled_before(cancel_now(&snapshot).await.expect(StatusCode::OK));
    let snapshot: OperationView =
        owner.post(&format!("{path}/snapshots"), json!({})).await.expect(StatusCode::ACCEPTED);
    drive(&region, "snapshot taken", async || finished(&owner, &snapshot, OperationStatus::Succeeded).await).await;
    let late = cancel_now(&snapshot).await;
    late.refused_with(StatusCode::CONFLICT, "operation_finished");

    // A restore from it, cancelled while queued: etcd is left alone.
    let snapshots: Value = owner.get(&format!("{path}/snapshots")).await.expect(StatusCode::OK);
    let name = snapshots["items"][0]["name"].as_str().expect("a snapshot").to_string();
    let restore: OperationView =
        owner.post(&format!("{path}/snapshots/{name}/restore"), json!({})).await.expect(StatusCode::ACCEPTED);
    // Stopping a restore takes the rights starting one takes (a member may not).
    let (_, member) = t.member(&tenant, "member@acme.test", "member").await;
    let (status, _) = t.post(&cancel(&restore), &member, json!({})).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    cancelled_before(cancel_now(&restore).await.expect(StatusCode::OK));
    let restore: OperationView =
        owner.post(&format!("{path}/snapshots/{name}/restore"), json!({})).await.expect(StatusCode::ACCEPTED);
    region.run_once().await.unwrap();
    let started = cancel_now(&restore).await;
    assert_eq!(started.status, StatusCode::CONFLICT, "{started:?}");
    assert!(["operation_started", "operation_finished"].contains(&started.code().as_deref().unwrap_or_default()));
    drive(&region, "restored", async || finished(&owner, &restore, OperationStatus::Succeeded).await).await;

    // A recycle, cancelled while queued: the pool moves on a generation with
    // no node named, and the region replaces none.
    let before = node_names().await;
    let recycle: OperationView =
        owner.post(&format!("{pool_path}/recycle"), json!({})).await.expect(StatusCode::ACCEPTED);
    cancelled_before(cancel_now(&recycle).await.expect(StatusCode::OK));
    let revert = newest(&owner, &project, &pool.id.to_string(), "node_pool_update").await;
    drive(&region, "recycle reverted", async || finished(&owner, &revert, OperationStatus::Succeeded).await).await;
    assert_eq!(node_names().await, before, "no node was replaced");
    let now: NodePoolView = owner.get(&pool_path).await.expect(StatusCode::OK);
    assert_eq!((now.generation, now.status.observed_generation), (pool.generation + 2, pool.generation + 2));
    // Once the region has a recycle, it goes on.
    let recycle: OperationView =
        owner.post(&format!("{pool_path}/recycle"), json!({})).await.expect(StatusCode::ACCEPTED);
    region.run_once().await.unwrap();
    cancel_now(&recycle).await.refused_with(StatusCode::CONFLICT, "operation_started");
    drive(&region, "recycled", async || finished(&owner, &recycle, OperationStatus::Succeeded).await).await;
    assert_ne!(node_names().await, before, "every node was replaced");
}
