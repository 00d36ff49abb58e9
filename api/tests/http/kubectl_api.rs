//! A hosted cluster's API as customers use it, with the real `kubectl`:
//! apply of a multi-document file, get with Table output, rollout status
//! and scale (which watch), a stale update refused, RBAC from the Moke role
//! in the certificate, and one state with Moke's own API.

use std::path::PathBuf;

use moke_api::model::{ClusterView, KubeconfigView};
use reqwest::StatusCode;
use serde_json::{Value, json};
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};

use crate::common::{Client, Tenant, TestApp, eventually};
use crate::kubeconfig::Kubectl;
use crate::workloads::{region, running_cluster};

const SHOP: &str = r#"apiVersion: v1
kind: Namespace
metadata:
  name: shop
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: shop
data:
  MODE: production
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
spec:
  replicas: 2
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: web
        image: registry.example.com/shop/web:1
        resources:
          requests:
            cpu: 100m
            memory: 64Mi
"#;

/// A running cluster whose control plane serves: (project, cluster path).
async fn serving(owner: &Client<'_>) -> (String, String) {
    let (project, cluster) = running_cluster(owner).await;
    let path = format!("/v1/projects/{project}/clusters/{cluster}");
    eventually(30, "the control plane to serve", async || {
        owner.get::<ClusterView>(&path).await.ok().status.endpoint.is_some()
    })
    .await;
    (project, path)
}

/// A kubeconfig of `tenant`'s `token` for the cluster at `path`, written for `kubectl`.
async fn kubeconfig(owner: &Client<'_>, token: &str, path: &str, kubectl: &Kubectl, file: &str) -> PathBuf {
    let view: KubeconfigView = owner.with_token(token).get(&format!("{path}/kubeconfig")).await.expect(StatusCode::OK);
    kubectl.write(file, &view.kubeconfig)
}

