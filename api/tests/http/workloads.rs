//! Deployments in hosted clusters, end to end: both ways of writing one
//! store the same spec, every change is a revision that the simulated region
//! rolls out, rollouts past their deadline fail and roll back, quotas hold.

use moke_api::model::{
    ClusterMetrics, DeploymentView, NamespaceView, NodeView, OperationStatus, OperationView, Page, RevisionView,
    ServiceView,
};
use moke_region::{AgentConfig, Transport};
use reqwest::StatusCode;
use serde_json::{Value, json};
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};

use crate::common::{BackgroundAgent, Client, TestApp, eventually, zones};

pub(crate) fn region(t: &TestApp) -> BackgroundAgent {
    BackgroundAgent::start(AgentConfig::new("eu-central-1", zones("eu-central-1")), Transport::Postgres(t.pool.clone()))
}

/// `op` once it has finished (waiting up to 30 s on the server).
async fn finished(client: &Client<'_>, op: &OperationView) -> OperationView {
    client.get(&format!("/v1/operations/{}?wait=30s", op.id)).await.expect(StatusCode::OK)
}

/// Checks `op` finished successfully.
async fn succeeds(client: &Client<'_>, op: &OperationView) {
    let done = finished(client, op).await;
    assert_eq!(done.status, OperationStatus::Succeeded, "{done:?}");
}

/// A project with a running cluster of three `bm.small` nodes: (project id, cluster id).
pub(crate) async fn running_cluster(client: &Client<'_>) -> (String, String) {
    let project = client.create_project("web").await.id.to_string();
    let (cluster, _) = client.create_cluster(&project, "prod", json!({ "region": "eu-central-1" })).await;
    let cluster = cluster.id.to_string();
    let (_, op) = client.create_node_pool(&project, &cluster, "workers", 3).await;
    succeeds(client, &op).await;
    (project, cluster)
}

