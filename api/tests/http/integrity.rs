//! One transaction per mutation: quotas under races, an injected failure
//! leaves nothing behind, the outbox is delivered at least once through the
//! consumer interface, and every change is audited with who, when and where.

use std::sync::Mutex;

use moke_api::app::FaultPoint;
use moke_api::app::region::outbox::{OutboxConsumer, OutboxMessage};
use moke_api::config::QuotaDefaults;
use moke_api::model::{AuditEventView, ClusterView, OperationView, Page, QuotaItem, QuotasView};
use prost::Message;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};

use crate::common::TestApp;

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn a_hundred_concurrent_creates_respect_a_quota_of_ten(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let acme = t.tenant("acme").await;
    let project = t.project(&acme, "web").await;
    let org: moke_api::ids::OrgId = acme.org.parse().unwrap();
    t.app
        .set_quota_overrides(
            org,
            QuotaDefaults { max_clusters: 10, max_node_pools_per_cluster: 10, max_nodes: 100, ..t.app.config().quotas },
        )
        .await
        .unwrap();

    let attempts: Vec<_> = (0..100)
        .map(|i| {
            let request = t
                .request(Method::POST, &format!("/v1/projects/{project}/clusters"), &acme.token)
                .json(&json!({ "name": format!("c{i}"), "spec": { "region": "eu-central-1" } }));
            tokio::spawn(async move {
                let response = request.send().await.unwrap();
                (response.status(), response.json::<Value>().await.unwrap())
            })
        })
        .collect();
    let (mut accepted, mut refused) = (0, 0);
    for attempt in attempts {
        let (status, body) = attempt.await.unwrap();
        match status {
            StatusCode::ACCEPTED => accepted += 1,
            StatusCode::CONFLICT => {
                assert_eq!(body["code"], "quota_exceeded", "{body}");
                refused += 1;
            }
            other => panic!("unexpected {other}: {body}"),
        }
    }
    assert_eq!((accepted, refused), (10, 90));
    assert_eq!(t.count("clusters").await, 10);
    assert_eq!(t.count("outbox").await, 10);
    let owner = t.client(&acme);
    let quotas: QuotasView = owner.get(&owner.org_path("/quotas")).await.expect(StatusCode::OK);
    assert_eq!(quotas.clusters, QuotaItem { limit: 10, usage: 10, source: moke_api::model::QuotaSource::Override });

    // Node and vCPU quotas too: 100 nodes allowed, 8 vCPUs each on bm.small.
    let listed: Page<ClusterView> =
        owner.get(&format!("/v1/projects/{project}/clusters?limit=1")).await.expect(StatusCode::OK);
    let pools = format!("/v1/projects/{project}/clusters/{}/node-pools", listed.items[0].name);
    owner
        .post::<OperationView>(&pools, json!({ "name": "big", "spec": { "machine_type": "bm.small", "count": 101 } }))
        .await
        .refused_with(StatusCode::CONFLICT, "quota_exceeded");
    let problem = owner
        .post::<OperationView>(&pools, json!({ "name": "wide", "spec": { "machine_type": "bm.large", "count": 13 } }))
        .await
        .refused(StatusCode::CONFLICT);
    assert!(problem.detail.contains("vcpus"), "{problem:?}");
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn a_failure_after_the_spec_insert_leaves_nothing(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let acme = t.tenant("acme").await;
    let project = t.project(&acme, "web").await;
    let audit_before = t.count("audit_events").await;

    t.app.inject_fault(FaultPoint::AfterSpecInsert, true);
    let (status, problem) = t
        .send(
            t.request(Method::POST, &format!("/v1/projects/{project}/clusters"), &acme.token)
                .header("idempotency-key", "retry-me")
                .json(&json!({ "name": "prod", "spec": { "region": "eu-central-1" } })),
        )
        .await;
    assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
    assert!(!problem.to_string().contains("injected"), "no internals in the answer: {problem}");
    assert_eq!(t.count("clusters").await, 0, "no spec");
    assert_eq!(t.count("operations").await, 0, "no operation");
    assert_eq!(t.count("outbox").await, 0, "no outbox row");
    assert_eq!(t.count("audit_events").await, audit_before, "no audit row");
    assert_eq!(t.count("idempotency_keys").await, 0, "the key was released");

    // With the fault gone the same retry succeeds.
    t.app.inject_fault(FaultPoint::AfterSpecInsert, false);
    let (status, _) = t
        .send(
            t.request(Method::POST, &format!("/v1/projects/{project}/clusters"), &acme.token)
                .header("idempotency-key", "retry-me")
                .json(&json!({ "name": "prod", "spec": { "region": "eu-central-1" } })),
        )
        .await;
    assert_eq!(status, StatusCode::ACCEPTED);
    assert_eq!((t.count("clusters").await, t.count("operations").await, t.count("outbox").await), (1, 1, 1));
}

/// Records what it is given; fails while `failing` is set.
#[derive(Default)]
struct Recorder {
    delivered: Mutex<Vec<OutboxMessage>>,
    failing: std::sync::atomic::AtomicBool,
}

impl OutboxConsumer for Recorder {
    async fn deliver(&self, message: &OutboxMessage) -> anyhow::Result<()> {
        if self.failing.load(std::sync::atomic::Ordering::SeqCst) {
            anyhow::bail!("region queue unavailable");
        }
        self.delivered.lock().unwrap().push(message.clone());
        Ok(())
    }
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn outbox_delivers_commands_at_least_once(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let acme = t.tenant("acme").await;
    let owner = t.client(&acme);
    let project = owner.create_project("web").await.id.to_string();
    let (cluster, op) = owner.create_cluster(&project, "prod", json!({ "region": "eu-central-1" })).await;
    owner.create_node_pool(&project, &cluster.id.to_string(), "workers", 2).await;
    assert_eq!(t.app.outbox_backlog().await.unwrap().pending, 2);

    let consumer = Recorder::default();
    consumer.failing.store(true, std::sync::atomic::Ordering::SeqCst);
    assert_eq!(t.app.relay_outbox_once(&consumer).await.unwrap(), 0);
    let (attempts, error): (i32, Option<String>) =
        sqlx::query_as("SELECT attempts, last_error FROM outbox ORDER BY id LIMIT 1").fetch_one(&t.pool).await.unwrap();
    assert_eq!(attempts, 1);
    assert!(error.unwrap().contains("unavailable"));
    // Backed off: not due yet.
    consumer.failing.store(false, std::sync::atomic::Ordering::SeqCst);
    assert_eq!(t.app.relay_outbox_once(&consumer).await.unwrap(), 0);
    sqlx::query("UPDATE outbox SET available_at = now()").execute(&t.pool).await.unwrap();

    assert_eq!(t.app.relay_outbox_once(&consumer).await.unwrap(), 2);
    assert_eq!(t.app.relay_outbox_once(&consumer).await.unwrap(), 0, "delivered rows are not sent again");
    assert_eq!(t.app.outbox_backlog().await.unwrap().pending, 0);
    let delivered = consumer.delivered.lock().unwrap();
    assert_eq!(delivered[0].kind, "cluster_create");
    assert_eq!(delivered[0].region, "eu-central-1");
    let command = moke_proto::region::Command::decode(delivered[0].command.as_deref().unwrap()).unwrap();
    assert_eq!(command.operation_id, op.id.to_string());
    assert_eq!(command.cluster.map(|c| c.control_plane_replicas), Some(3));
    assert_eq!(delivered[1].kind, "node_pool_create");
    assert!(delivered[0].id < delivered[1].id, "in commit order");
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn audit_events_record_who_what_when_where(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let acme = t.tenant("acme").await;
    let (status, _) = t
        .send(
            t.request(Method::POST, &format!("/v1/orgs/{}/projects", acme.org), &acme.token)
                .header("x-request-id", "trace-me-1")
                .header("user-agent", "moke-tests/1")
                .json(&json!({ "name": "web" })),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED);
    t.cluster(&acme, "web", "prod").await;

    let owner = t.client(&acme);
    let events: Page<AuditEventView> =
        owner.get(&owner.org_path("/audit-events?limit=100")).await.expect(StatusCode::OK);
    let actions: Vec<&str> = events.items.iter().map(|e| e.action.as_str()).collect();
    assert_eq!(
        actions,
        ["org.bootstrap", "service_account.create", "token.create", "project.create", "cluster.create"]
    );
    let project_event = &events.items[3];
    assert_eq!(project_event.request_id.as_deref(), Some("trace-me-1"));
    assert_eq!(project_event.source_ip.as_deref(), Some("127.0.0.1"));
    assert_eq!(project_event.user_agent.as_deref(), Some("moke-tests/1"));
    assert_eq!(project_event.principal.kind, "service_account");
    assert!(project_event.principal.id.as_deref().is_some_and(|id| id.starts_with("sa_")), "{project_event:?}");
    assert!(project_event.resource_id.as_deref().is_some_and(|id| id.starts_with("prj_")), "{project_event:?}");
    let cluster_event = &events.items[4];
    let operation = cluster_event.details["operation_id"].as_str();
    assert!(operation.is_some_and(|id| id.starts_with("op_")), "{cluster_event:?}");
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn a_parent_deleted_mid_create_is_a_conflict_not_a_500(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let acme = t.tenant("acme").await;
    let project = t.project(&acme, "web").await;
    // Stall the create at the quota lock, after it has found the project.
    let org: moke_api::ids::OrgId = acme.org.parse().unwrap();
    let mut blocker = t.pool.begin().await.unwrap();
    sqlx::query("SELECT id FROM organizations WHERE id = $1 FOR NO KEY UPDATE")
        .bind(org.uuid())
        .execute(&mut *blocker)
        .await
        .unwrap();
    let create = {
        let request = t
            .request(Method::POST, &format!("/v1/projects/{project}/clusters"), &acme.token)
            .json(&json!({ "name": "prod", "spec": { "region": "eu-central-1" } }));
        tokio::spawn(async move {
            let response = request.send().await.unwrap();
            (response.status(), response.json::<Value>().await.unwrap())
        })
    };
    // Wait until the create waits for the lock (it made the cluster's CA first).
    for _ in 0..100 {
        let waiting: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
        )
        .fetch_one(&t.pool)
        .await
        .unwrap();
        if waiting > 0 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let (status, _) = t.delete(&format!("/v1/projects/{project}"), &acme.token).await;
    assert_eq!(status, StatusCode::NO_CONTENT, "the project was still empty");
    blocker.rollback().await.unwrap();
    let (status, problem) = create.await.unwrap();
    assert_eq!((status, problem["code"].as_str()), (StatusCode::CONFLICT, Some("concurrent_change")), "{problem}");
    assert_eq!((t.count("clusters").await, t.count("operations").await, t.count("outbox").await), (0, 0, 0));
}