/// Runs kubectl and insists it succeeds; returns its output.
async fn ok(kubectl: &Kubectl, config: &std::path::Path, args: &[&str]) -> String {
    let (succeeded, out, err) = kubectl.run(config, args).await;
    assert!(succeeded, "kubectl {args:?} failed:\n{out}\n{err}");
    out
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn the_everyday_kubectl_loop_works(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let _region = region(&t);
    let acme: Tenant = t.tenant("acme").await;
    let owner = t.client(&acme);
    let (_, path) = serving(&owner).await;
    let kubectl = Kubectl::new();
    let admin = kubeconfig(&owner, &acme.token, &path, &kubectl, "admin.yaml").await;
    let manifest = kubectl.write("shop.yaml", SHOP);
    let manifest = manifest.to_str().unwrap();

    // apply: created, then unchanged.
    let applied = ok(&kubectl, &admin, &["apply", "-f", manifest]).await;
    for created in ["namespace/shop created", "configmap/settings created", "deployment.apps/web created"] {
        assert!(applied.contains(created), "{applied}");
    }
    let again = ok(&kubectl, &admin, &["apply", "-f", manifest]).await;
    assert_eq!(again.matches("unchanged").count(), 3, "{again}");

    // get, as a Table with the usual columns (and the wide ones).
    let wide = ok(&kubectl, &admin, &["get", "deployments", "-n", "shop", "-o", "wide"]).await;
    let header: Vec<&str> = wide.lines().next().unwrap_or_default().split_whitespace().collect();
    assert_eq!(header, ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE", "CONTAINERS", "IMAGES", "SELECTOR"]);
    assert!(wide.contains("registry.example.com/shop/web:1") && wide.contains("app=web"), "{wide}");
    let mode =
        ok(&kubectl, &admin, &["get", "configmap", "settings", "-n", "shop", "-o", "jsonpath={.data.MODE}"]).await;
    assert_eq!(mode, "production");

    // rollout status watches the Deployment until its pods run.
    let rolled = ok(&kubectl, &admin, &["rollout", "status", "deployment/web", "-n", "shop", "--timeout=60s"]).await;
    assert!(rolled.contains("successfully rolled out"), "{rolled}");
    let pods = ok(&kubectl, &admin, &["get", "pods", "-n", "shop", "-l", "app=web", "--no-headers"]).await;
    assert_eq!(pods.lines().filter(|l| l.contains("Running") && l.contains("1/1")).count(), 2, "{pods}");

    // scale, and a new image through apply: configured, rolled out.
    ok(&kubectl, &admin, &["scale", "deployment/web", "-n", "shop", "--replicas=3"]).await;
    let changed =
        kubectl.write("shop-2.yaml", &SHOP.replace("shop/web:1", "shop/web:2").replace("replicas: 2", "replicas: 3"));
    let configured = ok(&kubectl, &admin, &["apply", "-f", changed.to_str().unwrap()]).await;
    assert!(configured.contains("deployment.apps/web configured"), "{configured}");
    ok(&kubectl, &admin, &["rollout", "status", "deployment/web", "-n", "shop", "--timeout=60s"]).await;
    let images = ok(
        &kubectl,
        &admin,
        &["get", "pods", "-n", "shop", "-o", "jsonpath={range .items[*]}{.spec.containers[0].image}{\"\\n\"}{end}"],
    )
    .await;
    assert_eq!(images.lines().filter(|l| l.ends_with("web:2")).count(), 3, "{images}");
    let requests = ok(
        &kubectl,
        &admin,
        &[
            "get",
            "deployment",
            "web",
            "-n",
            "shop",
            "-o",
            "jsonpath={.spec.template.spec.containers[0].resources.requests.cpu}",
        ],
    )
    .await;
    assert_eq!(requests, "100m", "what apply did not change stays");

    // An update from a stale copy is refused: 409, as the API server answers.
    let stale = ok(&kubectl, &admin, &["get", "configmap", "settings", "-n", "shop", "-o", "json"]).await;
    let stale_file = kubectl.write("stale.json", &stale);
    ok(&kubectl, &admin, &["label", "configmap", "settings", "-n", "shop", "tier=front"]).await;
    let (replaced, _, err) = kubectl.run(&admin, &["replace", "-f", stale_file.to_str().unwrap()]).await;
    assert!(!replaced && err.contains("the object has been modified"), "{err}");

    // delete, namespace last (with what is left in it).
    ok(&kubectl, &admin, &["delete", "deployment", "web", "-n", "shop"]).await;
    ok(&kubectl, &admin, &["delete", "namespace", "shop"]).await;
    let (found, _, err) = kubectl.run(&admin, &["get", "configmap", "settings", "-n", "shop"]).await;
    assert!(!found && err.contains("NotFound"), "{err}");
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn the_moke_role_decides_what_kubectl_may_do(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let _region = region(&t);
    let acme = t.tenant("acme").await;
    let owner = t.client(&acme);
    let (_, path) = serving(&owner).await;
    let kubectl = Kubectl::new();
    let (_, viewer_token) = t.member(&acme, "viewer@acme.test", "viewer").await;
    let (_, editor_token) = t.member(&acme, "editor@acme.test", "member").await;
    let viewer = kubeconfig(&owner, &viewer_token, &path, &kubectl, "viewer.yaml").await;
    let editor = kubeconfig(&owner, &editor_token, &path, &kubectl, "editor.yaml").await;

    let create = ["create", "configmap", "settings", "-n", "default", "--from-literal=MODE=test"];
    let (created, _, err) = kubectl.run(&viewer, &create).await;
    assert!(!created && err.contains("forbidden"), "{err}");
    let (allowed, answer, err) =
        kubectl.run(&viewer, &["auth", "can-i", "create", "configmaps", "-n", "default"]).await;
    assert!(!allowed && answer.trim() == "no", "{answer}\n{err}");
    let listed = ok(&kubectl, &viewer, &["get", "configmaps", "-n", "default"]).await;
    assert!(listed.is_empty() || listed.starts_with("NAME"), "{listed}");

    ok(&kubectl, &editor, &create).await;
    // kubectl's typed clients send protobuf: a Deployment made that way runs too.
    ok(
        &kubectl,
        &editor,
        &["create", "deployment", "api", "-n", "default", "--image=registry.example.com/api:1", "--replicas=2"],
    )
    .await;
    let rolled =
        ok(&kubectl, &editor, &["rollout", "status", "deployment/api", "-n", "default", "--timeout=60s"]).await;
    assert!(rolled.contains("successfully rolled out"), "{rolled}");
    assert_eq!(ok(&kubectl, &editor, &["auth", "can-i", "create", "configmaps", "-n", "default"]).await.trim(), "yes");
    let (made, _, err) = kubectl.run(&editor, &["create", "namespace", "team"]).await;
    assert!(!made && err.contains("forbidden"), "an editor does not make namespaces: {err}");
    let seen = ok(&kubectl, &viewer, &["get", "configmap", "settings", "-n", "default", "-o", "name"]).await;
    assert_eq!(seen.trim(), "configmap/settings");
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn a_deployment_made_through_moke_shows_in_kubectl(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let _region = region(&t);
    let acme = t.tenant("acme").await;
    let owner = t.client(&acme);
    let (project, path) = serving(&owner).await;
    let cluster = path.rsplit('/').next().unwrap().to_string();
    let spec = json!({ "image": "registry.example.com/shop/api:7", "replicas": 2, "pod_labels": { "app": "api" } });
    owner.create_deployment(&project, &cluster, "api", spec).await;
    let kubectl = Kubectl::new();
    let admin = kubeconfig(&owner, &acme.token, &path, &kubectl, "admin.yaml").await;

    let mut shown = Value::Null;
    for _ in 0..100 {
        let (found, out, _) = kubectl.run(&admin, &["get", "deployment", "api", "-n", "default", "-o", "json"]).await;
        if found {
            shown = serde_json::from_str(&out).unwrap();
            if shown["status"]["readyReplicas"] == 2 {
                break;
            }
        }
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    assert_eq!(shown["metadata"]["labels"]["moke.dev/managed-by"], "moke", "{shown}");
    assert!(
        shown["metadata"]["annotations"]["moke.dev/deployment-id"].as_str().is_some_and(|id| id.starts_with("dep_"))
    );
    assert_eq!(shown["spec"]["template"]["spec"]["containers"][0]["image"], "registry.example.com/shop/api:7");
    assert_eq!(shown["status"]["readyReplicas"], 2, "{shown}");
    let pods = ok(&kubectl, &admin, &["get", "pods", "-n", "default", "-l", "app=api", "-o", "name"]).await;
    assert_eq!(pods.lines().count(), 2, "{pods}");

    // Moke's objects are changed through Moke's API, not behind its back.
    let (labelled, _, err) = kubectl.run(&admin, &["label", "deployment", "api", "-n", "default", "x=y"]).await;
    assert!(!labelled && err.contains("managed by Moke"), "{err}");
    let (deleted, _, err) =
        kubectl.run(&admin, &["delete", "deployment", "api", "-n", "default", "--wait=false"]).await;
    assert!(!deleted && err.contains("managed by Moke"), "{err}");
}
