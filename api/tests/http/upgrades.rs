//! Cluster upgrades through the public API against the simulated region:
//! the versions on offer, the steps in order (control plane blue-green, then
//! each node replaced by surge), no pod lost, and what is refused.

use moke_api::model::{
    ClusterUpgrades, DeploymentView, NodeView, OperationStatus, OperationSteps, OperationView, Page, VersionSupport,
};
use moke_region::{AgentConfig, Transport};
use reqwest::StatusCode;
use serde_json::json;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};

use crate::common::{BackgroundAgent, TestApp, zones};

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn a_cluster_moves_up_a_minor_version_step_by_step_without_losing_a_pod(
    options: PgPoolOptions,
    connect: PgConnectOptions,
) {
    // A version beyond 1.33, so that a second upgrade is on offer while the first runs.
    let t = TestApp::start_with(options, connect, |config| {
        config.catalog.kubernetes_versions.push(moke_api::config::KubernetesVersionEntry {
            version: "1.34".into(),
            default: false,
            end_of_life: chrono::NaiveDate::from_ymd_opt(2028, 6, 28).unwrap(),
        });
    })
    .await;
    let _region = BackgroundAgent::start(
        AgentConfig::new("eu-central-1", zones("eu-central-1")),
        Transport::Postgres(t.pool.clone()),
    );
    let tenant = t.tenant("acme").await;
    let owner = t.client(&tenant);
    let project = owner.create_project("web").await.id.to_string();
    let spec = json!({ "region": "eu-central-1", "kubernetes_version": "1.32" });
    let (cluster, op) = owner.create_cluster(&project, "prod", spec).await;
    owner.succeeds(&op).await;
    let replicas = cluster.spec.control_plane.replicas;
    let cluster = cluster.id.to_string();
    let (_, op) = owner.create_node_pool(&project, &cluster, "workers", 3).await;
    owner.succeeds(&op).await;
    let (deployment, op) = owner
        .create_deployment(&project, &cluster, "web", json!({ "image": "registry.example.com/web:1", "replicas": 3 }))
        .await;
    owner.succeeds(&op).await;
    let path = format!("/v1/projects/{project}/clusters/{cluster}");
    let nodes_before: Page<NodeView> = owner.get(&format!("{path}/nodes")).await.expect(StatusCode::OK);
    assert!(nodes_before.items.iter().all(|n| n.kubernetes_version.as_deref() == Some("1.32")), "{nodes_before:?}");

    // What is on offer: one minor version up.
    let offered: ClusterUpgrades = owner.get(&format!("{path}/upgrades")).await.expect(StatusCode::OK);
    assert_eq!(offered.current.version, "1.32");
    assert_ne!(offered.current.support, VersionSupport::EndOfLife);
    let versions: Vec<&str> = offered.available.iter().map(|v| v.version.as_str()).collect();
    assert_eq!(versions, ["1.33"]);

    // A skipped, unknown, older or current version is refused, naming the field.
    for version in ["1.34", "1.31", "2.0"] {
        let upgrade = format!("{path}/upgrade");
        let refused = owner.post::<OperationView>(&upgrade, json!({ "kubernetes_version": version })).await;
        let problem = refused.refused(StatusCode::BAD_REQUEST);
        assert_eq!(problem.code_of("kubernetes_version"), "not_an_upgrade", "{version}");
    }
    let same = owner.post::<OperationView>(&format!("{path}/upgrade"), json!({ "kubernetes_version": "1.32" })).await;
    same.refused_with(StatusCode::CONFLICT, "already_at_version");

    // The upgrade, followed: each step as the operation reports it. Sent
    // twice with one Idempotency-Key, it starts once.
    let send = || {
        let request = owner.request(reqwest::Method::POST, &format!("{path}/upgrade"));
        owner.send::<OperationView>(
            request.header("idempotency-key", "upgrade-1").json(&json!({ "kubernetes_version": "1.33" })),
        )
    };
    let op = send().await.expect(StatusCode::ACCEPTED);
    assert_eq!(op.kind, "cluster_upgrade");
    assert_eq!(send().await.expect(StatusCode::ACCEPTED).id, op.id, "the retry answers the same Operation");
    // One at a time: the next version is on offer, but waits for this one.
    let next = owner.post::<OperationView>(&format!("{path}/upgrade"), json!({ "kubernetes_version": "1.34" })).await;
    next.refused_with(StatusCode::CONFLICT, "upgrade_in_progress");
    let deployment_path = format!("{path}/namespaces/default/deployments/{}", deployment.id);
    let mut seen: Vec<String> = Vec::new();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(90);
    loop {
        let now = owner.operation(op.id).await;
        if seen.last() != Some(&now.step) {
            seen.push(now.step.clone());
        }
        let web: DeploymentView = owner.get(&deployment_path).await.expect(StatusCode::OK);
        assert!(web.status.ready_replicas >= 3, "no pod is lost: {:?} at {:?}", web.status, now.step);
        if now.status == OperationStatus::Succeeded {
            break;
        }
        assert_ne!(now.status, OperationStatus::Failed, "{now:?}");
        assert!(std::time::Instant::now() < deadline, "the upgrade did not finish: {seen:?}");
        tokio::time::sleep(std::time::Duration::from_millis(40)).await;
    }
    let starting = format!("control plane: starting {replicas} API server(s) on 1.33 beside those on 1.32");
    let expected = [
        "queued",
        "accepted",
        starting.as_str(),
        "control plane: traffic switched to the API servers on 1.33",
        "control plane: the API servers on 1.32 retired",
        "node pool workers: 1 of 3 node(s) replaced onto Kubernetes 1.33",
        "node pool workers: 2 of 3 node(s) replaced onto Kubernetes 1.33",
        "node pool workers: 3 of 3 node(s) replaced onto Kubernetes 1.33",
        "done",
    ];
    // Every step seen is one of these, in this order (a poll may fall between two).
    let mut rest = expected.iter();
    for step in &seen {
        assert!(rest.any(|e| e == step), "{step:?} out of order or unknown: {seen:?}");
    }
    assert!(seen.iter().any(|s| s.starts_with("node pool workers:")), "the pool was replaced: {seen:?}");
    // The Operation's history holds every step, in order, each with its time.
    let history: OperationSteps = owner.get(&format!("/v1/operations/{}/steps", op.id)).await.expect(StatusCode::OK);
    let steps: Vec<&str> = history.items.iter().map(|s| s.step.as_str()).collect();
    assert_eq!(steps, expected, "{history:?}");
    assert!(history.items.windows(2).all(|w| w[0].at <= w[1].at), "{history:?}");
    assert_eq!(history.items.last().map(|s| s.status), Some(OperationStatus::Succeeded));

    // Where it ended: the new version everywhere, new nodes, nothing more to move to.
    let upgraded: ClusterUpgrades = owner.get(&format!("{path}/upgrades")).await.expect(StatusCode::OK);
    assert_eq!(upgraded.current.version, "1.33");
    assert_eq!(upgraded.available.iter().map(|v| v.version.as_str()).collect::<Vec<_>>(), ["1.34"]);
    let nodes: Page<NodeView> = owner.get(&format!("{path}/nodes")).await.expect(StatusCode::OK);
    assert_eq!(nodes.items.len(), 3);
    assert!(nodes.items.iter().all(|n| n.kubernetes_version.as_deref() == Some("1.33")), "{nodes:?}");
    assert!(nodes.items.iter().all(|n| nodes_before.items.iter().all(|old| old.name != n.name)), "every node replaced");
    let web: DeploymentView = owner.get(&deployment_path).await.expect(StatusCode::OK);
    assert_eq!(web.status.ready_replicas, 3);
    let audit: serde_json::Value = owner.get(&owner.org_path("/audit-events?limit=100")).await.expect(StatusCode::OK);
    let upgrades = audit["items"].as_array().unwrap().iter().filter(|e| e["action"] == "cluster.upgrade").count();
    assert_eq!(upgrades, 1, "the upgrade is audited once (refusals change nothing): {audit}");
}
