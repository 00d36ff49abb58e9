//! etcd snapshots through the public API against the simulated region:
//! the scheduled ones and those taken on request, a restore that runs step
//! by step back to a running cluster, and what is refused on the way.

use moke_api::model::{
    AuditEventView, ClusterView, EtcdSnapshots, OperationStatus, OperationSteps, OperationView, Page, SnapshotPolicy,
    SnapshotTrigger,
};
use moke_proto::v1::ListClusterSnapshotsRequest;
use moke_proto::v1::cluster_service_client::ClusterServiceClient;
use moke_region::{AgentConfig, Transport};
use reqwest::{Method, StatusCode};
use serde_json::json;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};

use crate::common::{BackgroundAgent, Client, TestApp, zones};

async fn snapshots(client: &Client<'_>, cluster_path: &str) -> EtcdSnapshots {
    client.get(&format!("{cluster_path}/snapshots")).await.expect(StatusCode::OK)
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn a_snapshot_taken_on_request_restores_the_cluster(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let _region = BackgroundAgent::start(
        AgentConfig::new("eu-central-1", zones("eu-central-1")),
        Transport::Postgres(t.pool.clone()),
    );
    let tenant = t.tenant("acme").await;
    let owner = t.client(&tenant);
    let project = owner.create_project("web").await.id.to_string();

    // A policy out of bounds is refused, naming each field.
    let bad = json!({ "name": "prod", "spec": {
        "region": "eu-central-1", "snapshot_policy": { "every_hours": 0, "keep": 51 } } });
    let problem = owner.post::<OperationView>(&format!("/v1/projects/{project}/clusters"), bad).await;
    let problem = problem.refused(StatusCode::BAD_REQUEST);
    assert_eq!(problem.fields(), ["spec.snapshot_policy.every_hours", "spec.snapshot_policy.keep"], "{problem:?}");

    let spec = json!({ "region": "eu-central-1", "kubernetes_version": "1.32",
                       "snapshot_policy": { "every_hours": 6, "keep": 3 } });
    let (cluster, op) = owner.create_cluster(&project, "prod", spec).await;
    assert_eq!(cluster.spec.snapshot_policy, SnapshotPolicy { every_hours: 6, keep: 3 });
    let path = format!("/v1/projects/{project}/clusters/{}", cluster.id);
    owner.succeeds(&op).await;
    let (_, op) = owner.create_node_pool(&project, &cluster.id.to_string(), "workers", 2).await;
    owner.succeeds(&op).await;

    // The first scheduled snapshot is taken once the control plane runs.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while snapshots(&owner, &path).await.items.is_empty() {
        assert!(std::time::Instant::now() < deadline, "no scheduled snapshot");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let scheduled = snapshots(&owner, &path).await.items;
    assert_eq!(scheduled.len(), 1, "one every 6 hours: {scheduled:?}");
    assert_eq!(scheduled[0].trigger, SnapshotTrigger::Scheduled);
    assert_eq!(scheduled[0].kubernetes_version, "1.32");

    // On request; a retry with the same Idempotency-Key takes no second one.
    let take = || owner.request(Method::POST, &format!("{path}/snapshots")).header("idempotency-key", "snapshot-1");
    let op: OperationView = owner.send(take()).await.expect(StatusCode::ACCEPTED);
    assert_eq!(op.kind, "cluster_snapshot");
    owner.succeeds(&op).await;
    let again: OperationView = owner.send(take()).await.expect(StatusCode::ACCEPTED);
    assert_eq!(again.id, op.id);
    let listed = snapshots(&owner, &path).await.items;
    assert_eq!(listed.len(), 2, "{listed:?}");
    let on_132 = listed[0].clone();
    assert_eq!(on_132.trigger, SnapshotTrigger::OnDemand, "newest first: {listed:?}");
    assert!(on_132.size_bytes > 2 * 1024 * 1024 && on_132.taken_at >= scheduled[0].taken_at, "{on_132:?}");

    // A name no snapshot has is 404; one that is no name at all, 400.
    let restore = |name: &str| format!("{path}/snapshots/{name}/restore");
    owner
        .post::<OperationView>(&restore("prod-etcd-0"), json!({}))
        .await
        .refused_with(StatusCode::NOT_FOUND, "not_found");
    let problem = owner.post::<OperationView>(&restore("Not_A_Name"), json!({})).await;
    assert_eq!(problem.refused(StatusCode::BAD_REQUEST).fields(), ["snapshot"]);

    // After an upgrade, the 1.32 snapshot no longer fits the control plane.
    let op: OperationView = owner
        .post(&format!("{path}/upgrade"), json!({ "kubernetes_version": "1.33" }))
        .await
        .expect(StatusCode::ACCEPTED);
    let problem = owner.post::<OperationView>(&restore(&on_132.name), json!({})).await;
    problem.refused_with(StatusCode::CONFLICT, "upgrade_in_progress");
    owner.succeeds(&op).await;
    let problem = owner.post::<OperationView>(&restore(&on_132.name), json!({})).await;
    assert!(problem.refused_with(StatusCode::CONFLICT, "version_mismatch").detail.contains("1.32"), "{problem:?}");

    // A snapshot on 1.33, restored: API servers stopped, one member restored, etcd back to three.
    let op: OperationView = owner.post(&format!("{path}/snapshots"), json!({})).await.expect(StatusCode::ACCEPTED);
    owner.succeeds(&op).await;
    let on_133 = snapshots(&owner, &path).await.items[0].clone();
    assert_eq!((on_133.kubernetes_version.as_str(), on_133.trigger), ("1.33", SnapshotTrigger::OnDemand));
    assert_eq!(snapshots(&owner, &path).await.items.len(), 3, "the policy keeps 3");
    let restoring: OperationView = owner.post(&restore(&on_133.name), json!({})).await.expect(StatusCode::ACCEPTED);
    assert_eq!(restoring.kind, "cluster_restore");
    let problem = owner.post::<OperationView>(&format!("{path}/snapshots"), json!({})).await;
    problem.refused_with(StatusCode::CONFLICT, "restore_in_progress");
    let change = json!({ "spec": { "control_plane": { "replicas": 1 } } });
    let problem = owner.patch::<OperationView>(&path, change).await;
    problem.refused_with(StatusCode::CONFLICT, "restore_in_progress");
    owner.succeeds(&restoring).await;
    let history: OperationSteps =
        owner.get(&format!("/v1/operations/{}/steps", restoring.id)).await.expect(StatusCode::OK);
    let steps: Vec<&str> = history.items.iter().map(|s| s.step.as_str()).collect();
    let name = &on_133.name;
    assert_eq!(
        steps,
        [
            "queued".to_string(),
            "accepted".to_string(),
            format!("control plane: API servers stopped to restore etcd from {name}"),
            format!("etcd: member prod-etcd-0 restored from snapshot {name} as a cluster of one"),
            "etcd: scaled back to 3 members, one per zone".to_string(),
            format!("control plane: API servers started on the state of {name}"),
            "done".to_string(),
        ],
        "{history:?}"
    );
    let view: ClusterView = owner.get(&path).await.expect(StatusCode::OK);
    assert_eq!(view.status.phase, "running", "{view:?}");
    let restored = view.status.conditions.iter().find(|c| c.condition_type == "Restored").expect("Restored");
    assert!(restored.message.contains(name.as_str()), "{restored:?}");
    let audit: Page<AuditEventView> =
        owner.get(&owner.org_path("/audit-events?action=cluster.snapshot_restore")).await.expect(StatusCode::OK);
    assert_eq!(audit.items.len(), 1, "{audit:?}");
    assert_eq!(audit.items[0].details["snapshot"], json!(name), "{audit:?}");
    assert_eq!(owner.operation(restoring.id).await.status, OperationStatus::Succeeded);

    // The same list and actions over GraphQL and gRPC.
    let rest_names: Vec<String> = snapshots(&owner, &path).await.items.into_iter().map(|s| s.name).collect();
    let (project_ref, cluster_ref) = (project.clone(), cluster.id.to_string());
    let (status, answer) = t
        .send(t.request(Method::POST, "/graphql", &tenant.token).json(&json!({
            "query": "query($p: String!, $c: String!) { clusterSnapshots(project: $p, cluster: $c) { items { name trigger } } }",
            "variables": { "p": project_ref, "c": cluster_ref },
        })))
        .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    let graphql_names: Vec<&str> = answer["data"]["clusterSnapshots"]["items"]
        .as_array()
        .unwrap_or_else(|| panic!("{answer}"))
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(graphql_names, rest_names, "{answer}");
    let (status, answer) = t
        .send(t.request(Method::POST, "/graphql", &tenant.token).json(&json!({
            "query": "mutation($p: String!, $c: String!, $s: String!) { restoreClusterSnapshot(project: $p, cluster: $c, snapshot: $s) { id } }",
            "variables": { "p": project_ref, "c": cluster_ref, "s": "prod-etcd-0" },
        })))
        .await;
    assert_eq!(
        (status, answer["errors"][0]["extensions"]["code"].as_str()),
        (StatusCode::OK, Some("not_found")),
        "{answer}"
    );
    let channel = tonic::transport::Channel::from_shared(t.base.clone()).unwrap().connect().await.unwrap();
    let mut clusters = ClusterServiceClient::new(channel);
    let authed = |message| {
        let mut request = tonic::Request::new(message);
        request.metadata_mut().insert("authorization", format!("Bearer {}", tenant.token).parse().unwrap());
        request
    };
    let listed = clusters
        .list_cluster_snapshots(authed(ListClusterSnapshotsRequest {
            project: project_ref.clone(),
            cluster: cluster_ref.clone(),
        }))
        .await
        .unwrap()
        .into_inner();
    let grpc_names: Vec<String> = listed.snapshots.into_iter().map(|s| s.name).collect();
    assert_eq!(grpc_names, rest_names);

    // A policy change reaches the region with the cluster's next generation.
    let op: OperationView = owner
        .patch(&path, json!({ "spec": { "snapshot_policy": { "every_hours": 24, "keep": 7 } } }))
        .await
        .expect(StatusCode::ACCEPTED);
    owner.succeeds(&op).await;
    let view: ClusterView = owner.get(&path).await.expect(StatusCode::OK);
    assert_eq!(view.spec.snapshot_policy, SnapshotPolicy { every_hours: 24, keep: 7 });
}
