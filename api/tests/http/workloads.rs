//! Deployments in hosted clusters, end to end: both ways of writing one
//! store the same spec, every change is a revision that the simulated region
//! rolls out, rollouts past their deadline fail and roll back, quotas hold.

use moke_region::{AgentConfig, Transport};
use reqwest::StatusCode;
use serde_json::{Value, json};
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};

use crate::common::{BackgroundAgent, Tenant, TestApp, bad_fields, eventually, zones};

fn region(t: &TestApp) -> BackgroundAgent {
    BackgroundAgent::start(AgentConfig::new("eu-central-1", zones("eu-central-1")), Transport::Postgres(t.pool.clone()))
}

async fn finished(t: &TestApp, tenant: &Tenant, op: &Value) -> Value {
    let (status, view) = t
        .get(&format!("/v1/operations/{}?wait=30s", op["id"].as_str().unwrap_or_else(|| panic!("{op}"))), &tenant.token)
        .await;
    assert_eq!(status, StatusCode::OK, "{view}");
    view
}

/// A project with a running cluster of three `bm.small` nodes.
async fn running_cluster(t: &TestApp, tenant: &Tenant) -> (String, String) {
    let project = t.project(tenant, "web").await;
    let (cluster, _) = t.cluster(tenant, &project, "prod").await;
    let (_, op) = t.node_pool(tenant, &project, &cluster, "workers", 3).await;
    assert_eq!(finished(t, tenant, &op).await["status"], "succeeded");
    (project, cluster)
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn a_manifest_and_the_portable_contract_store_the_same_spec(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let acme = t.tenant("acme").await;
    let project = t.project(&acme, "web").await;
    let (cluster, _) = t.cluster(&acme, &project, "prod").await;
    let portable = json!({
        "image": "registry.example.com/shop/web:1.4.2",
        "replicas": 3,
        "ports": [{ "name": "http", "container_port": 8080 }],
        "env": [{ "name": "MODE", "value": "production" }],
        "resources": { "cpu_millis": 250, "memory_mib": 512 },
        "probes": { "readiness": { "http_path": "/healthz", "port": 8080, "period_seconds": 5 } },
        "strategy": { "max_surge": "1", "max_unavailable": "0", "progress_deadline_seconds": 300, "auto_rollback": true },
        "pod_labels": { "app": "web" },
        "node_selector": { "disk": "ssd" },
        "tolerations": [{ "key": "dedicated", "operator": "Exists", "effect": "NoSchedule" }],
    });
    let manifest = json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": { "name": "from-manifest", "annotations": { "moke.cloud/auto-rollback": "true" } },
        "spec": {
            "replicas": 3,
            "progressDeadlineSeconds": 300,
            "strategy": { "type": "RollingUpdate", "rollingUpdate": { "maxSurge": 1, "maxUnavailable": 0 } },
            "selector": { "matchLabels": { "app": "web" } },
            "template": {
                "metadata": { "labels": { "app": "web" } },
                "spec": {
                    "nodeSelector": { "disk": "ssd" },
                    "tolerations": [{ "key": "dedicated", "operator": "Exists", "effect": "NoSchedule" }],
                    "containers": [{
                        "name": "web",
                        "image": "registry.example.com/shop/web:1.4.2",
                        "ports": [{ "name": "http", "containerPort": 8080 }],
                        "env": [{ "name": "MODE", "value": "production" }],
                        "resources": { "requests": { "cpu": "250m", "memory": "512Mi" } },
                        "readinessProbe": { "httpGet": { "path": "/healthz", "port": "http" }, "periodSeconds": 5 },
                    }],
                },
            },
        },
    });
    let deployments = format!("/v1/projects/{project}/clusters/{cluster}/namespaces/default/deployments");
    let (status, _) = t.post(&deployments, &acme.token, json!({ "name": "portable", "spec": portable })).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    let (status, body) =
        t.post(&deployments, &acme.token, json!({ "name": "from-manifest", "manifest": manifest })).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    let (_, a) = t.get(&format!("{deployments}/portable"), &acme.token).await;
    let (_, b) = t.get(&format!("{deployments}/from-manifest"), &acme.token).await;
    assert_eq!(a["spec"], b["spec"], "the same stored spec");
    assert_eq!(a["spec"]["resources"]["cpu_millis"], 250);
    assert_eq!(b["revision"], 1);
    assert_eq!(b["status"]["phase"], "pending");
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn bad_specs_and_manifests_name_every_field(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let acme = t.tenant("acme").await;
    let project = t.project(&acme, "web").await;
    let (cluster, _) = t.cluster(&acme, &project, "prod").await;
    let deployments = format!("/v1/projects/{project}/clusters/{cluster}/namespaces/default/deployments");

    let (status, problem) = t
        .post(
            &deployments,
            &acme.token,
            json!({ "name": "Bad_Name", "spec": {
                "image": "Not An Image", "replicas": -1,
                "ports": [{ "container_port": 70000 }],
                "strategy": { "max_surge": "0", "max_unavailable": "0%" },
                "tolerations": [{ "operator": "Sometimes" }],
            }}),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{problem}");
    let fields = bad_fields(&problem);
    for field in [
        "name",
        "spec.image",
        "spec.replicas",
        "spec.ports[0].container_port",
        "spec.strategy",
        "spec.tolerations[0].operator",
    ] {
        assert!(fields.contains(&field.to_string()), "{field} missing from {fields:?}");
    }

    let two_containers = json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "spec": { "selector": {}, "template": { "spec": { "containers": [
            { "name": "a", "image": "registry.example/a:1",
              "env": [{ "name": "SECRET", "valueFrom": { "secretKeyRef": { "name": "s", "key": "k" } } }] },
            { "name": "b", "image": "registry.example/b:1" },
        ]}}},
    });
    let (status, problem) =
        t.post(&deployments, &acme.token, json!({ "name": "two", "manifest": two_containers })).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{problem}");
    let fields = bad_fields(&problem);
    assert!(fields.contains(&"manifest.spec.template.spec.containers".to_string()), "{fields:?}");
    assert!(fields.contains(&"manifest.spec.template.spec.containers[0].env[0].valueFrom".to_string()), "{fields:?}");

    let (status, problem) = t
        .post(
            &deployments,
            &acme.token,
            json!({ "name": "svc", "manifest": { "apiVersion": "v1", "kind": "Service" } }),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(bad_fields(&problem), ["manifest"]);
    let (status, _) = t.post(&deployments, &acme.token, json!({ "name": "none" })).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(t.count("deployments").await, 0, "nothing refused was written");

    // Namespaces: unknown is 404, reserved names are refused.
    let (status, _) = t
        .post(
            &format!("/v1/projects/{project}/clusters/{cluster}/namespaces/nope/deployments"),
            &acme.token,
            json!({ "name": "x", "spec": { "image": "registry.example/x:1" } }),
        )
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _) = t
        .post(
            &format!("/v1/projects/{project}/clusters/{cluster}/namespaces"),
            &acme.token,
            json!({ "name": "kube-x" }),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn every_change_is_a_revision_the_region_rolls_out(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let acme = t.tenant("acme").await;
    let _region = region(&t);
    let (project, cluster) = running_cluster(&t, &acme).await;
    let spec = json!({
        "image": "registry.example/web:1", "replicas": 3,
        "strategy": { "max_surge": "1", "max_unavailable": "0" },
    });
    let (_, op) = t.deployment(&acme, &project, &cluster, "web", spec).await;
    assert_eq!(finished(&t, &acme, &op).await["status"], "succeeded");
    let path = format!("/v1/projects/{project}/clusters/{cluster}/namespaces/default/deployments/web");
    let view = async || t.get(&path, &acme.token).await.1;
    let web = view().await;
    assert_eq!(web["status"]["phase"], "running", "{web}");
    assert_eq!(
        (web["status"]["ready_replicas"].as_i64(), web["status"]["updated_replicas"].as_i64()),
        (Some(3), Some(3))
    );
    let zones: std::collections::BTreeSet<&str> =
        web["status"]["pods"].as_array().unwrap().iter().map(|p| p["zone"].as_str().unwrap()).collect();
    assert_eq!(zones.len(), 3, "pods spread over the zones: {web}");
    assert_eq!(web["last_good_revision"], 1);
    // Nodes and requests as the region observes them.
    let cluster_path = format!("/v1/projects/{project}/clusters/{cluster}");
    let (_, nodes) = t.get(&format!("{cluster_path}/nodes"), &acme.token).await;
    let nodes = nodes.as_array().unwrap().clone();
    assert_eq!(nodes.len(), 3, "{nodes:?}");
    assert!(nodes.iter().all(|n| n["ready"] == true && n["allocatable_cpu_millis"] == 7750 && n["pods"] == 1));
    let (_, metrics) = t.get(&format!("{cluster_path}/metrics"), &acme.token).await;
    assert_eq!(metrics["nodes"], 3);
    assert_eq!(metrics["pods"], 3);
    assert_eq!(metrics["requested_cpu_millis"], 300, "3 pods × the default 100m: {metrics}");
    assert_eq!(metrics["allocatable_cpu_millis"], 3 * 7750);
    assert_eq!(metrics["deployments"][0]["name"], "web");
    assert_eq!(metrics["deployments"][0]["ready_pods"], 3);

    // A new image rolls out as revision 2.
    let (status, op) = t.patch(&path, &acme.token, json!({ "spec": { "image": "registry.example/web:2" } })).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{op}");
    assert_eq!(finished(&t, &acme, &op).await["status"], "succeeded");
    let web = view().await;
    assert_eq!((web["revision"].as_i64(), web["template_revision"].as_i64()), (Some(2), Some(2)));
    assert!(web["status"]["pods"].as_array().unwrap().iter().all(|p| p["revision"] == 2), "{web}");

    // Scaling is a revision too, but keeps the pods' template.
    let (_, op) = t.post(&format!("{path}/scale"), &acme.token, json!({ "replicas": 5 })).await;
    assert_eq!(finished(&t, &acme, &op).await["status"], "succeeded");
    let web = view().await;
    assert_eq!((web["revision"].as_i64(), web["template_revision"].as_i64()), (Some(3), Some(2)));
    assert_eq!(web["status"]["ready_replicas"], 5);

    // Back to revision 1's image: a new revision with the old template.
    let (_, op) = t.post(&format!("{path}/rollback"), &acme.token, json!({ "revision": 1 })).await;
    assert_eq!(finished(&t, &acme, &op).await["status"], "succeeded");
    let web = view().await;
    assert_eq!(web["spec"]["image"], "registry.example/web:1");
    assert_eq!(web["spec"]["replicas"], 5, "rollback keeps the replica count");
    assert_eq!(web["template_revision"], 4);

    // Paused: a template change waits; resume rolls it out.
    let (_, op) = t.post(&format!("{path}/pause"), &acme.token, json!(null)).await;
    assert_eq!(finished(&t, &acme, &op).await["status"], "succeeded");
    let (_, op) = t.patch(&path, &acme.token, json!({ "spec": { "image": "registry.example/web:3" } })).await;
    assert_eq!(finished(&t, &acme, &op).await["status"], "succeeded");
    let web = view().await;
    assert!(web["status"]["pods"].as_array().unwrap().iter().all(|p| p["revision"] == 4), "paused: {web}");
    let (_, op) = t.post(&format!("{path}/resume"), &acme.token, json!(null)).await;
    assert_eq!(finished(&t, &acme, &op).await["status"], "succeeded");
    let web = view().await;
    assert!(web["status"]["pods"].as_array().unwrap().iter().all(|p| p["revision"] == 6), "resumed: {web}");

    // Restart replaces every pod.
    let before: Vec<Value> = web["status"]["pods"].as_array().unwrap().iter().map(|p| p["name"].clone()).collect();
    let (_, op) = t.post(&format!("{path}/restart"), &acme.token, json!(null)).await;
    assert_eq!(finished(&t, &acme, &op).await["status"], "succeeded");
    let web = view().await;
    assert!(web["status"]["pods"].as_array().unwrap().iter().all(|p| !before.contains(&p["name"])), "{web}");

    let (_, revisions) = t.get(&format!("{path}/revisions"), &acme.token).await;
    let causes: Vec<&str> = revisions.as_array().unwrap().iter().map(|r| r["cause"].as_str().unwrap()).collect();
    assert_eq!(causes, ["restart", "resume", "update", "pause", "rollback to 1", "scale", "update", "create"]);

    // If-Match guards changes like everywhere else.
    let request = t
        .request(reqwest::Method::PATCH, &path, &acme.token)
        .header("If-Match", "\"stale\"")
        .json(&json!({ "spec": { "replicas": 1 } }));
    assert_eq!(t.send(request).await.0, StatusCode::PRECONDITION_FAILED);

    // Delete: the pods go, then the deployment.
    let (status, op) = t.delete(&path, &acme.token).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    assert_eq!(finished(&t, &acme, &op).await["status"], "succeeded");
    eventually(10, "the deployment to be gone", async || t.get(&path, &acme.token).await.0 == StatusCode::NOT_FOUND)
        .await;
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn a_rollout_past_its_deadline_fails_and_rolls_back(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let acme = t.tenant("acme").await;
    let _region = region(&t);
    let (project, cluster) = running_cluster(&t, &acme).await;
    let spec = json!({
        "image": "registry.example/web:1", "replicas": 2,
        "strategy": { "max_surge": "1", "max_unavailable": "0", "progress_deadline_seconds": 2, "auto_rollback": true },
    });
    let (_, op) = t.deployment(&acme, &project, &cluster, "web", spec).await;
    assert_eq!(finished(&t, &acme, &op).await["status"], "succeeded");
    let path = format!("/v1/projects/{project}/clusters/{cluster}/namespaces/default/deployments/web");

    // Pods asking for more CPU than any node has never become ready.
    let (_, op) = t
        .patch(
            &path,
            &acme.token,
            json!({ "spec": { "image": "registry.example/web:2", "resources": { "cpu_millis": 64000 } } }),
        )
        .await;
    let failed = finished(&t, &acme, &op).await;
    assert_eq!(failed["status"], "failed", "{failed}");
    assert_eq!(failed["error"]["code"], "progress_deadline_exceeded");
    assert!(failed["error"]["message"].as_str().unwrap().contains("rolled back to revision 1"), "{failed}");

    // The automatic rollback restores revision 1's template and rolls it out.
    eventually(20, "the rollback to roll out", async || {
        let web = t.get(&path, &acme.token).await.1;
        web["template_revision"] == 3 && web["status"]["ready_replicas"] == 2 && web["last_good_revision"] == 3
    })
    .await;
    let (_, web) = t.get(&path, &acme.token).await;
    assert_eq!(web["spec"]["image"], "registry.example/web:1");
    assert_eq!(web["spec"]["resources"]["cpu_millis"], 100);
    assert_eq!(web["status"]["phase"], "failed", "the failure stays visible: {web}");
    assert_eq!(web["status"]["last_error"]["code"], "progress_deadline_exceeded");
    let (_, revisions) = t.get(&format!("{path}/revisions"), &acme.token).await;
    assert_eq!(revisions[0]["cause"], "automatic rollback to 1");
    assert_eq!(revisions[0]["created_by"], "system");
    let audited: i64 =
        sqlx::query_scalar("SELECT count(*) FROM audit_events WHERE action = 'deployment.rollout_failed'")
            .fetch_one(&t.pool)
            .await
            .unwrap();
    assert_eq!(audited, 1);

    // A person's next change clears the failure.
    let (_, op) = t.post(&format!("{path}/scale"), &acme.token, json!({ "replicas": 3 })).await;
    assert_eq!(finished(&t, &acme, &op).await["status"], "succeeded");
    let (_, web) = t.get(&path, &acme.token).await;
    assert_eq!(web["status"]["phase"], "running", "{web}");
    assert!(web["status"]["last_error"].is_null());
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn workload_quotas_hold_per_cluster(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start_with(options, connect, |config| {
        config.workload_quotas.max_deployments_per_cluster = 2;
        config.workload_quotas.max_requested_cpu_millis_per_cluster = 4000;
    })
    .await;
    let acme = t.tenant("acme").await;
    let project = t.project(&acme, "web").await;
    let (cluster, _) = t.cluster(&acme, &project, "prod").await;
    let deployments = format!("/v1/projects/{project}/clusters/{cluster}/namespaces/default/deployments");
    let spec = |replicas: i64| json!({ "image": "registry.example/x:1", "replicas": replicas, "resources": { "cpu_millis": 1000 } });
    t.deployment(&acme, &project, &cluster, "a", spec(2)).await;
    // 2 + 3 CPUs would pass 4.
    let (status, problem) = t.post(&deployments, &acme.token, json!({ "name": "b", "spec": spec(3) })).await;
    assert_eq!(status, StatusCode::CONFLICT, "{problem}");
    assert_eq!(problem["code"], "quota_exceeded");
    assert!(problem["detail"].as_str().unwrap().contains("requested_cpu_millis_per_cluster"), "{problem}");
    t.deployment(&acme, &project, &cluster, "b", spec(1)).await;
    let (status, problem) = t.post(&deployments, &acme.token, json!({ "name": "c", "spec": spec(1) })).await;
    assert_eq!(status, StatusCode::CONFLICT);
    assert!(problem["detail"].as_str().unwrap().contains("deployments_per_cluster"), "{problem}");
    // Scaling up counts too.
    let (status, _) = t.post(&format!("{deployments}/a/scale"), &acme.token, json!({ "replicas": 4 })).await;
    assert_eq!(status, StatusCode::CONFLICT);
    assert_eq!(t.count("deployments").await, 2);

    // Namespaces hold deployments; default cannot go, a non-empty one neither.
    let namespaces = format!("/v1/projects/{project}/clusters/{cluster}/namespaces");
    let (status, _) = t.post(&namespaces, &acme.token, json!({ "name": "staging" })).await;
    assert_eq!(status, StatusCode::CREATED);
    let (_, list) = t.get(&namespaces, &acme.token).await;
    let names: Vec<&str> = list.as_array().unwrap().iter().map(|n| n["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["default", "staging"]);
    let (status, problem) = t.delete(&format!("{namespaces}/default"), &acme.token).await;
    assert_eq!((status, problem["code"].as_str()), (StatusCode::CONFLICT, Some("protected")));
    let (status, _) = t.delete(&format!("{namespaces}/staging"), &acme.token).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn services_show_the_pods_they_select(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let acme = t.tenant("acme").await;
    let _region = region(&t);
    let (project, cluster) = running_cluster(&t, &acme).await;
    let (_, op) = t
        .deployment(&acme, &project, &cluster, "web", json!({ "image": "registry.example/web:1", "replicas": 2 }))
        .await;
    assert_eq!(finished(&t, &acme, &op).await["status"], "succeeded");
    let services = format!("/v1/projects/{project}/clusters/{cluster}/namespaces/default/services");

    let portable = json!({ "type": "NodePort", "selector": { "app": "web" },
                           "ports": [{ "name": "http", "port": 80, "target_port": 8080 }] });
    let manifest = json!({ "apiVersion": "v1", "kind": "Service", "metadata": { "name": "web-k8s" },
        "spec": { "type": "NodePort", "selector": { "app": "web" },
                  "ports": [{ "name": "http", "port": 80, "targetPort": 8080 }] } });
    let (status, web) = t.post(&services, &acme.token, json!({ "name": "web", "spec": portable })).await;
    assert_eq!(status, StatusCode::CREATED, "{web}");
    let (status, k8s) = t.post(&services, &acme.token, json!({ "name": "web-k8s", "manifest": manifest })).await;
    assert_eq!(status, StatusCode::CREATED, "{k8s}");
    assert_eq!(web["cluster_ip"], "10.96.0.10");
    assert_eq!(k8s["cluster_ip"], "10.96.0.11");
    assert_eq!(web["spec"]["ports"][0]["node_port"], 30000);
    assert_eq!(k8s["spec"]["ports"][0]["node_port"], 30001, "node ports are unique in the cluster");
    let strip = |mut spec: Value| {
        spec["ports"][0]["node_port"] = Value::Null;
        spec
    };
    assert_eq!(strip(web["spec"].clone()), strip(k8s["spec"].clone()), "the same stored spec");

    // Endpoints: the web deployment's two pods, on the target port.
    let endpoints = web["endpoints"].as_array().unwrap();
    assert_eq!(endpoints.len(), 2, "{web}");
    assert!(
        endpoints
            .iter()
            .all(|e| e["port"] == 8080 && e["ready"] == true && e["ip"].as_str().unwrap().starts_with("10."))
    );

    // A selector that matches nothing has no endpoints; bad specs name their fields.
    let (status, _) =
        t.patch(&format!("{services}/web"), &acme.token, json!({ "spec": { "selector": { "app": "api" } } })).await;
    assert_eq!(status, StatusCode::OK);
    let (_, web) = t.get(&format!("{services}/web"), &acme.token).await;
    assert!(web["endpoints"].as_array().unwrap().is_empty());
    let (status, problem) = t
        .post(
            &services,
            &acme.token,
            json!({ "name": "lb", "spec": { "type": "LoadBalancer", "selector": {}, "ports": [] } }),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let fields = bad_fields(&problem);
    for field in ["spec.type", "spec.selector", "spec.ports"] {
        assert!(fields.contains(&field.to_string()), "{field}: {fields:?}");
    }

    let (status, _) = t.delete(&format!("{services}/web"), &acme.token).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (_, list) = t.get(&services, &acme.token).await;
    assert_eq!(list.as_array().unwrap().len(), 1);
}