/// A project with a cluster nobody runs: (project id, cluster id).
async fn idle_cluster(client: &Client<'_>) -> (String, String) {
    let project = client.create_project("web").await.id.to_string();
    let (cluster, _) = client.create_cluster(&project, "prod", json!({ "region": "eu-central-1" })).await;
    (project, cluster.id.to_string())
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn a_manifest_and_the_portable_contract_store_the_same_spec(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let acme = t.tenant("acme").await;
    let owner = t.client(&acme);
    let (project, cluster) = idle_cluster(&owner).await;
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
    owner
        .post::<OperationView>(&deployments, json!({ "name": "portable", "spec": portable }))
        .await
        .expect(StatusCode::ACCEPTED);
    owner
        .post::<OperationView>(&deployments, json!({ "name": "from-manifest", "manifest": manifest }))
        .await
        .expect(StatusCode::ACCEPTED);
    let a: DeploymentView = owner.get(&format!("{deployments}/portable")).await.expect(StatusCode::OK);
    let b: DeploymentView = owner.get(&format!("{deployments}/from-manifest")).await.expect(StatusCode::OK);
    assert_eq!(a.spec, b.spec, "the same stored spec");
    assert_eq!(a.spec.resources.cpu_millis, 250);
    assert_eq!(b.revision, 1);
    assert_eq!(b.status.phase, "pending");
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn bad_specs_and_manifests_name_every_field(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let acme = t.tenant("acme").await;
    let owner = t.client(&acme);
    let (project, cluster) = idle_cluster(&owner).await;
    let deployments = format!("/v1/projects/{project}/clusters/{cluster}/namespaces/default/deployments");

    let problem = owner
        .post::<OperationView>(
            &deployments,
            json!({ "name": "Bad_Name", "spec": {
                "image": "Not An Image", "replicas": -1,
                "ports": [{ "container_port": 70000 }],
                "strategy": { "max_surge": "0", "max_unavailable": "0%" },
                "tolerations": [{ "operator": "Sometimes" }],
            }}),
        )
        .await
        .refused(StatusCode::BAD_REQUEST);
    let fields = problem.fields();
    for field in [
        "name",
        "spec.image",
        "spec.replicas",
        "spec.ports[0].container_port",
        "spec.strategy",
        "spec.tolerations[0].operator",
    ] {
        assert!(fields.contains(&field), "{field} missing from {fields:?}");
    }

    let two_containers = json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "spec": { "selector": {}, "template": { "spec": { "containers": [
            { "name": "a", "image": "registry.example/a:1",
              "env": [{ "name": "SECRET", "valueFrom": { "secretKeyRef": { "name": "s", "key": "k" } } }] },
            { "name": "b", "image": "registry.example/b:1" },
        ]}}},
    });
    let problem = owner
        .post::<OperationView>(&deployments, json!({ "name": "two", "manifest": two_containers }))
        .await
        .refused(StatusCode::BAD_REQUEST);
    let fields = problem.fields();
    assert!(fields.contains(&"manifest.spec.template.spec.containers"), "{fields:?}");
    assert!(fields.contains(&"manifest.spec.template.spec.containers[0].env[0].valueFrom"), "{fields:?}");

    let problem = owner
        .post::<OperationView>(
            &deployments,
            json!({ "name": "svc", "manifest": { "apiVersion": "v1", "kind": "Service" } }),
        )
        .await
        .refused(StatusCode::BAD_REQUEST);
    assert_eq!(problem.fields(), ["manifest"]);
    owner.post::<OperationView>(&deployments, json!({ "name": "none" })).await.refused(StatusCode::BAD_REQUEST);
    assert_eq!(t.count("deployments").await, 0, "nothing refused was written");

    // Namespaces: unknown is 404, reserved names are refused.
    owner
        .post::<OperationView>(
            &format!("/v1/projects/{project}/clusters/{cluster}/namespaces/nope/deployments"),
            json!({ "name": "x", "spec": { "image": "registry.example/x:1" } }),
        )
        .await
        .refused(StatusCode::NOT_FOUND);
    owner
        .post::<NamespaceView>(
            &format!("/v1/projects/{project}/clusters/{cluster}/namespaces"),
            json!({ "name": "kube-x" }),
        )
        .await
        .refused(StatusCode::BAD_REQUEST);
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn every_change_is_a_revision_the_region_rolls_out(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let acme = t.tenant("acme").await;
    let owner = t.client(&acme);
    let _region = region(&t);
    let (project, cluster) = running_cluster(&owner).await;
    let spec = json!({
        "image": "registry.example/web:1", "replicas": 3,
        "strategy": { "max_surge": "1", "max_unavailable": "0" },
    });
    let (_, op) = owner.create_deployment(&project, &cluster, "web", spec).await;
    succeeds(&owner, &op).await;
    let path = format!("/v1/projects/{project}/clusters/{cluster}/namespaces/default/deployments/web");
    let view = async || owner.get::<DeploymentView>(&path).await.expect(StatusCode::OK);
    let web = view().await;
    assert_eq!(web.status.phase, "running", "{web:?}");
    assert_eq!((web.status.ready_replicas, web.status.updated_replicas), (3, 3));
    let zones: std::collections::BTreeSet<&str> = web.status.pods.iter().map(|p| p.zone.as_str()).collect();
    assert_eq!(zones.len(), 3, "pods spread over the zones: {web:?}");
    assert_eq!(web.last_good_revision, Some(1));
    // Nodes and requests as the region observes them.
    let cluster_path = format!("/v1/projects/{project}/clusters/{cluster}");
    let nodes: Page<NodeView> = owner.get(&format!("{cluster_path}/nodes")).await.expect(StatusCode::OK);
    let nodes = nodes.items;
    assert_eq!(nodes.len(), 3, "{nodes:?}");
    owner.walk_pages(&format!("{cluster_path}/nodes")).await;
    assert!(nodes.iter().all(|n| n.ready && n.allocatable_cpu_millis == 7750 && n.pods == 1), "{nodes:?}");
    let metrics: ClusterMetrics = owner.get(&format!("{cluster_path}/metrics")).await.expect(StatusCode::OK);
    assert_eq!(metrics.nodes, 3);
    assert_eq!(metrics.pods, 3);
    assert_eq!(metrics.requested_cpu_millis, 300, "3 pods × the default 100m: {metrics:?}");
    assert_eq!(metrics.allocatable_cpu_millis, 3 * 7750);
    assert_eq!(metrics.deployments[0].name, "web");
    assert_eq!(metrics.deployments[0].ready_pods, 3);

    // A new image rolls out as revision 2.
    let op: OperationView =
        owner.patch(&path, json!({ "spec": { "image": "registry.example/web:2" } })).await.expect(StatusCode::ACCEPTED);
    succeeds(&owner, &op).await;
    let web = view().await;
    assert_eq!((web.revision, web.template_revision), (2, 2));
    assert!(web.status.pods.iter().all(|p| p.revision == 2), "{web:?}");

    // Scaling is a revision too, but keeps the pods' template.
    let op: OperationView = owner.post(&format!("{path}/scale"), json!({ "replicas": 5 })).await.ok();
    succeeds(&owner, &op).await;
    let web = view().await;
    assert_eq!((web.revision, web.template_revision), (3, 2));
    assert_eq!(web.status.ready_replicas, 5);

    // Back to revision 1's image: a new revision with the old template.
    let op: OperationView = owner.post(&format!("{path}/rollback"), json!({ "revision": 1 })).await.ok();
    succeeds(&owner, &op).await;
    let web = view().await;
    assert_eq!(web.spec.image, "registry.example/web:1");
    assert_eq!(web.spec.replicas, 5, "rollback keeps the replica count");
    assert_eq!(web.template_revision, 4);

    // Paused: a template change waits; resume rolls it out.
    let op: OperationView = owner.post(&format!("{path}/pause"), json!(null)).await.ok();
    succeeds(&owner, &op).await;
    let op: OperationView = owner.patch(&path, json!({ "spec": { "image": "registry.example/web:3" } })).await.ok();
    succeeds(&owner, &op).await;
    let web = view().await;
    assert!(web.status.pods.iter().all(|p| p.revision == 4), "paused: {web:?}");
    let op: OperationView = owner.post(&format!("{path}/resume"), json!(null)).await.ok();
    succeeds(&owner, &op).await;
    let web = view().await;
    assert!(web.status.pods.iter().all(|p| p.revision == 6), "resumed: {web:?}");

    // Restart replaces every pod.
    let before: Vec<String> = web.status.pods.iter().map(|p| p.name.clone()).collect();
    let op: OperationView = owner.post(&format!("{path}/restart"), json!(null)).await.ok();
    succeeds(&owner, &op).await;
    let web = view().await;
    assert!(web.status.pods.iter().all(|p| !before.contains(&p.name)), "{web:?}");

    let revisions: Page<RevisionView> = owner.get(&format!("{path}/revisions")).await.expect(StatusCode::OK);
    let causes: Vec<&str> = revisions.items.iter().map(|r| r.cause.as_str()).collect();
    assert_eq!(causes, ["restart", "resume", "update", "pause", "rollback to 1", "scale", "update", "create"]);
    let numbers: Vec<i64> =
        owner.walk_pages(&format!("{path}/revisions")).await.iter().map(|r| r["revision"].as_i64().unwrap()).collect();
    assert_eq!(numbers, [8, 7, 6, 5, 4, 3, 2, 1], "newest first, page by page");

    // If-Match guards changes like everywhere else.
    let request = owner
        .request(reqwest::Method::PATCH, &path)
        .header("If-Match", "\"stale\"")
        .json(&json!({ "spec": { "replicas": 1 } }));
    owner.send::<OperationView>(request).await.refused(StatusCode::PRECONDITION_FAILED);

    // Delete: the pods go, then the deployment.
    let op: OperationView = owner.delete(&path).await.expect(StatusCode::ACCEPTED);
    succeeds(&owner, &op).await;
    eventually(10, "the deployment to be gone", async || {
        owner.get::<DeploymentView>(&path).await.status == StatusCode::NOT_FOUND
    })
    .await;
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn a_rollout_past_its_deadline_fails_and_rolls_back(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let acme = t.tenant("acme").await;
    let owner = t.client(&acme);
    let _region = region(&t);
    let (project, cluster) = running_cluster(&owner).await;
    let spec = json!({
        "image": "registry.example/web:1", "replicas": 2,
        "strategy": { "max_surge": "1", "max_unavailable": "0", "progress_deadline_seconds": 2, "auto_rollback": true },
    });
    let (_, op) = owner.create_deployment(&project, &cluster, "web", spec).await;
    succeeds(&owner, &op).await;
    let path = format!("/v1/projects/{project}/clusters/{cluster}/namespaces/default/deployments/web");

    // Pods asking for more CPU than any node has never become ready.
    let op: OperationView = owner
        .patch(&path, json!({ "spec": { "image": "registry.example/web:2", "resources": { "cpu_millis": 64000 } } }))
        .await
        .ok();
    let failed = finished(&owner, &op).await;
    assert_eq!(failed.status, OperationStatus::Failed, "{failed:?}");
    let error = failed.error.clone().unwrap_or_else(|| panic!("{failed:?}"));
    assert_eq!(error.code, "progress_deadline_exceeded");
    assert!(error.message.contains("rolled back to revision 1"), "{failed:?}");

    // The automatic rollback restores revision 1's template and rolls it out.
    let view = async || owner.get::<DeploymentView>(&path).await.expect(StatusCode::OK);
    eventually(20, "the rollback to roll out", async || {
        let web = view().await;
        web.template_revision == 3 && web.status.ready_replicas == 2 && web.last_good_revision == Some(3)
    })
    .await;
    let web = view().await;
    assert_eq!(web.spec.image, "registry.example/web:1");
    assert_eq!(web.spec.resources.cpu_millis, 100);
    assert_eq!(web.status.phase, "failed", "the failure stays visible: {web:?}");
    assert_eq!(web.status.last_error.as_ref().map(|e| e.code.as_str()), Some("progress_deadline_exceeded"));
    let revisions: Page<RevisionView> = owner.get(&format!("{path}/revisions")).await.expect(StatusCode::OK);
    assert_eq!(revisions.items[0].cause, "automatic rollback to 1");
    assert_eq!(revisions.items[0].created_by, "system");
    let audited: i64 =
        sqlx::query_scalar("SELECT count(*) FROM audit_events WHERE action = 'deployment.rollout_failed'")
            .fetch_one(&t.pool)
            .await
            .unwrap();
    assert_eq!(audited, 1);

    // A person's next change clears the failure.
    let op: OperationView = owner.post(&format!("{path}/scale"), json!({ "replicas": 3 })).await.ok();
    succeeds(&owner, &op).await;
    let web = view().await;
    assert_eq!(web.status.phase, "running", "{web:?}");
    assert!(web.status.last_error.is_none());
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn workload_quotas_hold_per_cluster(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start_with(options, connect, |config| {
        config.workload_quotas.max_deployments_per_cluster = 2;
        config.workload_quotas.max_requested_cpu_millis_per_cluster = 4000;
    })
    .await;
    let acme = t.tenant("acme").await;
    let owner = t.client(&acme);
    let (project, cluster) = idle_cluster(&owner).await;
    let deployments = format!("/v1/projects/{project}/clusters/{cluster}/namespaces/default/deployments");
    let spec = |replicas: i64| json!({ "image": "registry.example/x:1", "replicas": replicas, "resources": { "cpu_millis": 1000 } });
    owner.create_deployment(&project, &cluster, "a", spec(2)).await;
    // 2 + 3 CPUs would pass 4.
    let problem = owner
        .post::<OperationView>(&deployments, json!({ "name": "b", "spec": spec(3) }))
        .await
        .refused_with(StatusCode::CONFLICT, "quota_exceeded");
    assert!(problem.detail.contains("requested_cpu_millis_per_cluster"), "{problem:?}");
    owner.create_deployment(&project, &cluster, "b", spec(1)).await;
    let problem = owner
        .post::<OperationView>(&deployments, json!({ "name": "c", "spec": spec(1) }))
        .await
        .refused(StatusCode::CONFLICT);
    assert!(problem.detail.contains("deployments_per_cluster"), "{problem:?}");
    // Scaling up counts too.
    owner
        .post::<OperationView>(&format!("{deployments}/a/scale"), json!({ "replicas": 4 }))
        .await
        .refused(StatusCode::CONFLICT);
    assert_eq!(t.count("deployments").await, 2);

    // Namespaces hold deployments; default cannot go, a non-empty one neither.
    let namespaces = format!("/v1/projects/{project}/clusters/{cluster}/namespaces");
    owner.post::<NamespaceView>(&namespaces, json!({ "name": "staging" })).await.expect(StatusCode::CREATED);
    let list: Page<NamespaceView> = owner.get(&namespaces).await.expect(StatusCode::OK);
    let names: Vec<&str> = list.items.iter().map(|n| n.name.as_str()).collect();
    assert_eq!(names, ["default", "staging"], "in creation order");
    owner.walk_pages(&namespaces).await;
    owner.delete::<()>(&format!("{namespaces}/default")).await.refused_with(StatusCode::CONFLICT, "protected");
    owner.delete::<()>(&format!("{namespaces}/staging")).await.expect(StatusCode::NO_CONTENT);
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn services_show_the_pods_they_select(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let acme = t.tenant("acme").await;
    let owner = t.client(&acme);
    let _region = region(&t);
    let (project, cluster) = running_cluster(&owner).await;
    let (_, op) = owner
        .create_deployment(&project, &cluster, "web", json!({ "image": "registry.example/web:1", "replicas": 2 }))
        .await;
    succeeds(&owner, &op).await;
    let services = format!("/v1/projects/{project}/clusters/{cluster}/namespaces/default/services");

    let portable = json!({ "type": "NodePort", "selector": { "app": "web" },
                           "ports": [{ "name": "http", "port": 80, "target_port": 8080 }] });
    let manifest = json!({ "apiVersion": "v1", "kind": "Service", "metadata": { "name": "web-k8s" },
        "spec": { "type": "NodePort", "selector": { "app": "web" },
                  "ports": [{ "name": "http", "port": 80, "targetPort": 8080 }] } });
    let web: ServiceView =
        owner.post(&services, json!({ "name": "web", "spec": portable })).await.expect(StatusCode::CREATED);
    let k8s: ServiceView =
        owner.post(&services, json!({ "name": "web-k8s", "manifest": manifest })).await.expect(StatusCode::CREATED);
    assert_eq!(web.cluster_ip, "10.96.0.10");
    assert_eq!(k8s.cluster_ip, "10.96.0.11");
    assert_eq!(web.spec.ports[0].node_port, Some(30000));
    assert_eq!(k8s.spec.ports[0].node_port, Some(30001), "node ports are unique in the cluster");
    let strip = |mut spec: moke_api::model::ServiceSpec| {
        spec.ports[0].node_port = None;
        spec
    };
    assert_eq!(strip(web.spec.clone()), strip(k8s.spec.clone()), "the same stored spec");

    // Endpoints: the web deployment's two pods, on the target port.
    assert_eq!(web.endpoints.len(), 2, "{web:?}");
    assert!(web.endpoints.iter().all(|e| e.port == 8080 && e.ready && e.ip.starts_with("10.")), "{web:?}");

    // A selector that matches nothing has no endpoints; bad specs name their fields.
    owner
        .patch::<ServiceView>(&format!("{services}/web"), json!({ "spec": { "selector": { "app": "api" } } }))
        .await
        .expect(StatusCode::OK);
    let web: ServiceView = owner.get(&format!("{services}/web")).await.expect(StatusCode::OK);
    assert!(web.endpoints.is_empty());
    let problem = owner
        .post::<ServiceView>(
            &services,
            json!({ "name": "lb", "spec": { "type": "LoadBalancer", "selector": {}, "ports": [] } }),
        )
        .await
        .refused(StatusCode::BAD_REQUEST);
    let fields = problem.fields();
    for field in ["spec.type", "spec.selector", "spec.ports"] {
        assert!(fields.contains(&field), "{field}: {fields:?}");
    }
    // Ports are named as Kubernetes names them: every one of several, each once.
    let ports = json!([{ "port": 80 }, { "name": "Web_1", "port": 81 }, { "name": "a", "port": 82 },
                       { "name": "a", "port": 83 }, { "name": "80", "port": 84 }, { "name": "a--b", "port": 85 }]);
    let problem = owner
        .post::<ServiceView>(
            &services,
            json!({ "name": "ports", "spec": { "selector": { "app": "web" }, "ports": ports } }),
        )
        .await
        .refused(StatusCode::BAD_REQUEST);
    let named =
        ["spec.ports[0].name", "spec.ports[1].name", "spec.ports[3].name", "spec.ports[4].name", "spec.ports[5].name"];
    assert_eq!(problem.fields(), named);
    let many: Vec<Value> = (1..=101).map(|p| json!({ "name": format!("p{p}"), "port": p })).collect();
    let problem = owner
        .post::<ServiceView>(
            &services,
            json!({ "name": "many", "spec": { "selector": { "app": "web" }, "ports": many } }),
        )
        .await
        .refused(StatusCode::BAD_REQUEST);
    assert_eq!(problem.fields(), ["spec.ports"]);
    // `default/kubernetes` is the cluster's own API server Service.
    let own = json!({ "name": "kubernetes", "spec": { "selector": { "app": "web" }, "ports": [{ "port": 443 }] } });
    let problem = owner.post::<ServiceView>(&services, own).await.refused(StatusCode::BAD_REQUEST);
    assert_eq!(problem.fields(), ["name"]);
    let names: Vec<String> =
        owner.walk_pages(&services).await.iter().map(|s| s["name"].as_str().unwrap().to_string()).collect();
    assert_eq!(names, ["web", "web-k8s"], "in creation order");
    // A page shows each service's own endpoints, as reading it alone does.
    let page: Page<ServiceView> = owner.get(&services).await.expect(StatusCode::OK);
    assert_eq!(page.items.iter().map(|s| s.endpoints.len()).collect::<Vec<_>>(), [0, 2], "{page:?}");
    for listed in &page.items {
        let alone: ServiceView = owner.get(&format!("{services}/{}", listed.name)).await.expect(StatusCode::OK);
        assert_eq!(listed.endpoints, alone.endpoints, "{}", listed.name);
    }
    owner.delete::<()>(&format!("{services}/web")).await.expect(StatusCode::NO_CONTENT);
    let list: Page<ServiceView> = owner.get(&services).await.expect(StatusCode::OK);
    assert_eq!(list.items.len(), 1);

    // A service stored before port names were required keeps its ports
    // through a change of its labels alone; a change of its spec names them.
    sqlx::query(
        r#"UPDATE services SET spec = jsonb_set(spec, '{ports}', jsonb_build_array(
               (spec->'ports'->0) - 'name', ((spec->'ports'->0) - 'name') || '{"port": 81, "node_port": 30400}'))
           WHERE name = 'web-k8s'"#,
    )
    .execute(&t.pool)
    .await
    .unwrap();
    let old = format!("{services}/web-k8s");
    let relabelled: ServiceView =
        owner.patch(&old, json!({ "labels": { "tier": "web" } })).await.expect(StatusCode::OK);
    assert_eq!(relabelled.spec.ports.len(), 2);
    let problem = owner
        .patch::<ServiceView>(&old, json!({ "spec": { "selector": { "app": "web", "tier": "front" } } }))
        .await
        .refused(StatusCode::BAD_REQUEST);
    assert_eq!(problem.fields(), ["spec.ports[0].name", "spec.ports[1].name"]);
}

/// A customer who picks gRPC deploys with it alone: a namespace, a
/// deployment whose rollout they watch as a server stream, a scale and a
/// rollback, each answering an Operation in google.longrunning's shape; REST
/// and GraphQL then show the same deployment.
#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn a_workload_deploys_end_to_end_over_grpc(options: PgPoolOptions, connect: PgConnectOptions) {
    use moke_proto::v1::deployment_service_client::DeploymentServiceClient;
    use moke_proto::v1::namespace_service_client::NamespaceServiceClient;
    use moke_proto::v1::operation_service_client::OperationServiceClient;
    use moke_proto::v1::{self as pb, create_deployment_request::Source};
    use tonic::transport::Channel;

    use crate::grpc::{Bearer, metadata};

    let t = TestApp::start(options, connect).await;
    let acme = t.tenant("acme").await;
    let owner = t.client(&acme);
    let _region = region(&t);
    let (project, cluster) = running_cluster(&owner).await;
    let channel = Channel::from_shared(t.base.clone()).unwrap().connect().await.unwrap();
    let bearer = Bearer(format!("Bearer {}", acme.token).parse().unwrap());
    let mut namespaces = NamespaceServiceClient::with_interceptor(channel.clone(), bearer.clone());
    let mut deployments = DeploymentServiceClient::with_interceptor(channel.clone(), bearer.clone());
    let mut operations = OperationServiceClient::with_interceptor(channel, bearer);
    let place = |deployment: &str| (project.clone(), cluster.clone(), "shop".to_string(), deployment.to_string());
    let finished = async |operations: &mut OperationServiceClient<_>, op: pb::Operation| {
        let mut stream =
            operations.watch_operation(pb::GetOperationRequest { operation: op.name }).await.unwrap().into_inner();
        let mut last = None;
        while let Some(update) = stream.message().await.unwrap() {
            last = Some(update);
        }
        let last = last.expect("a watch sends the operation at least once");
        assert!(last.done, "the watch ends once the operation is done");
        assert!(matches!(last.result, Some(pb::operation::Result::Response(_))), "{last:?}");
        metadata(&last)
    };

    namespaces
        .create_namespace(pb::CreateNamespaceRequest {
            project: project.clone(),
            cluster: cluster.clone(),
            name: "shop".into(),
            request_id: "ns-1".into(),
        })
        .await
        .unwrap();
    let (p, c, n, _) = place("web");
    let create = pb::CreateDeploymentRequest {
        project: p.clone(),
        cluster: c.clone(),
        namespace: n.clone(),
        name: "web".into(),
        source: Some(Source::Spec(pb::DeploymentSpec {
            image: "registry.example/web:1".into(),
            replicas: Some(2),
            ..Default::default()
        })),
        request_id: "web-1".into(),
        ..Default::default()
    };
    let op = deployments.create_deployment(create.clone()).await.unwrap().into_inner();
    let again = deployments.create_deployment(create).await.unwrap().into_inner();
    assert_eq!(again.name, op.name, "request_id answers a retry with the first Operation");

    // The rollout, followed as a stream until it is complete.
    let watch = pb::WatchDeploymentRolloutRequest {
        project: p.clone(),
        cluster: c.clone(),
        namespace: n.clone(),
        deployment: "web".into(),
    };
    let mut rollout = deployments.watch_deployment_rollout(watch).await.unwrap().into_inner();
    let mut last = None;
    while let Some(update) = rollout.message().await.unwrap() {
        last = Some(update);
    }
    let web = last.expect("the rollout watch sends the deployment");
    let status = web.status.clone().unwrap();
    assert_eq!((status.phase.as_str(), status.ready_replicas), ("running", 2), "{web:?}");
    assert_eq!(finished(&mut operations, op).await.status, "succeeded");

    let scale = pb::ScaleDeploymentRequest {
        project: p.clone(),
        cluster: c.clone(),
        namespace: n.clone(),
        deployment: "web".into(),
        replicas: 3,
        etag: web.etag.clone(),
        request_id: "scale-1".into(),
    };
    let op = deployments.scale_deployment(scale).await.unwrap().into_inner();
    assert_eq!(finished(&mut operations, op).await.kind, "deployment_scale");
    // A new image, then back to the first revision's.
    let update = pb::UpdateDeploymentRequest {
        project: p.clone(),
        cluster: c.clone(),
        namespace: n.clone(),
        deployment: "web".into(),
        change: Some(pb::update_deployment_request::Change::Spec(pb::DeploymentSpec {
            image: "registry.example/web:2".into(),
            ..Default::default()
        })),
        update_mask: Some(prost_types::FieldMask { paths: vec!["spec.image".into()] }),
        ..Default::default()
    };
    let op = deployments.update_deployment(update).await.unwrap().into_inner();
    assert_eq!(finished(&mut operations, op).await.status, "succeeded");
    let rollback = pb::RollbackDeploymentRequest {
        project: p.clone(),
        cluster: c.clone(),
        namespace: n.clone(),
        deployment: "web".into(),
        revision: Some(1),
        request_id: "rollback-1".into(),
        ..Default::default()
    };
    let op = deployments.rollback_deployment(rollback).await.unwrap().into_inner();
    assert_eq!(finished(&mut operations, op).await.kind, "deployment_rollback");

    // REST and GraphQL see what gRPC made.
    let path = format!("/v1/projects/{project}/clusters/{cluster}/namespaces/shop/deployments/web");
    let rest: DeploymentView = owner.get(&path).await.expect(StatusCode::OK);
    assert_eq!((rest.spec.replicas, rest.id.to_string()), (3, web.id.clone()));
    assert_eq!(rest.spec.image, "registry.example/web:1", "rolled back to the first image");
    let (status, answer) = t
        .send(t.request(reqwest::Method::POST, "/graphql", &acme.token).json(&json!({
            "query": "query($p: String!, $c: String!) { deployment(project: $p, cluster: $c, \
                namespace: \"shop\", deployment: \"web\") { id spec { replicas image } } }",
            "variables": { "p": project, "c": cluster },
        })))
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(answer["data"]["deployment"]["id"], json!(web.id), "{answer}");
    assert_eq!(answer["data"]["deployment"]["spec"]["replicas"], json!(3), "{answer}");
    assert_eq!(answer["data"]["deployment"]["spec"]["image"], json!("registry.example/web:1"), "{answer}");
}

/// Runs the real `grpcurl` (from `GRPCURL`) against the gateway's gRPC
/// reflection with `token`: `method` with `request` as JSON, and returns
/// every message it printed (a server stream prints one per message).
fn grpcurl(base: &str, token: &str, method: &str, request: serde_json::Value) -> Vec<serde_json::Value> {
    let grpcurl = std::env::var("GRPCURL").expect("GRPCURL (cargo xtask test installs grpcurl)");
    let address = base.trim_start_matches("http://");
    let output = std::process::Command::new(grpcurl)
        .args(["-plaintext", "-max-time", "60", "-H", &format!("authorization: Bearer {token}"), "-d"])
        .arg(request.to_string())
        .args([address, method])
        .output()
        .expect("grpcurl runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "grpcurl {method}: {}\n{stdout}", String::from_utf8_lossy(&output.stderr));
    serde_json::Deserializer::from_str(&stdout).into_iter::<serde_json::Value>().map(|m| m.unwrap()).collect()
}

/// What a customer does with nothing but grpcurl and the server's
/// reflection: a project, a cluster with a node pool, a namespace, a
/// deployment whose rollout they watch, and a scale, each Operation
/// followed with WatchOperation until done.
#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn grpcurl_deploys_a_workload_through_reflection(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let acme = t.tenant("acme").await;
    let _region = region(&t);
    let (token, org, base) = (acme.token.clone(), acme.org.clone(), t.base.clone());
    // grpcurl runs as a process while the gateway serves on this runtime.
    tokio::task::spawn_blocking(move || {
        let call = |method: &str, request: serde_json::Value| grpcurl(&base, &token, method, request);
        let done = |operation: &serde_json::Value| {
            let name = operation["name"].as_str().expect("an Operation's name").to_string();
            let updates = call("moke.v1.OperationService/WatchOperation", json!({ "operation": name }));
            let last = updates.last().expect("the watch sends the operation").clone();
            assert_eq!(last["done"], json!(true), "{last}");
            assert!(last.get("response").is_some(), "succeeded: {last}");
            last
        };
        call("moke.v1.ProjectService/CreateProject", json!({ "org": org, "name": "web" }));
        let op = call(
            "moke.v1.ClusterService/CreateCluster",
            json!({ "project": "web", "name": "prod", "region": "eu-central-1", "requestId": "c-1" }),
        )
        .remove(0);
        assert_eq!(op["metadata"]["@type"], json!("type.googleapis.com/moke.v1.OperationMetadata"), "{op}");
        let op = call(
            "moke.v1.NodePoolService/CreateNodePool",
            json!({ "project": "web", "cluster": "prod", "name": "workers",
                    "spec": { "machineType": "bm.small", "count": 3 } }),
        )
        .remove(0);
        done(&op);
        call(
            "moke.v1.NamespaceService/CreateNamespace",
            json!({ "project": "web", "cluster": "prod", "name": "shop" }),
        );
        let at = json!({ "project": "web", "cluster": "prod", "namespace": "shop" });
        let mut create = at.clone();
        create["name"] = json!("web");
        create["spec"] = json!({ "image": "registry.example/web:1", "replicas": 2 });
        done(&call("moke.v1.DeploymentService/CreateDeployment", create).remove(0));
        let mut which = at.clone();
        which["deployment"] = json!("web");
        let rollout = call("moke.v1.DeploymentService/WatchDeploymentRollout", which.clone());
        let last = rollout.last().expect("the rollout watch sends the deployment");
        assert_eq!(last["status"]["phase"], json!("running"), "{last}");
        let mut scale = which.clone();
        scale["replicas"] = json!(3);
        let scaled = done(&call("moke.v1.DeploymentService/ScaleDeployment", scale).remove(0));
        assert_eq!(scaled["metadata"]["kind"], json!("deployment_scale"), "{scaled}");
        let web = call("moke.v1.DeploymentService/GetDeployment", which).remove(0);
        assert_eq!(web["spec"]["replicas"], json!("3"), "int64 is a JSON string in protojson: {web}");
    })
    .await
    .unwrap();
}
