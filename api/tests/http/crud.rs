//! Create, read, update, delete and list of projects, clusters and node
//! pools; validation; pagination; ETags; the observed half of resources.

use std::collections::HashSet;

use moke_api::app::region::observations::{OperationProgress, ResourceObservation};
use moke_api::model::OperationStatus;
use reqwest::{Method, StatusCode};
use serde_json::json;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};

use crate::common::{TestApp, bad_fields};

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn project_crud(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let acme = t.tenant("acme").await;
    let org = &acme.org;

    let (status, created) = t
        .post(
            &format!("/v1/orgs/{org}/projects"),
            &acme.token,
            json!({ "name": "web", "labels": { "team": "edge" }, "spec": { "description": "storefront" } }),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let id = created["id"].as_str().unwrap();
    assert!(id.starts_with("prj_"));
    assert_eq!(created["generation"], 1);

    // By id and by name.
    let (status, by_id) = t.get(&format!("/v1/projects/{id}"), &acme.token).await;
    assert_eq!(status, StatusCode::OK);
    let (_, by_name) = t.get("/v1/projects/web", &acme.token).await;
    assert_eq!(by_id, by_name);

    let (status, body) = t.post(&format!("/v1/orgs/{org}/projects"), &acme.token, json!({ "name": "web" })).await;
    assert_eq!((status, body["code"].as_str()), (StatusCode::CONFLICT, Some("already_exists")));

    let (status, updated) =
        t.patch(&format!("/v1/projects/{id}"), &acme.token, json!({ "spec": { "description": "shop" } })).await;
    assert_eq!(status, StatusCode::OK, "{updated}");
    assert_eq!(updated["spec"]["description"], "shop");
    assert_eq!(updated["generation"], 2);
    assert_eq!(updated["labels"]["team"], "edge", "labels untouched by a spec-only patch");
    assert_ne!(updated["etag"], created["etag"]);

    let (status, list) = t.get(&format!("/v1/orgs/{org}/projects"), &acme.token).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(list["items"].as_array().unwrap().len(), 1);
    assert!(list["next_page"].is_null());

    let (status, _) = t.delete(&format!("/v1/projects/{id}"), &acme.token).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (status, body) = t.get(&format!("/v1/projects/{id}"), &acme.token).await;
    assert_eq!((status, body["code"].as_str()), (StatusCode::NOT_FOUND, Some("not_found")));
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn cluster_and_node_pool_lifecycle(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let acme = t.tenant("acme").await;
    let project = t.project(&acme, "web").await;

    let (status, op) = t
        .post(
            &format!("/v1/projects/{project}/clusters"),
            &acme.token,
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
    assert_eq!(status, StatusCode::ACCEPTED, "{op}");
    assert_eq!(op["kind"], "cluster_create");
    assert_eq!(op["status"], "pending");
    let cluster = op["target"]["id"].as_str().unwrap().to_string();
    assert!(cluster.starts_with("cl_"));

    let (status, view) = t.get(&format!("/v1/projects/{project}/clusters/{cluster}"), &acme.token).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(view["spec"]["region"], "eu-central-1");
    assert_eq!(view["spec"]["control_plane"]["replicas"], 1);
    assert_eq!(view["spec"]["deletion_protection"], false);
    assert_eq!(view["status"]["phase"], "pending");
    assert_eq!(view["status"]["observed_generation"], 0);
    assert!(view["status"]["observed_at"].is_null());

    // Defaults: the catalog's default version and an HA control plane.
    let (_, op2) = t.cluster(&acme, &project, "dev").await;
    let (_, dev) = t.get(&format!("/v1/projects/{project}/clusters/dev"), &acme.token).await;
    assert_eq!(dev["spec"]["kubernetes_version"], "1.33");
    assert_eq!(dev["spec"]["control_plane"]["replicas"], 3);
    assert_ne!(op["id"], op2["id"]);

    // The region reports progress and observations.
    let op_id: moke_api::ids::OperationId = op["id"].as_str().unwrap().parse().unwrap();
    let cluster_id: moke_api::ids::ClusterId = cluster.parse().unwrap();
    t.app
        .record_operation_progress(OperationProgress {
            region: None,
            operation_id: op_id.uuid(),
            status: OperationStatus::Succeeded,
            step: "done".into(),
            progress: 100,
            error: None,
        })
        .await
        .unwrap();
    t.app
        .record_observation(ResourceObservation {
            region: "eu-central-1".into(),
            kind: moke_api::app::region::command::ResourceKind::Cluster,
            resource_id: cluster_id.uuid(),
            observed_generation: 1,
            phase: "running".into(),
            conditions: vec![],
            gone: false,
            endpoint: None,
            workload: None,
            nodes: None,
        })
        .await
        .unwrap();
    let (_, op_view) = t.get(&format!("/v1/operations/{}", op["id"].as_str().unwrap()), &acme.token).await;
    assert_eq!(op_view["status"], "succeeded");
    assert!(op_view["finished_at"].is_string());
    let (_, view) = t.get(&format!("/v1/projects/{project}/clusters/prod"), &acme.token).await;
    assert_eq!(view["status"]["phase"], "running");
    assert_eq!(view["status"]["observed_generation"], 1);
    assert_eq!(view["status"]["stale"], false);

    // Upgrade by one minor version bumps the generation and queues work.
    let (status, upgrade) = t
        .patch(
            &format!("/v1/projects/{project}/clusters/prod"),
            &acme.token,
            json!({ "spec": { "kubernetes_version": "1.33", "deletion_protection": true } }),
        )
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{upgrade}");
    assert_eq!(upgrade["target"]["generation"], 2);
    assert_eq!(upgrade["status"], "pending");
    // Labels alone complete at once.
    let (status, relabel) = t
        .patch(
            &format!("/v1/projects/{project}/clusters/prod"),
            &acme.token,
            json!({ "labels": { "env": "production" } }),
        )
        .await;
    assert_eq!(status, StatusCode::ACCEPTED);
    assert_eq!(relabel["status"], "succeeded");
    assert_eq!(relabel["target"]["generation"], 2);

    // Node pools.
    let (status, np_op) = t
        .post(
            &format!("/v1/projects/{project}/clusters/prod/node-pools"),
            &acme.token,
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
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{np_op}");
    let pool = np_op["target"]["id"].as_str().unwrap().to_string();
    assert!(pool.starts_with("np_"));
    let pool_path = format!("/v1/projects/{project}/clusters/prod/node-pools/{pool}");
    let (status, np) = t.get(&pool_path, &acme.token).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(np["spec"]["zones"], json!(["eu-central-1a", "eu-central-1b"]));
    let (_, np_default_zones) = {
        let (_, _) = t.node_pool(&acme, &project, "prod", "small", 1).await;
        t.get(&format!("/v1/projects/{project}/clusters/prod/node-pools/small"), &acme.token).await
    };
    assert_eq!(np_default_zones["spec"]["zones"].as_array().unwrap().len(), 3);

    let (_, quotas) = t.get(&format!("/v1/orgs/{}/quotas", acme.org), &acme.token).await;
    assert_eq!(quotas["clusters"]["usage"], 2);
    assert_eq!(quotas["nodes"]["usage"], 7, "autoscaling max 6 + 1");
    assert_eq!(quotas["vcpus"]["usage"], 6 * 32 + 8);
    assert_eq!(quotas["node_pools_per_cluster"]["usage"], 2);

    let (status, scaled) = t.patch(&pool_path, &acme.token, json!({ "spec": { "count": 5 } })).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{scaled}");
    let (status, bad) =
        t.patch(&pool_path, &acme.token, json!({ "spec": { "machine_type": "bm.large", "count": 9 } })).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(bad_fields(&bad), ["spec.machine_type", "spec.count"]);

    let (_, pools) = t.get(&format!("/v1/projects/{project}/clusters/prod/node-pools"), &acme.token).await;
    assert_eq!(pools["items"].as_array().unwrap().len(), 2);

    let (status, np_delete) = t.delete(&pool_path, &acme.token).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    assert_eq!(np_delete["kind"], "node_pool_delete");
    let (_, pending_delete) = t.get(&pool_path, &acme.token).await;
    assert!(pending_delete["deletion_requested_at"].is_string());

    // Deletion protection, then delete; the region confirms and it is gone.
    let (status, refused) = t.delete(&format!("/v1/projects/{project}/clusters/prod"), &acme.token).await;
    assert_eq!((status, refused["code"].as_str()), (StatusCode::CONFLICT, Some("deletion_protected")));
    t.patch(
        &format!("/v1/projects/{project}/clusters/prod"),
        &acme.token,
        json!({ "spec": { "deletion_protection": false } }),
    )
    .await;
    let (status, del) = t.delete(&format!("/v1/projects/{project}/clusters/prod"), &acme.token).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{del}");
    let (status, again) = t.delete(&format!("/v1/projects/{project}/clusters/prod"), &acme.token).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    assert_eq!(again["id"], del["id"], "a repeated delete answers with the same operation");
    let (status, _) = t.delete(&format!("/v1/projects/{project}"), &acme.token).await;
    assert_eq!(status, StatusCode::CONFLICT, "a project with clusters cannot be deleted");
    t.app
        .record_observation(ResourceObservation {
            region: "eu-central-1".into(),
            kind: moke_api::app::region::command::ResourceKind::Cluster,
            resource_id: cluster_id.uuid(),
            observed_generation: 5,
            phase: "deleted".into(),
            conditions: vec![],
            gone: true,
            endpoint: None,
            workload: None,
            nodes: None,
        })
        .await
        .unwrap();
    let (status, _) = t.get(&format!("/v1/projects/{project}/clusters/prod"), &acme.token).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _) = t.get(&pool_path, &acme.token).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "node pools go with their cluster");
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn validation_lists_every_bad_field(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let acme = t.tenant("acme").await;
    let project = t.project(&acme, "web").await;

    let (status, problem) = t
        .post(
            &format!("/v1/projects/{project}/clusters"),
            &acme.token,
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
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(problem["code"], "invalid_request");
    assert_eq!(
        bad_fields(&problem),
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
    assert_eq!(problem["errors"][2]["code"], "unknown_region");

    // End-of-life versions are listed but refused.
    let (status, problem) = t
        .post(
            &format!("/v1/projects/{project}/clusters"),
            &acme.token,
            json!({ "name": "old", "spec": { "region": "eu-central-1", "kubernetes_version": "1.31" } }),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(problem["errors"][0]["code"], "end_of_life");

    // Unknown fields and wrong types are named.
    let (status, problem) = t
        .post(
            &format!("/v1/projects/{project}/clusters"),
            &acme.token,
            json!({ "name": "x", "spec": { "region": "eu-central-1", "nodes": 3 } }),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(bad_fields(&problem), ["spec.nodes"]);
    assert_eq!(problem["errors"][0]["code"], "unknown_field");
    let (status, problem) =
        t.post(&format!("/v1/projects/{project}/clusters"), &acme.token, json!({ "name": 5, "spec": {} })).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(bad_fields(&problem), ["name"]);

    // Not JSON at all.
    let (status, problem) = t
        .send(
            t.request(Method::POST, &format!("/v1/projects/{project}/clusters"), &acme.token)
                .header("content-type", "application/json")
                .body("{nope"),
        )
        .await;
    assert_eq!((status, problem["code"].as_str()), (StatusCode::BAD_REQUEST, Some("malformed_request")));

    // Node pools: unknown machine type, foreign zone, count out of range, bad taint.
    t.cluster(&acme, &project, "prod").await;
    let (status, problem) = t
        .post(
            &format!("/v1/projects/{project}/clusters/prod/node-pools"),
            &acme.token,
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
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{problem}");
    assert_eq!(
        bad_fields(&problem),
        ["spec.machine_type", "spec.zones[0]", "spec.zones[2]", "spec.count", "spec.taints[0].effect"]
    );

    // Paging parameters too.
    let (status, problem) = t.get(&format!("/v1/orgs/{}/projects?limit=0&page_token=zz", acme.org), &acme.token).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(bad_fields(&problem), ["limit", "page_token"]);
    let (status, problem) = t.get(&format!("/v1/orgs/{}/projects?limit=many", acme.org), &acme.token).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(bad_fields(&problem), ["limit"]);
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn upgrades_go_one_minor_forward(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let acme = t.tenant("acme").await;
    let project = t.project(&acme, "web").await;
    t.cluster(&acme, &project, "prod").await; // 1.33
    let path = format!("/v1/projects/{project}/clusters/prod");
    let (status, problem) =
        t.patch(&path, &acme.token, json!({ "spec": { "kubernetes_version": "1.32", "region": "us-east-1" } })).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(bad_fields(&problem), ["spec.region", "spec.kubernetes_version"]);
    assert_eq!(problem["errors"][1]["code"], "downgrade");
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn if_match_guards_updates(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let acme = t.tenant("acme").await;
    let project = t.project(&acme, "web").await;
    t.cluster(&acme, &project, "prod").await;

    for path in [format!("/v1/projects/{project}"), format!("/v1/projects/{project}/clusters/prod")] {
        let response = t.request(Method::GET, &path, &acme.token).send().await.unwrap();
        let etag = response.headers()["etag"].to_str().unwrap().to_string();
        let body: serde_json::Value = response.json().await.unwrap();
        assert_eq!(body["etag"], etag.as_str());

        let fresh = t
            .send(
                t.request(Method::PATCH, &path, &acme.token)
                    .header("if-match", &etag)
                    .json(&json!({ "labels": { "a": "1" } })),
            )
            .await;
        assert!(fresh.0.is_success(), "{fresh:?}");
        // The same ETag is now stale.
        let (status, problem) = t
            .send(
                t.request(Method::PATCH, &path, &acme.token)
                    .header("if-match", &etag)
                    .json(&json!({ "labels": { "a": "2" } })),
            )
            .await;
        assert_eq!(status, StatusCode::PRECONDITION_FAILED);
        assert_eq!(problem["code"], "precondition_failed");
        let (status, _) = t.send(t.request(Method::DELETE, &path, &acme.token).header("if-match", &etag)).await;
        assert_eq!(status, StatusCode::PRECONDITION_FAILED);
    }
    let (_, view) = t.get(&format!("/v1/projects/{project}"), &acme.token).await;
    assert_eq!(view["labels"]["a"], "1", "the stale update changed nothing");
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn pagination_is_stable_under_inserts(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let acme = t.tenant("acme").await;
    let org = &acme.org;
    let mut originals = HashSet::new();
    for i in 0..250 {
        originals.insert(t.project(&acme, &format!("p{i:03}")).await);
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
        let (status, page) = t.get(&format!("/v1/orgs/{org}/projects{query}"), &acme.token).await;
        assert_eq!(status, StatusCode::OK);
        inserted_before_last_page = inserted;
        for item in page["items"].as_array().unwrap() {
            seen.push(item["id"].as_str().unwrap().to_string());
        }
        // Others keep creating projects while we page.
        for _ in 0..3 {
            t.project(&acme, &format!("late{inserted}")).await;
            inserted += 1;
        }
        match page["next_page"].as_str() {
            Some(next) => token = Some(next.to_string()),
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
    let project = t.project(&acme, "web").await;
    let (_, op) = t.cluster(&acme, &project, "prod").await;
    let op_path = format!("/v1/operations/{}", op["id"].as_str().unwrap());

    let started = std::time::Instant::now();
    let (status, body) = t.get(&format!("{op_path}?wait=1s"), &acme.token).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["status"], "pending");
    assert!(started.elapsed() >= std::time::Duration::from_millis(900), "waited for the deadline");

    let waiter = {
        let request = t.request(Method::GET, &format!("{op_path}?wait=30s"), &acme.token);
        tokio::spawn(async move { request.send().await.unwrap().json::<serde_json::Value>().await.unwrap() })
    };
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let op_id: moke_api::ids::OperationId = op["id"].as_str().unwrap().parse().unwrap();
    let started = std::time::Instant::now();
    t.app
        .record_operation_progress(OperationProgress {
            region: None,
            operation_id: op_id.uuid(),
            status: OperationStatus::Failed,
            step: "provisioning_control_plane".into(),
            progress: 40,
            error: Some(moke_api::model::OperationError { code: "no_capacity".into(), message: "region full".into() }),
        })
        .await
        .unwrap();
    let done = waiter.await.unwrap();
    assert_eq!(done["status"], "failed");
    assert_eq!(done["error"]["code"], "no_capacity");
    assert!(started.elapsed() < std::time::Duration::from_secs(5), "woken by the notification");

    let (status, problem) = t.get(&format!("{op_path}?wait=forever"), &acme.token).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(bad_fields(&problem), ["wait"]);
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn catalog_health_and_problem_answers(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let (status, regions) = t.send(t.client.get(format!("{}/v1/regions", t.base))).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(regions[0]["name"], "eu-central-1");
    let (_, versions) = t.send(t.client.get(format!("{}/v1/kubernetes-versions", t.base))).await;
    assert_eq!(versions.as_array().unwrap().iter().filter(|v| v["default"] == true).count(), 1);
    let (_, machines) = t.send(t.client.get(format!("{}/v1/machine-types", t.base))).await;
    assert_eq!(machines[0]["vcpus"], 8);

    let ready = t.client.get(format!("{}/readyz", t.base)).send().await.unwrap();
    assert_eq!(ready.status(), StatusCode::OK);
    let health = t.client.get(format!("{}/healthz", t.base)).send().await.unwrap();
    assert_eq!(health.status(), StatusCode::OK);

    // Request ids are echoed, or made up when absent.
    let response = t.client.get(format!("{}/healthz", t.base)).header("x-request-id", "req-42").send().await.unwrap();
    assert_eq!(response.headers()["x-request-id"], "req-42");
    let response = t.client.get(format!("{}/healthz", t.base)).send().await.unwrap();
    assert!(!response.headers()["x-request-id"].is_empty());

    let response = t.client.get(format!("{}/v1/orgs", t.base)).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(response.headers()["content-type"], "application/problem+json");
    assert_eq!(response.headers()["www-authenticate"], "Bearer");
    let response = t.client.get(format!("{}/v1/nothing", t.base)).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
    assert_eq!(response.headers()["content-type"], "application/problem+json");

    // Oversized bodies are refused before parsing.
    let acme = t.tenant("acme").await;
    let huge = json!({ "name": "x", "spec": { "description": "d".repeat(2 * 1024 * 1024) } });
    let (status, _) = t.post(&format!("/v1/orgs/{}/projects", acme.org), &acme.token, huge).await;
    assert!(status == StatusCode::PAYLOAD_TOO_LARGE || status == StatusCode::BAD_REQUEST, "{status}");

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
    let project = t.project(&acme, "web").await;
    let (status, viewer) = t
        .post(&format!("/v1/orgs/{}/tokens", acme.org), &acme.token, json!({ "name": "dashboards", "role": "viewer" }))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{viewer}");
    let viewer_token = viewer["token"].as_str().unwrap();
    assert!(viewer_token.starts_with("moke_"));

    let (status, _) = t.get(&format!("/v1/projects/{project}"), viewer_token).await;
    assert_eq!(status, StatusCode::OK);
    let (status, problem) = t
        .post(
            &format!("/v1/projects/{project}/clusters"),
            viewer_token,
            json!({ "name": "x", "spec": { "region": "eu-central-1" } }),
        )
        .await;
    assert_eq!((status, problem["code"].as_str()), (StatusCode::FORBIDDEN, Some("forbidden")));
    let (status, _) = t.get(&format!("/v1/orgs/{}/tokens", acme.org), viewer_token).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    // Nobody mints a token stronger than themselves.
    let (status, _) =
        t.post(&format!("/v1/orgs/{}/tokens", acme.org), viewer_token, json!({ "name": "x", "role": "owner" })).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
}
