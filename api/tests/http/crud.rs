//! Create, read, update, delete and list of projects, clusters and node
//! pools; validation; pagination; ETags; the observed half of resources.

use std::collections::HashSet;

use moke_api::app::region::observations::{OperationProgress, ResourceObservation};
use moke_api::config::{KubernetesVersionEntry, MachineTypeEntry};
use moke_api::ids::ClusterId;
use moke_api::model::{
    ClusterView, NodePoolView, OperationStatus, OperationView, OrgView, Page, ProjectView, QuotasView, RegionView,
    TokenCreated,
};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};

use crate::common::TestApp;

/// Redactions for a whole answer in a snapshot: ids, ETags and times
/// differ on every run; nulls stay visible as nulls.
macro_rules! snapshot {
    ($name:literal, $value:expr) => {
        insta::assert_json_snapshot!($name, $value, {
            ".id" => "[id]",
            ".org_id" => "[org id]",
            ".project_id" => "[project id]",
            ".target.id" => "[target id]",
            ".etag" => "[etag]",
            ".created_at" => "[time]",
            ".updated_at" => "[time]",
        })
    };
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn project_crud(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let acme = t.tenant("acme").await;
    let owner = t.client(&acme);

    let answer = owner
        .post::<ProjectView>(
            &owner.org_path("/projects"),
            json!({ "name": "web", "labels": { "team": "edge" }, "spec": { "description": "storefront" } }),
        )
        .await;
    let created = answer.expect(StatusCode::CREATED);
    snapshot!("created_project", answer.body);
    let id = created.id.to_string();
    assert!(id.starts_with("prj_"));
    assert_eq!(created.generation, 1);

    // By id and by name.
    let by_id = owner.get::<ProjectView>(&format!("/v1/projects/{id}")).await;
    by_id.expect(StatusCode::OK);
    let by_name = owner.get::<ProjectView>("/v1/projects/web").await;
    assert_eq!(by_id.body, by_name.body);

    owner
        .post::<ProjectView>(&owner.org_path("/projects"), json!({ "name": "web" }))
        .await
        .refused_with(StatusCode::CONFLICT, "already_exists");

    let updated: ProjectView = owner
        .patch(&format!("/v1/projects/{id}"), json!({ "spec": { "description": "shop" } }))
        .await
        .expect(StatusCode::OK);
    assert_eq!(updated.spec.description, "shop");
    assert_eq!(updated.generation, 2);
    assert_eq!(updated.labels["team"], "edge", "labels untouched by a spec-only patch");
    assert_ne!(updated.etag, created.etag);

    let list: Page<ProjectView> = owner.get(&owner.org_path("/projects")).await.expect(StatusCode::OK);
    assert_eq!(list.items.len(), 1);
    assert!(list.next_page.is_none());

    // Renamed: the new name finds it, the old one no longer; a taken or
    // malformed name is refused at the field.
    owner.post::<ProjectView>(&owner.org_path("/projects"), json!({ "name": "api" })).await.expect(StatusCode::CREATED);
    let renamed: ProjectView =
        owner.patch(&format!("/v1/projects/{id}"), json!({ "name": "storefront" })).await.expect(StatusCode::OK);
    assert_eq!((renamed.name.as_str(), renamed.generation), ("storefront", 2), "a rename is not a spec change");
    owner.get::<ProjectView>("/v1/projects/storefront").await.expect(StatusCode::OK);
    owner.get::<ProjectView>("/v1/projects/web").await.refused_with(StatusCode::NOT_FOUND, "not_found");
    owner
        .patch::<ProjectView>("/v1/projects/storefront", json!({ "name": "api" }))
        .await
        .refused_with(StatusCode::CONFLICT, "already_exists");
    let bad = owner
        .patch::<ProjectView>("/v1/projects/storefront", json!({ "name": "Not A Name" }))
        .await
        .refused_with(StatusCode::BAD_REQUEST, "invalid_request");
    assert_eq!(bad.fields(), ["name"], "{bad:?}");
    let audit: Vec<(String, serde_json::Value)> =
        sqlx::query_as("SELECT action, details FROM audit_events WHERE action = 'project.update' ORDER BY id")
            .fetch_all(&t.pool)
            .await
            .unwrap();
    assert!(audit.iter().any(|(_, d)| d["renamed_from"] == "web" && d["name"] == "storefront"), "{audit:?}");
    owner.delete::<()>("/v1/projects/api").await.expect(StatusCode::NO_CONTENT);

    owner.delete::<()>(&format!("/v1/projects/{id}")).await.expect(StatusCode::NO_CONTENT);
    owner.get::<ProjectView>(&format!("/v1/projects/{id}")).await.refused_with(StatusCode::NOT_FOUND, "not_found");
}

/// The region's word that `cluster` is now `phase` at `generation` (`gone` when deleted).
fn cluster_observed(cluster: ClusterId, generation: i64, phase: &str, gone: bool) -> ResourceObservation {
    ResourceObservation {
        region: "eu-central-1".into(),
        kind: moke_api::app::region::command::ResourceKind::Cluster,
        resource_id: cluster.uuid(),
        observed_generation: generation,
        phase: phase.into(),
        conditions: vec![],
        gone,
        endpoint: None,
        workload: None,
        nodes: None,
        snapshots: None,
        unmanaged: None,
        namespaces: None,
    }
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn cluster_and_node_pool_lifecycle(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let acme = t.tenant("acme").await;
    let owner = t.client(&acme);
    let project = owner.create_project("web").await.id.to_string();

    let answer = owner
        .post::<OperationView>(
            &format!("/v1/projects/{project}/clusters"),
            json!({
                "name": "prod",
                "labels": { "env": "prod" },
                "spec": {
                    "region": "eu-central-1",
                    "kubernetes_version": "1.32",
                    "control_plane": { "replicas": 1 },
                    "maintenance_window": { "day": "sunday", "start_time": "03:00", "duration_hours": 4 }
                }
            }),
        )
        .await;
    let op = answer.expect(StatusCode::ACCEPTED);
    snapshot!("cluster_create_operation", answer.body);
    assert_eq!(op.kind, "cluster_create");
    assert_eq!(op.status, OperationStatus::Pending);
    let cluster = op.target.id.clone();
    assert!(cluster.starts_with("cl_"));

    let answer = owner.get::<ClusterView>(&format!("/v1/projects/{project}/clusters/{cluster}")).await;
    let view = answer.expect(StatusCode::OK);
    snapshot!("pending_cluster", answer.body);
    assert_eq!(view.spec.region, "eu-central-1");
    assert_eq!(view.spec.control_plane.replicas, 1);
    assert!(!view.spec.deletion_protection);
    assert_eq!(view.status.phase, "pending");
    assert_eq!(view.status.observed_generation, 0);
    assert!(view.status.observed_at.is_none());

    // What a cluster would cost, before it is made: nothing is written.
    let estimate_path = format!("/v1/projects/{project}/clusters/estimate");
    let estimate: Value = owner
        .post(
            &estimate_path,
            json!({
                "cluster": { "name": "priced", "spec": { "region": "eu-central-1", "control_plane": { "replicas": 3 } } },
                "node_pools": [
                    { "name": "a", "spec": { "machine_type": "bm.small", "count": 3 } },
                    { "name": "b", "spec": { "machine_type": "bm.small", "count": 2 } }
                ]
            }),
        )
        .await
        .expect(StatusCode::OK);
    assert_eq!(estimate["currency"], "USD");
    assert_eq!(estimate["monthly_total"], "667.30", "{estimate}");
    assert_eq!(estimate["lines"][1]["count"], 5, "pools of one machine type share a line");
    assert_eq!(estimate["lines"][1]["amount"], "600.10");
    let refused = owner
        .post::<Value>(
            &estimate_path,
            json!({
                "cluster": { "name": "estimate", "spec": { "region": "mars-1" } },
                "node_pools": [{ "name": "a", "spec": { "machine_type": "bm.huge", "count": 1 } }]
            }),
        )
        .await
        .refused(StatusCode::BAD_REQUEST);
    assert_eq!(
        refused.fields(),
        ["cluster.name", "cluster.spec.region", "node_pools[0].spec.machine_type", "node_pools[0].spec.zones"]
    );
    let eleven: Vec<Value> = (0..11)
        .map(|i| json!({ "name": format!("p{i}"), "spec": { "machine_type": "bm.small", "count": 1 } }))
        .collect();
    let too_many = owner
        .post::<Value>(
            &estimate_path,
            json!({ "cluster": { "name": "x", "spec": { "region": "eu-central-1" } }, "node_pools": eleven }),
        )
        .await
        .refused(StatusCode::BAD_REQUEST);
    assert_eq!(too_many.fields(), ["node_pools"]);
    owner.get::<ClusterView>(&format!("/v1/projects/{project}/clusters/priced")).await.refused(StatusCode::NOT_FOUND);

    // Defaults: the catalog's default version and an HA control plane.
    let (dev, op2) = owner.create_cluster(&project, "dev", json!({ "region": "eu-central-1" })).await;
    assert_eq!(dev.spec.kubernetes_version, "1.33");
    assert_eq!(dev.spec.control_plane.replicas, 3);
    assert_ne!(op.id, op2.id);

    // The region reports progress and observations.
    let cluster_id: ClusterId = cluster.parse().unwrap();
    t.app
        .record_operation_progress(OperationProgress {
            region: None,
            operation_id: op.id.uuid(),
            status: OperationStatus::Succeeded,
            step: "done".into(),
            progress: 100,
            error: None,
            earlier: Vec::new(),
        })
        .await
        .unwrap();
    t.app.record_observation(cluster_observed(cluster_id, 1, "running", false)).await.unwrap();
    let op_view = owner.operation(op.id).await;
    assert_eq!(op_view.status, OperationStatus::Succeeded);
    assert!(op_view.finished_at.is_some());
    let prod_path = format!("/v1/projects/{project}/clusters/prod");
    let view: ClusterView = owner.get(&prod_path).await.expect(StatusCode::OK);
    assert_eq!(view.status.phase, "running");
    assert_eq!(view.status.observed_generation, 1);
    assert!(!view.status.stale);

    // Upgrade by one minor version bumps the generation and queues work.
    let upgrade: OperationView = owner
        .patch(&prod_path, json!({ "spec": { "kubernetes_version": "1.33", "deletion_protection": true } }))
        .await
        .expect(StatusCode::ACCEPTED);
    assert_eq!(upgrade.target.generation, 2);
    assert_eq!(upgrade.status, OperationStatus::Pending);
    // Labels alone complete at once.
    let relabel: OperationView =
        owner.patch(&prod_path, json!({ "labels": { "env": "production" } })).await.expect(StatusCode::ACCEPTED);
    assert_eq!(relabel.status, OperationStatus::Succeeded);
    assert_eq!(relabel.target.generation, 2);

    // Node pools.
    let np_op: OperationView = owner
        .post(
            &format!("{prod_path}/node-pools"),
            json!({
                "name": "workers",
                "spec": {
                    "machine_type": "bm.medium",
                    "count": 3,
                    "autoscaling": { "min_count": 2, "max_count": 6 },
                    "zones": ["eu-central-1a", "eu-central-1b"],
                    "node_labels": { "pool": "workers" },
                    "taints": [{ "key": "dedicated", "value": "web", "effect": "NoSchedule" }]
                }
            }),
        )
        .await
        .expect(StatusCode::ACCEPTED);
    let pool = np_op.target.id.clone();
    assert!(pool.starts_with("np_"));
    let pool_path = format!("{prod_path}/node-pools/{pool}");
    let np: NodePoolView = owner.get(&pool_path).await.expect(StatusCode::OK);
    assert_eq!(np.spec.zones, ["eu-central-1a", "eu-central-1b"]);
    owner.create_node_pool(&project, "prod", "small", 1).await;
    let small: NodePoolView = owner.get(&format!("{prod_path}/node-pools/small")).await.expect(StatusCode::OK);
    assert_eq!(small.spec.zones.len(), 3);

    let quotas: QuotasView = owner.get(&owner.org_path("/quotas")).await.expect(StatusCode::OK);
    assert_eq!(quotas.clusters.usage, 2);
    assert_eq!(quotas.nodes.usage, 7, "autoscaling max 6 + 1");
    assert_eq!(quotas.vcpus.usage, 6 * 32 + 8);
    assert_eq!(quotas.node_pools_per_cluster.usage, 2);

    owner.patch::<OperationView>(&pool_path, json!({ "spec": { "count": 5 } })).await.expect(StatusCode::ACCEPTED);
    // What a pool change or a new pool would cost, against the cluster as it is; nothing is written.
    let shrink: Value =
        owner.post(&format!("{pool_path}/estimate"), json!({ "spec": { "count": 2 } })).await.expect(StatusCode::OK);
    let medium = |estimate: &Value| {
        let lines = estimate["lines"].as_array().unwrap();
        lines.iter().find(|l| l["sku"] == "bm.medium.hour").map(|l| l["amount"].clone())
    };
    assert_eq!(medium(&shrink["current"]), Some(json!("2400.05")), "5 x 672 h x 0.7143: {shrink}");
    assert_eq!(medium(&shrink["proposed"]), Some(json!("960.02")));
    assert_eq!(shrink["monthly_delta"], "-1440.03");
    let grow: Value = owner
        .post(
            &format!("{prod_path}/node-pools/estimate"),
            json!({ "name": "more", "spec": { "machine_type": "bm.small", "count": 2 } }),
        )
        .await
        .expect(StatusCode::OK);
    assert_eq!(grow["monthly_delta"], "240.04", "1 -> 3 bm.small nodes: {grow}");
    assert_eq!(grow["current"]["monthly_total"], shrink["current"]["monthly_total"]);
    let refused = owner
        .post::<Value>(
            &format!("{prod_path}/node-pools/estimate"),
            json!({ "name": "estimate", "spec": { "machine_type": "bm.huge", "count": 1 } }),
        )
        .await
        .refused(StatusCode::BAD_REQUEST);
    assert_eq!(refused.fields(), ["name", "spec.machine_type"]);
    let unchanged: NodePoolView = owner.get(&pool_path).await.expect(StatusCode::OK);
    assert_eq!(unchanged.spec.count, 5);
    let bad = owner
        .patch::<OperationView>(&pool_path, json!({ "spec": { "machine_type": "bm.huge", "count": 9 } }))
        .await
        .refused(StatusCode::BAD_REQUEST);
    assert_eq!(bad.fields(), ["spec.machine_type", "spec.count"], "a machine type not offered");

    let pools: Page<NodePoolView> = owner.get(&format!("{prod_path}/node-pools")).await.expect(StatusCode::OK);
    assert_eq!(pools.items.len(), 2);

    let np_delete: OperationView = owner.delete(&pool_path).await.expect(StatusCode::ACCEPTED);
    assert_eq!(np_delete.kind, "node_pool_delete");
    let pending_delete: NodePoolView = owner.get(&pool_path).await.expect(StatusCode::OK);
    assert!(pending_delete.deletion_requested_at.is_some());

    // The cluster's operations: its own and its pools', newest first, paged.
    let ops_path = format!("{prod_path}/operations");
    let ops: Page<OperationView> = owner.get(&ops_path).await.expect(StatusCode::OK);
    let kinds: Vec<&str> = ops.items.iter().map(|o| o.kind.as_str()).collect();
    assert_eq!(kinds.first(), Some(&"node_pool_delete"), "newest first: {kinds:?}");
    assert_eq!(kinds.last(), Some(&"cluster_create"), "{kinds:?}");
    assert!(ops.items.iter().any(|o| o.id == np_op.id), "a pool's work is the cluster's");
    let first: Page<OperationView> = owner.get(&format!("{ops_path}?limit=2")).await.expect(StatusCode::OK);
    let token = first.next_page.clone().expect("more than two");
    let rest: Page<OperationView> =
        owner.get(&format!("{ops_path}?limit=500&page_token={token}")).await.expect(StatusCode::OK);
    let paged: Vec<_> = first.items.iter().chain(&rest.items).map(|o| o.id.to_string()).collect();
    assert_eq!(paged, ops.items.iter().map(|o| o.id.to_string()).collect::<Vec<_>>());
    // Operations written before they recorded their cluster are found by their target.
    sqlx::query("UPDATE operations SET cluster_id = NULL WHERE kind = 'node_pool_create'")
        .execute(&t.pool)
        .await
        .unwrap();
    let legacy: Page<OperationView> = owner.get(&ops_path).await.expect(StatusCode::OK);
    assert_eq!(
        legacy.items.iter().map(|o| o.id.to_string()).collect::<Vec<_>>(),
        ops.items.iter().map(|o| o.id.to_string()).collect::<Vec<_>>()
    );

    // Deletion protection, then delete; the region confirms and it is gone.
    owner.delete::<OperationView>(&prod_path).await.refused_with(StatusCode::CONFLICT, "deletion_protected");
    owner
        .patch::<OperationView>(&prod_path, json!({ "spec": { "deletion_protection": false } }))
        .await
        .expect(StatusCode::ACCEPTED);
    let del: OperationView = owner.delete(&prod_path).await.expect(StatusCode::ACCEPTED);
    let again: OperationView = owner.delete(&prod_path).await.expect(StatusCode::ACCEPTED);
    assert_eq!(again.id, del.id, "a repeated delete answers with the same operation");
    owner.delete::<()>(&format!("/v1/projects/{project}")).await.refused(StatusCode::CONFLICT);
    t.app.record_observation(cluster_observed(cluster_id, 5, "deleted", true)).await.unwrap();
    owner.get::<ClusterView>(&prod_path).await.refused(StatusCode::NOT_FOUND);
    let gone = owner.get::<NodePoolView>(&pool_path).await;
    assert_eq!(gone.status, StatusCode::NOT_FOUND, "node pools go with their cluster");
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn validation_lists_every_bad_field(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let acme = t.tenant("acme").await;
    let owner = t.client(&acme);
    let project = owner.create_project("web").await.id.to_string();
    let clusters = format!("/v1/projects/{project}/clusters");

    let answer = owner
        .post::<OperationView>(
            &clusters,
            json!({
                "name": "Bad_Name",
                "labels": { "ok": "yes", "bad key": "x" },
                "spec": {
                    "region": "mars-1",
                    "kubernetes_version": "1.12",
                    "control_plane": { "replicas": 2 },
                    "maintenance_window": { "day": "someday", "start_time": "25:00", "duration_hours": 0 }
                }
            }),
        )
        .await;
    let problem = answer.refused_with(StatusCode::BAD_REQUEST, "invalid_request");
    assert_eq!(
        problem.fields(),
        [
            "name",
            "labels.bad key",
            "spec.region",
            "spec.kubernetes_version",
            "spec.control_plane.replicas",
            "spec.maintenance_window.day",
            "spec.maintenance_window.start_time",
            "spec.maintenance_window.duration_hours",
        ]
    );
    assert_eq!(problem.errors[2].code, "unknown_region");
    // The whole problem+json answer, every message included.
    insta::assert_json_snapshot!("invalid_cluster_problem", answer.body, { ".request_id" => "[request id]" });

    // End-of-life versions are listed but refused.
    let problem = owner
        .post::<OperationView>(
            &clusters,
            json!({ "name": "old", "spec": { "region": "eu-central-1", "kubernetes_version": "1.31" } }),
        )
        .await
        .refused(StatusCode::BAD_REQUEST);
    assert_eq!(problem.errors[0].code, "end_of_life");

    // Unknown fields and wrong types are named.
    let problem = owner
        .post::<OperationView>(&clusters, json!({ "name": "x", "spec": { "region": "eu-central-1", "nodes": 3 } }))
        .await
        .refused(StatusCode::BAD_REQUEST);
    assert_eq!(problem.fields(), ["spec.nodes"]);
    assert_eq!(problem.errors[0].code, "unknown_field");
    let problem =
        owner.post::<OperationView>(&clusters, json!({ "name": 5, "spec": {} })).await.refused(StatusCode::BAD_REQUEST);
    assert_eq!(problem.fields(), ["name"]);

    // Not JSON at all.
    owner
        .send::<OperationView>(
            owner.request(Method::POST, &clusters).header("content-type", "application/json").body("{nope"),
        )
        .await
        .refused_with(StatusCode::BAD_REQUEST, "malformed_request");

    // Node pools: unknown machine type, foreign zone, count out of range, bad taint.
    owner.create_cluster(&project, "prod", json!({ "region": "eu-central-1" })).await;
    let problem = owner
        .post::<OperationView>(
            &format!("{clusters}/prod/node-pools"),
            json!({
                "name": "w",
                "spec": {
                    "machine_type": "bm.huge",
                    "count": 900,
                    "zones": ["us-east-1a", "eu-central-1a", "eu-central-1a"],
                    "taints": [{ "key": "k", "effect": "Sometimes" }]
                }
            }),
        )
        .await
        .refused(StatusCode::BAD_REQUEST);
    assert_eq!(
        problem.fields(),
        ["spec.machine_type", "spec.zones[0]", "spec.zones[2]", "spec.count", "spec.taints[0].effect"]
    );

    // Paging parameters too.
    let problem = owner
        .get::<Page<ProjectView>>(&owner.org_path("/projects?limit=0&page_token=zz"))
        .await
        .refused(StatusCode::BAD_REQUEST);
    assert_eq!(problem.fields(), ["limit", "page_token"]);
    let problem =
        owner.get::<Page<ProjectView>>(&owner.org_path("/projects?limit=many")).await.refused(StatusCode::BAD_REQUEST);
    assert_eq!(problem.fields(), ["limit"]);
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn upgrades_go_one_minor_forward(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let acme = t.tenant("acme").await;
    let owner = t.client(&acme);
    let project = owner.create_project("web").await.id.to_string();
    owner.create_cluster(&project, "prod", json!({ "region": "eu-central-1" })).await; // 1.33
    let path = format!("/v1/projects/{project}/clusters/prod");
    let problem = owner
        .patch::<OperationView>(&path, json!({ "spec": { "kubernetes_version": "1.32", "region": "us-east-1" } }))
        .await
        .refused(StatusCode::BAD_REQUEST);
    assert_eq!(problem.fields(), ["spec.region", "spec.kubernetes_version"]);
    assert_eq!(problem.code_of("spec.kubernetes_version"), "downgrade");
    assert_eq!(problem.errors[1].code, "downgrade");
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn if_match_guards_updates(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let acme = t.tenant("acme").await;
    let owner = t.client(&acme);
    let project = owner.create_project("web").await.id.to_string();
    owner.create_cluster(&project, "prod", json!({ "region": "eu-central-1" })).await;

    for path in [format!("/v1/projects/{project}"), format!("/v1/projects/{project}/clusters/prod")] {
        let read = owner.get::<Value>(&path).await;
        let etag = read.headers["etag"].to_str().unwrap().to_string();
        assert_eq!(read.expect(StatusCode::OK)["etag"], etag.as_str());

        let labels = |a: &str| json!({ "labels": { "a": a } });
        owner
            .send::<Value>(owner.request(Method::PATCH, &path).header("if-match", &etag).json(&labels("1")))
            .await
            .ok();
        // The same ETag is now stale.
        owner
            .send::<Value>(owner.request(Method::PATCH, &path).header("if-match", &etag).json(&labels("2")))
            .await
            .refused_with(StatusCode::PRECONDITION_FAILED, "precondition_failed");
        owner
            .send::<Value>(owner.request(Method::DELETE, &path).header("if-match", &etag))
            .await
            .refused(StatusCode::PRECONDITION_FAILED);
    }
    let view: ProjectView = owner.get(&format!("/v1/projects/{project}")).await.expect(StatusCode::OK);
    assert_eq!(view.labels["a"], "1", "the stale update changed nothing");
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn pagination_is_stable_under_inserts(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let acme = t.tenant("acme").await;
    let owner = t.client(&acme);
    let mut originals = HashSet::new();
    for i in 0..250 {
        originals.insert(owner.create_project(&format!("p{i:03}")).await.id);
    }
    let mut seen = Vec::new();
    let mut token: Option<String> = None;
    let mut inserted = 0;
    let mut inserted_before_last_page;
    loop {
        let query = match &token {
            Some(token) => format!("?limit=40&page_token={token}"),
            None => "?limit=40".to_string(),
        };
        let page: Page<ProjectView> =
            owner.get(&owner.org_path(&format!("/projects{query}"))).await.expect(StatusCode::OK);
        inserted_before_last_page = inserted;
        seen.extend(page.items.iter().map(|p| p.id));
        // Others keep creating projects while we page.
        for _ in 0..3 {
            owner.create_project(&format!("late{inserted}")).await;
            inserted += 1;
        }
        match page.next_page {
            Some(next) => token = Some(next),
            None => break,
        }
    }
    let unique: HashSet<_> = seen.iter().cloned().collect();
    assert_eq!(unique.len(), seen.len(), "no item repeated");
    assert!(originals.is_subset(&unique), "no item lost");
    assert_eq!(seen.len(), 250 + inserted_before_last_page, "inserts ahead of the cursor are reached too");
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn operations_long_poll_until_done(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let acme = t.tenant("acme").await;
    let owner = t.client(&acme);
    let project = owner.create_project("web").await.id.to_string();
    let (_, op) = owner.create_cluster(&project, "prod", json!({ "region": "eu-central-1" })).await;
    let op_path = format!("/v1/operations/{}", op.id);

    let started = std::time::Instant::now();
    let waited: OperationView = owner.get(&format!("{op_path}?wait=1s")).await.expect(StatusCode::OK);
    assert_eq!(waited.status, OperationStatus::Pending);
    assert!(started.elapsed() >= std::time::Duration::from_millis(900), "waited for the deadline");

    let waiter = {
        let request = owner.request(Method::GET, &format!("{op_path}?wait=30s"));
        tokio::spawn(async move { request.send().await.unwrap().json::<OperationView>().await.unwrap() })
    };
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let started = std::time::Instant::now();
    t.app
        .record_operation_progress(OperationProgress {
            region: None,
            operation_id: op.id.uuid(),
            status: OperationStatus::Failed,
            step: "provisioning_control_plane".into(),
            progress: 40,
            error: Some(moke_api::model::OperationError { code: "no_capacity".into(), message: "region full".into() }),
            earlier: Vec::new(),
        })
        .await
        .unwrap();
    let done = waiter.await.unwrap();
    assert_eq!(done.status, OperationStatus::Failed);
    assert_eq!(done.error.map(|e| e.code).as_deref(), Some("no_capacity"));
    assert!(started.elapsed() < std::time::Duration::from_secs(5), "woken by the notification");

    let problem = owner.get::<OperationView>(&format!("{op_path}?wait=forever")).await.refused(StatusCode::BAD_REQUEST);
    assert_eq!(problem.fields(), ["wait"]);
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn catalog_health_and_problem_answers(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let anonymous = t.anonymous();
    let regions: Vec<RegionView> = anonymous.get("/v1/regions").await.expect(StatusCode::OK);
    assert_eq!(regions[0].name, "eu-central-1");
    let versions: Vec<KubernetesVersionEntry> = anonymous.get("/v1/kubernetes-versions").await.expect(StatusCode::OK);
    assert_eq!(versions.iter().filter(|v| v.default).count(), 1);
    let machines: Vec<MachineTypeEntry> = anonymous.get("/v1/machine-types").await.expect(StatusCode::OK);
    assert_eq!(machines[0].vcpus, 8);

    let ready = t.client.get(format!("{}/readyz", t.base)).send().await.unwrap();
    assert_eq!(ready.status(), StatusCode::OK);
    let health = t.client.get(format!("{}/healthz", t.base)).send().await.unwrap();
    assert_eq!(health.status(), StatusCode::OK);

    // Request ids are echoed, or made up when absent.
    let response = t.client.get(format!("{}/healthz", t.base)).header("x-request-id", "req-42").send().await.unwrap();
    assert_eq!(response.headers()["x-request-id"], "req-42");
    let response = t.client.get(format!("{}/healthz", t.base)).send().await.unwrap();
    assert!(!response.headers()["x-request-id"].is_empty());

    let answer = anonymous.get::<Page<OrgView>>("/v1/orgs").await;
    answer.refused(StatusCode::UNAUTHORIZED);
    assert_eq!(answer.headers["content-type"], "application/problem+json");
    assert_eq!(answer.headers["www-authenticate"], "Bearer");
    let answer = anonymous.get::<Value>("/v1/nothing").await;
    answer.refused(StatusCode::NOT_FOUND);
    assert_eq!(answer.headers["content-type"], "application/problem+json");

    // Oversized bodies are refused before parsing.
    let acme = t.tenant("acme").await;
    let huge = json!({ "name": "x", "spec": { "description": "d".repeat(2 * 1024 * 1024) } });
    let owner = t.client(&acme);
    let answer = owner.post::<ProjectView>(&owner.org_path("/projects"), huge).await;
    let status = answer.status;
    assert!(status == StatusCode::PAYLOAD_TOO_LARGE || status == StatusCode::BAD_REQUEST, "{answer:?}");

    let metrics = t.client.get(format!("{}/metrics", t.base)).send().await.unwrap().text().await.unwrap();
    assert!(metrics.contains("http_requests_total"), "{metrics}");
    assert!(metrics.contains("outbox_backlog"));
    assert!(metrics.contains("db_pool_connections"));

    let spec = t.client.get(format!("{}/openapi.json", t.base)).send().await.unwrap();
    assert_eq!(spec.status(), StatusCode::OK);
    let docs = t.client.get(format!("{}/docs", t.base)).send().await.unwrap().text().await.unwrap();
    assert!(docs.contains("<html"), "a browsable docs page");
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn viewer_tokens_read_but_cannot_change(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let acme = t.tenant("acme").await;
    let owner = t.client(&acme);
    let project = owner.create_project("web").await.id.to_string();
    let viewer: TokenCreated = owner.create_token("dashboards", "viewer").await;
    assert!(viewer.token.starts_with("moke_"));
    let viewer = owner.with_token(&viewer.token);

    viewer.get::<ProjectView>(&format!("/v1/projects/{project}")).await.expect(StatusCode::OK);
    viewer
        .post::<OperationView>(
            &format!("/v1/projects/{project}/clusters"),
            json!({ "name": "x", "spec": { "region": "eu-central-1" } }),
        )
        .await
        .refused_with(StatusCode::FORBIDDEN, "forbidden");
    viewer.get::<Value>(&viewer.org_path("/tokens")).await.refused(StatusCode::FORBIDDEN);
    // Nobody mints a token stronger than themselves.
    viewer
        .post::<TokenCreated>(&viewer.org_path("/tokens"), json!({ "name": "x", "role": "owner" }))
        .await
        .refused(StatusCode::FORBIDDEN);
}
