//! A hosted cluster's API as customers use it, with the real `kubectl`:
//! apply of a multi-document file, get with Table output, `get -w`,
//! rollout status, scale, history, undo and restart, a stale update
//! refused, server-side apply with two field managers, a watch resumed
//! after a disconnect, paged lists, RBAC from the Moke role in the
//! certificate, and one state with Moke's own API.

use std::path::PathBuf;

use moke_api::model::{ClusterView, DeploymentView, KubeconfigView, NamespaceView, ServiceView};
use moke_region::{AgentConfig, Transport};
use reqwest::StatusCode;
use serde_json::{Value, json};
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};

use crate::common::{BackgroundAgent, Client, Tenant, TestApp, eventually, unique, zones};
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
---
apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: shop
spec:
  selector:
    app: web
  ports:
  - name: http
    port: 80
    targetPort: 8080
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

/// Where nearly every test here starts: tenant `acme`, its running cluster
/// serving, and kubectl with the owner's admin kubeconfig.
struct Served<'a> {
    acme: Tenant,
    owner: Client<'a>,
    project: String,
    /// The cluster's REST path.
    path: String,
    kubectl: Kubectl,
    admin: PathBuf,
}

impl Served<'_> {
    /// The cluster's id.
    fn cluster(&self) -> String {
        self.path.rsplit('/').next().unwrap().to_string()
    }
}

/// [`Served`] on `t`, whose region is already running.
async fn served(t: &TestApp) -> Served<'_> {
    let acme: Tenant = t.tenant("acme").await;
    let owner = t.client(&acme);
    let (project, path) = serving(&owner).await;
    let kubectl = Kubectl::new();
    let admin = kubeconfig(&owner, &acme.token, &path, &kubectl, "admin.yaml").await;
    Served { acme, owner, project, path, kubectl, admin }
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

/// The image of each pod in `namespace`, a line each.
async fn pod_images(kubectl: &Kubectl, config: &std::path::Path, namespace: &str) -> String {
    let each = "jsonpath={range .items[*]}{.spec.containers[0].image}{\"\\n\"}{end}";
    ok(kubectl, config, &["get", "pods", "-n", namespace, "-o", each]).await
}

/// A field (a JSONPath) of the `web` Deployment in `shop`.
async fn web_field(kubectl: &Kubectl, config: &std::path::Path, path: &str) -> String {
    ok(kubectl, config, &["get", "deployment", "web", "-n", "shop", "-o", &format!("jsonpath={path}")]).await
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn the_everyday_kubectl_loop_works(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let _region = region(&t);
    let Served { owner, path, kubectl, admin, .. } = served(&t).await;
    let manifest = kubectl.write("shop.yaml", SHOP);
    let manifest = manifest.to_str().unwrap();

    // apply: created, then unchanged.
    let applied = ok(&kubectl, &admin, &["apply", "-f", manifest]).await;
    for created in
        ["namespace/shop created", "configmap/settings created", "deployment.apps/web created", "service/web created"]
    {
        assert!(applied.contains(created), "{applied}");
    }
    let again = ok(&kubectl, &admin, &["apply", "-f", manifest]).await;
    assert_eq!(again.matches("unchanged").count(), 4, "{again}");

    // get -w prints the pods as they change, until they run.
    let (_, watched, _) =
        kubectl.run(&admin, &["get", "pods", "-n", "shop", "-l", "app=web", "-w", "--request-timeout=8s"]).await;
    let running: std::collections::BTreeSet<&str> = watched
        .lines()
        .filter(|line| line.contains("1/1") && line.contains("Running"))
        .filter_map(|line| line.split_whitespace().next())
        .collect();
    assert_eq!(running.len(), 2, "both pods are seen running:\n{watched}");

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
    // Moke lists what kubectl made as unmanaged, with its status.
    let unmanaged = format!("{path}/unmanaged-deployments");
    eventually(20, "Moke to list the kubectl Deployment", async || {
        let listed: Value = owner.get(&unmanaged).await.ok();
        listed["items"].as_array().is_some_and(|items| {
            items.iter().any(|d| {
                d["namespace"] == "shop"
                    && d["name"] == "web"
                    && d["image"] == "registry.example.com/shop/web:1"
                    && d["ready_replicas"] == 2
                    && d["phase"] == "running"
                    && d["created_at"].is_string()
            })
        })
    })
    .await;
    // One namespace's only, when asked; a bad name is refused naming the parameter.
    let in_shop: Value = owner.get(&format!("{unmanaged}?namespace=shop")).await.ok();
    assert_eq!(in_shop["items"].as_array().map(Vec::len), Some(1), "{in_shop}");
    let in_default: Value = owner.get(&format!("{unmanaged}?namespace=default")).await.ok();
    assert_eq!(in_default["items"], json!([]));
    let refused = owner.get::<Value>(&format!("{unmanaged}?namespace=No_Such")).await;
    assert_eq!(refused.refused_with(StatusCode::BAD_REQUEST, "invalid_request").fields(), ["namespace"]);
    let moke_deployments: Value = owner.get(&format!("{path}/namespaces/default/deployments")).await.ok();
    assert_eq!(moke_deployments["items"], json!([]), "kubectl's Deployment is not one Moke manages");
    assert!(moke_namespaces(&owner, &path).await.iter().any(|n| n == "shop"), "kubectl's namespace is Moke's too");

    // explain reads Kubernetes' own schemas from the OpenAPI v3 documents.
    let explained = ok(&kubectl, &admin, &["explain", "deployment.spec.replicas"]).await;
    assert!(explained.contains("apps") && explained.contains("Number of desired pods"), "{explained}");
    let explained = ok(&kubectl, &admin, &["explain", "configmaps", "--recursive"]).await;
    assert!(
        explained.contains("ConfigMap holds configuration data") && explained.contains("binaryData"),
        "{explained}"
    );
    let explained = ok(&kubectl, &admin, &["explain", "svc.spec.ports.targetPort"]).await;
    assert!(explained.contains("Number or name of the port to access"), "{explained}");

    // describe shows what happened, from the cluster's events.
    let described = ok(&kubectl, &admin, &["describe", "deployment", "web", "-n", "shop"]).await;
    assert!(described.contains("ScalingReplicaSet") && described.contains("NewReplicaSet:"), "{described}");
    let pod = ok(
        &kubectl,
        &admin,
        &["get", "pods", "-n", "shop", "-l", "app=web", "-o", "jsonpath={.items[0].metadata.name}"],
    )
    .await;
    let described = ok(&kubectl, &admin, &["describe", "pod", &pod, "-n", "shop"]).await;
    assert!(described.contains("Scheduled") && described.contains("Started container web"), "{described}");

    // logs: of a deployment's pod, the tail with timestamps, and followed.
    let logs = ok(&kubectl, &admin, &["logs", "deployment/web", "-n", "shop"]).await;
    assert!(logs.contains("started container web on") && logs.contains("registry.example.com/shop/web:1"), "{logs}");
    let tail = ok(&kubectl, &admin, &["logs", &pod, "-n", "shop", "--tail=1", "--timestamps"]).await;
    assert_eq!(tail.lines().count(), 1, "{tail}");
    assert!(tail.starts_with("20") && tail.contains("is ready"), "{tail}");
    let (_, followed, _) = kubectl.run(&admin, &["logs", "-f", &pod, "-n", "shop", "--request-timeout=5s"]).await;
    assert!(followed.contains("web is running"), "a followed log goes on while the pod runs: {followed}");

    // The Service has its cluster IP, and its Endpoints the ready pods.
    let services = ok(&kubectl, &admin, &["get", "services", "-n", "shop"]).await;
    let header: Vec<&str> = services.lines().next().unwrap_or_default().split_whitespace().collect();
    assert_eq!(header, ["NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE"]);
    assert!(services.contains("ClusterIP") && services.contains("80/TCP"), "{services}");
    let addresses = ok(
        &kubectl,
        &admin,
        &[
            "get",
            "endpoints",
            "web",
            "-n",
            "shop",
            "-o",
            "jsonpath={.subsets[0].addresses[*].ip} {.subsets[0].ports[0].port}",
        ],
    )
    .await;
    assert_eq!(addresses.split_whitespace().count(), 3, "two pod addresses and the target port: {addresses}");
    assert!(addresses.ends_with("8080"), "{addresses}");

    // scale, and a new image through apply: configured, rolled out.
    ok(&kubectl, &admin, &["scale", "deployment/web", "-n", "shop", "--replicas=3"]).await;
    let changed =
        kubectl.write("shop-2.yaml", &SHOP.replace("shop/web:1", "shop/web:2").replace("replicas: 2", "replicas: 3"));
    let configured = ok(&kubectl, &admin, &["apply", "-f", changed.to_str().unwrap()]).await;
    assert!(configured.contains("deployment.apps/web configured"), "{configured}");
    ok(&kubectl, &admin, &["rollout", "status", "deployment/web", "-n", "shop", "--timeout=60s"]).await;
    let images = pod_images(&kubectl, &admin, "shop").await;
    assert_eq!(images.lines().filter(|l| l.ends_with("web:2")).count(), 3, "{images}");
    let requests = web_field(&kubectl, &admin, "{.spec.template.spec.containers[0].resources.requests.cpu}").await;
    assert_eq!(requests, "100m", "what apply did not change stays");

    // Each template is a ReplicaSet; undo puts the previous one back.
    let sets = ok(&kubectl, &admin, &["get", "replicasets", "-n", "shop", "-l", "app=web", "--no-headers"]).await;
    assert_eq!(sets.lines().count(), 2, "{sets}");
    let history = ok(&kubectl, &admin, &["rollout", "history", "deployment/web", "-n", "shop"]).await;
    assert!(history.lines().any(|l| l.starts_with('1')) && history.lines().any(|l| l.starts_with('2')), "{history}");
    let undone = ok(&kubectl, &admin, &["rollout", "undo", "deployment/web", "-n", "shop"]).await;
    assert!(undone.contains("rolled back"), "{undone}");
    ok(&kubectl, &admin, &["rollout", "status", "deployment/web", "-n", "shop", "--timeout=60s"]).await;
    let images = pod_images(&kubectl, &admin, "shop").await;
    assert_eq!(images.lines().filter(|l| l.ends_with("web:1")).count(), 3, "{images}");
    let sets = ok(&kubectl, &admin, &["get", "replicasets", "-n", "shop", "-l", "app=web", "--no-headers"]).await;
    assert_eq!(sets.lines().count(), 2, "the first ReplicaSet is used again, not a third: {sets}");
    let owner_kind = ok(
        &kubectl,
        &admin,
        &["get", "pods", "-n", "shop", "-l", "app=web", "-o", "jsonpath={.items[0].metadata.ownerReferences[0].kind}"],
    )
    .await;
    assert_eq!(owner_kind, "ReplicaSet");
    let restarted = ok(&kubectl, &admin, &["rollout", "restart", "deployment/web", "-n", "shop"]).await;
    assert!(restarted.contains("restarted"), "{restarted}");
    ok(&kubectl, &admin, &["rollout", "status", "deployment/web", "-n", "shop", "--timeout=60s"]).await;
    let revision = web_field(&kubectl, &admin, "{.metadata.annotations.deployment\\.kubernetes\\.io/revision}").await;
    assert_eq!(revision, "4", "create, apply, undo and restart are four revisions");

    // An update from a stale copy is refused: 409, as the API server answers.
    let stale = ok(&kubectl, &admin, &["get", "configmap", "settings", "-n", "shop", "-o", "json"]).await;
    let stale_file = kubectl.write("stale.json", &stale);
    ok(&kubectl, &admin, &["label", "configmap", "settings", "-n", "shop", "tier=front"]).await;
    let (replaced, _, err) = kubectl.run(&admin, &["replace", "-f", stale_file.to_str().unwrap()]).await;
    assert!(!replaced && err.contains("the object has been modified"), "{err}");

    // delete, namespace last (with what is left in it); the Deployment takes
    // its ReplicaSets and pods along, and will not leave them orphaned.
    let (orphaned, _, err) =
        kubectl.run(&admin, &["delete", "deployment", "web", "-n", "shop", "--cascade=orphan"]).await;
    assert!(!orphaned && err.contains("Orphan is not supported"), "{err}");
    ok(&kubectl, &admin, &["delete", "deployment", "web", "-n", "shop"]).await;
    eventually(20, "the ReplicaSets and pods to go with their Deployment", async || {
        let left = kubectl.run(&admin, &["get", "replicasets,pods", "-n", "shop", "-o", "name"]).await.1;
        left.trim().is_empty()
    })
    .await;
    eventually(20, "Moke to drop the deleted Deployment from its list", async || {
        let listed: Value = owner.get(&unmanaged).await.ok();
        listed["items"] == json!([])
    })
    .await;
    ok(&kubectl, &admin, &["delete", "namespace", "shop"]).await;
    let (found, _, err) = kubectl.run(&admin, &["get", "configmap", "settings", "-n", "shop"]).await;
    assert!(!found && err.contains("NotFound"), "{err}");
    eventually(20, "Moke to drop the namespace kubectl deleted", async || {
        !moke_namespaces(&owner, &path).await.iter().any(|n| n == "shop")
    })
    .await;
}

/// The names of a cluster's namespaces as Moke lists them.
async fn moke_namespaces(owner: &Client<'_>, path: &str) -> Vec<String> {
    let listed: Value = owner.get(&format!("{path}/namespaces?limit=100")).await.ok();
    let items = listed["items"].as_array().cloned().unwrap_or_default();
    items.iter().filter_map(|n| n["name"].as_str().map(str::to_string)).collect()
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn namespaces_made_either_way_exist_in_both(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let _region = region(&t);
    let Served { owner, path, kubectl, admin, .. } = served(&t).await;

    // Made through Moke's API, with nothing in it: kubectl sees it as Moke's.
    let made: NamespaceView = owner.post(&format!("{path}/namespaces"), json!({ "name": "team" })).await.ok();
    assert_eq!(made.name, "team");
    eventually(20, "kubectl to show Moke's namespace", async || {
        let (found, label, _) = kubectl
            .run(&admin, &["get", "namespace", "team", "-o", "jsonpath={.metadata.labels.moke\\.dev/managed-by}"])
            .await;
        found && label == "moke"
    })
    .await;
    let (deleted, _, err) = kubectl.run(&admin, &["delete", "namespace", "team", "--wait=false"]).await;
    assert!(!deleted && err.contains("managed by Moke"), "Moke's namespace is deleted through Moke: {err}");

    // Made with kubectl: Moke lists it, and Moke can deploy into it.
    ok(&kubectl, &admin, &["create", "namespace", "tools"]).await;
    ok(&kubectl, &admin, &["create", "namespace", "scratch"]).await;
    eventually(20, "Moke to list kubectl's namespaces", async || {
        let names = moke_namespaces(&owner, &path).await;
        ["default", "team", "tools", "scratch"].iter().all(|n| names.iter().any(|m| m == n))
    })
    .await;
    let names = moke_namespaces(&owner, &path).await;
    assert!(!names.iter().any(|n| n.starts_with("kube-")), "the cluster's own stay out: {names:?}");
    let spec = json!({ "image": "registry.example.com/tools/runner:1", "pod_labels": { "app": "runner" } });
    let deploy: Value = owner
        .post(&format!("{path}/namespaces/tools/deployments"), json!({ "name": "runner", "spec": spec }))
        .await
        .expect(StatusCode::ACCEPTED);
    assert_eq!(deploy["target"]["type"], "deployment", "{deploy}");
    eventually(30, "Moke's deployment to run in kubectl's namespace", async || {
        let pods = kubectl.run(&admin, &["get", "pods", "-n", "tools", "-l", "app=runner", "--no-headers"]).await.1;
        pods.contains("Running")
    })
    .await;
    // kubectl cannot delete a namespace holding Moke's deployments; an empty one goes from Moke's list too.
    let (deleted, _, err) = kubectl.run(&admin, &["delete", "namespace", "tools", "--wait=false"]).await;
    assert!(!deleted && err.contains("holds deployments or services Moke manages"), "{err}");
    ok(&kubectl, &admin, &["delete", "namespace", "scratch"]).await;
    eventually(20, "Moke to drop the namespace kubectl deleted", async || {
        !moke_namespaces(&owner, &path).await.iter().any(|n| n == "scratch")
    })
    .await;

    // One made with kubectl is deleted with kubectl, not through Moke.
    owner
        .delete::<()>(&format!("{path}/namespaces/tools"))
        .await
        .refused_with(StatusCode::CONFLICT, "made_with_kubectl");

    // Deleted through Moke's API: gone from the cluster's API too.
    owner.delete::<()>(&format!("{path}/namespaces/team")).await.expect(StatusCode::NO_CONTENT);
    eventually(20, "the namespace to leave the cluster's API", async || {
        let (found, _, err) = kubectl.run(&admin, &["get", "namespace", "team"]).await;
        !found && err.contains("NotFound")
    })
    .await;
    assert!(!moke_namespaces(&owner, &path).await.iter().any(|n| n == "team"));

    // Unless kubectl made objects in it: they and it stay, the cluster users' own now.
    let _: NamespaceView = owner.post(&format!("{path}/namespaces"), json!({ "name": "notes" })).await.ok();
    eventually(20, "kubectl to show Moke's namespace", async || {
        kubectl.run(&admin, &["get", "namespace", "notes"]).await.0
    })
    .await;
    ok(&kubectl, &admin, &["create", "configmap", "todo", "-n", "notes", "--from-literal=a=b"]).await;
    owner.delete::<()>(&format!("{path}/namespaces/notes")).await.expect(StatusCode::NO_CONTENT);
    eventually(20, "the delete to be refused in the cluster", async || {
        let operations: Value = owner.get(&format!("{path}/operations?limit=100")).await.ok();
        operations["items"].as_array().is_some_and(|ops| {
            ops.iter().any(|o| {
                o["kind"] == "namespace_delete" && o["status"] == "failed" && o["error"]["code"] == "not_empty"
            })
        })
    })
    .await;
    let kept = ok(&kubectl, &admin, &["get", "configmap", "todo", "-n", "notes", "-o", "jsonpath={.data.a}"]).await;
    assert_eq!(kept, "b", "the customer's objects stay");
    eventually(20, "Moke to list the namespace that stayed", async || {
        moke_namespaces(&owner, &path).await.iter().any(|n| n == "notes")
    })
    .await;
    ok(&kubectl, &admin, &["delete", "namespace", "notes"]).await;

    let operations: Value = owner.get(&format!("{path}/operations?limit=100")).await.ok();
    let kinds: Vec<&str> = operations["items"]
        .as_array()
        .map(|ops| ops.iter().filter(|o| o["status"] == "succeeded").filter_map(|o| o["kind"].as_str()).collect())
        .unwrap_or_default();
    assert!(kinds.contains(&"namespace_create") && kinds.contains(&"namespace_delete"), "{operations}");
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn the_moke_role_decides_what_kubectl_may_do(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let _region = region(&t);
    let Served { acme, owner, path, kubectl, admin, .. } = served(&t).await;
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

    // RBAC objects grant more, finely: a Role and a RoleBinding let the
    // viewer write configmaps in `default` only.
    let whoami = ["auth", "whoami", "-o", "jsonpath={.status.userInfo.username}"];
    let (viewer_name, editor_name) = (ok(&kubectl, &viewer, &whoami).await, ok(&kubectl, &editor, &whoami).await);
    let role =
        ["create", "role", "settings-writer", "-n", "default", "--verb=create,update,patch", "--resource=configmaps"];
    ok(&kubectl, &admin, &role).await;
    let binding = format!(
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata:\n  name: viewer-writes\n  namespace: default\n\
         subjects:\n- kind: User\n  name: {viewer_name}\n  apiGroup: rbac.authorization.k8s.io\n\
         roleRef:\n  kind: Role\n  name: settings-writer\n  apiGroup: rbac.authorization.k8s.io\n"
    );
    ok(&kubectl, &admin, &["apply", "-f", kubectl.write("binding.yaml", &binding).to_str().unwrap()]).await;
    ok(&kubectl, &viewer, &["create", "configmap", "from-viewer", "-n", "default", "--from-literal=a=b"]).await;
    let can = ["auth", "can-i", "create", "configmaps", "-n", "default"];
    assert_eq!(ok(&kubectl, &viewer, &can).await.trim(), "yes");
    let (elsewhere, _, _) = kubectl.run(&viewer, &["create", "configmap", "x", "-n", "kube-public"]).await;
    assert!(!elsewhere, "the binding is for `default` only");

    // Nobody grants more than they hold: the editor, made admin of
    // `default`, may bind others to `view` there, not itself to cluster-admin.
    let editor_user = format!("--user={editor_name}");
    let made_admin = ["create", "rolebinding", "editor-admin", "-n", "default", "--clusterrole=admin", &editor_user];
    ok(&kubectl, &admin, &made_admin).await;
    ok(
        &kubectl,
        &editor,
        &["create", "rolebinding", "viewers", "-n", "default", "--clusterrole=view", "--group=team-a"],
    )
    .await;
    let escalate = ["create", "rolebinding", "mine", "-n", "default", "--clusterrole=cluster-admin", &editor_user];
    let (escalated, _, err) = kubectl.run(&editor, &escalate).await;
    assert!(!escalated && err.contains("not currently held"), "{err}");
    let (edited, _, err) = kubectl.run(&admin, &["label", "clusterrole", "view", "x=y"]).await;
    assert!(!edited && err.contains("default roles"), "{err}");
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn a_deployment_and_a_service_made_through_moke_show_in_kubectl(
    options: PgPoolOptions,
    connect: PgConnectOptions,
) {
    let t = TestApp::start(options, connect).await;
    let _region = region(&t);
    let served = served(&t).await;
    let cluster = served.cluster();
    let Served { owner, project, path, kubectl, admin, .. } = served;
    let spec = json!({ "image": "registry.example.com/shop/api:7", "replicas": 2, "pod_labels": { "app": "api" } });
    let (deployment, _) = owner.create_deployment(&project, &cluster, "api", spec).await;
    let deployment_path =
        format!("/v1/projects/{project}/clusters/{cluster}/namespaces/default/deployments/{}", deployment.id);

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

    // A change behind Moke's back is drift: kubectl's write is taken, Moke
    // puts its spec back, and the deployment's conditions say who changed what.
    ok(&kubectl, &admin, &["scale", "deployment/api", "-n", "default", "--replicas=5"]).await;
    eventually(30, "the drift to be reported and put back", async || {
        let view: DeploymentView = owner.get(&deployment_path).await.ok();
        let drifted = view.status.conditions.iter().any(|c| {
            c.condition_type == "Drifted" && c.reason == "EditedInCluster" && c.message.contains("spec.replicas")
        });
        let replicas = kubectl
            .run(&admin, &["get", "deployment", "api", "-n", "default", "-o", "jsonpath={.spec.replicas}"])
            .await
            .1;
        drifted && replicas == "2"
    })
    .await;
    let pods = ok(&kubectl, &admin, &["get", "pods", "-n", "default", "-l", "app=api", "-o", "name"]).await;
    assert_eq!(pods.lines().count(), 2, "Moke's two replicas run, not kubectl's five: {pods}");
    let events = ok(&kubectl, &admin, &["get", "events", "-n", "default", "--field-selector", "reason=Drifted"]).await;
    assert!(events.contains("deployment/api") && events.contains("spec.replicas"), "{events}");

    // What makes it Moke's stays, and it is deleted through Moke's API.
    let (unlabelled, _, err) =
        kubectl.run(&admin, &["label", "deployment", "api", "-n", "default", "moke.dev/managed-by-"]).await;
    assert!(!unlabelled && err.contains("managed by Moke"), "{err}");
    let (deleted, _, err) =
        kubectl.run(&admin, &["delete", "deployment", "api", "-n", "default", "--wait=false"]).await;
    assert!(!deleted && err.contains("managed by Moke"), "{err}");

    // A service made through Moke's API is in the cluster's API too, with
    // Moke's address and node port, and its endpoints are the deployment's pods.
    let spec = json!({ "type": "NodePort", "selector": { "app": "api" },
                       "ports": [{ "name": "http", "port": 80, "target_port": 8080 }] });
    let service = owner.create_service(&project, &cluster, "api", spec).await;
    let service_path = format!("/v1/projects/{project}/clusters/{cluster}/namespaces/default/services/api");
    let node_port = service.spec.ports[0].node_port.expect("a node port").to_string();
    let shown = eventually_json(&kubectl, &admin, &["get", "service", "api", "-n", "default", "-o", "json"]).await;
    assert_eq!(shown["metadata"]["labels"]["moke.dev/managed-by"], "moke", "{shown}");
    assert_eq!(shown["metadata"]["annotations"]["moke.dev/service-id"], json!(service.id), "{shown}");
    assert_eq!(shown["spec"]["clusterIP"], json!(service.cluster_ip), "{shown}");
    assert_eq!(shown["spec"]["ports"][0]["nodePort"].to_string(), node_port, "{shown}");
    let addresses = "jsonpath={.subsets[0].addresses[*].ip}";
    let endpoints = ok(&kubectl, &admin, &["get", "endpoints", "api", "-n", "default", "-o", addresses]).await;
    assert_eq!(endpoints.split_whitespace().count(), 2, "the deployment's two pods: {endpoints}");
    let wide = ok(&kubectl, &admin, &["get", "svc", "api", "-n", "default"]).await;
    assert!(wide.contains(&service.cluster_ip) && wide.contains(&format!("80:{node_port}/TCP")), "{wide}");
    // kubectl's own Services take the other half of the range and another
    // node port, and may not take Moke's.
    ok(&kubectl, &admin, &["create", "service", "nodeport", "admin", "-n", "default", "--tcp=81:81"]).await;
    let theirs = ok(&kubectl, &admin, &["get", "svc", "admin", "-n", "default", "-o", "json"]).await;
    let theirs: Value = serde_json::from_str(&theirs).unwrap();
    assert!(theirs["spec"]["clusterIP"].as_str().is_some_and(|ip| ip.starts_with("10.104.")), "{theirs}");
    assert_ne!(theirs["spec"]["ports"][0]["nodePort"].to_string(), node_port, "{theirs}");
    let (taken, _, err) = kubectl
        .run(
            &admin,
            &["create", "service", "nodeport", "copy", "-n", "default", "--tcp=82:82", "--node-port", &node_port],
        )
        .await;
    assert!(!taken && err.contains("already allocated"), "{err}");
    // It is changed and deleted through Moke only.
    let (edited, _, err) = kubectl
        .run(&admin, &["patch", "service", "api", "-n", "default", "-p", r#"{"spec":{"selector":{"app":"x"}}}"#])
        .await;
    assert!(!edited && err.contains("managed by Moke"), "{err}");
    let (deleted, _, err) = kubectl.run(&admin, &["delete", "service", "api", "-n", "default", "--wait=false"]).await;
    assert!(!deleted && err.contains("managed by Moke"), "{err}");
    owner
        .patch::<Value>(&service_path, json!({ "labels": { "tier": "api" }, "spec": { "ports": [{ "name": "http", "port": 8000, "target_port": 8080 }] } }))
        .await
        .expect(StatusCode::OK);
    eventually(30, "the change to reach the cluster's API", async || {
        let each = "jsonpath={.metadata.labels.tier} {.spec.ports[0].port}";
        kubectl.run(&admin, &["get", "service", "api", "-n", "default", "-o", each]).await.1 == "api 8000"
    })
    .await;
    owner.delete::<Value>(&service_path).await.expect(StatusCode::NO_CONTENT);
    eventually(30, "the delete to reach the cluster's API", async || {
        let (found, _, err) = kubectl.run(&admin, &["get", "service", "api", "-n", "default"]).await;
        !found && err.contains("NotFound")
    })
    .await;
    eventually(30, "the service's operations to succeed", async || {
        let operations: Value = owner.get(&format!("{path}/operations?limit=100")).await.ok();
        ["service_create", "service_update", "service_delete"].iter().all(|kind| {
            let ops = operations["items"].as_array().into_iter().flatten();
            ops.filter(|op| op["kind"] == *kind).any(|op| op["status"] == "succeeded")
        })
    })
    .await;
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn namespaces_and_services_made_before_they_reached_the_cluster_are_sent_there_once(
    options: PgPoolOptions,
    connect: PgConnectOptions,
) {
    // The server's own backfill stays out of the way (every 15 minutes).
    let t = TestApp::start_with(options, connect, |config| config.outbox.repair_after_seconds = 3600).await;
    let _region = region(&t);
    let served = served(&t).await;
    let cluster = served.cluster();
    let Served { owner, project, path, kubectl, admin, .. } = served;
    owner.post::<Value>(&format!("{path}/namespaces"), json!({ "name": "shop" })).await.expect(StatusCode::CREATED);
    let spec = json!({ "selector": { "app": "web" }, "ports": [{ "port": 80 }] });
    let services = format!("/v1/projects/{project}/clusters/{cluster}/namespaces/shop/services");
    for name in ["web", "bulk"] {
        let service = json!({ "name": name, "spec": spec.clone() });
        owner.post::<ServiceView>(&services, service).await.expect(StatusCode::CREATED);
    }
    eventually_json(&kubectl, &admin, &["get", "service", "web", "-n", "shop", "-o", "json"]).await;
    assert_eq!(t.app.backfill_cluster_objects_once().await.unwrap(), 0, "made now, sent when made");
    // Rows already there when migration 61 ran are unchecked; those that
    // carried a command (their audit events say so) are only marked.
    let unchecked = "UPDATE namespaces SET sent_to_cluster = NULL WHERE name = 'shop';
                     UPDATE services SET sent_to_cluster = NULL";
    sqlx::raw_sql(unchecked).execute(&t.pool).await.unwrap();
    assert_eq!(t.app.backfill_cluster_objects_once().await.unwrap(), 0, "all known as sent");
    assert_eq!(t.count("services WHERE sent_to_cluster IS NULL").await, 0, "each looked at");

    // As an older gateway left them: never sent (no command in their audit
    // events), and the services changed since; `bulk` stored with more
    // ports than a command carries.
    sqlx::raw_sql(unchecked).execute(&t.pool).await.unwrap();
    sqlx::query(
        "UPDATE audit_events SET details = details - 'operation_id' WHERE resource_type IN ('namespace', 'service')",
    )
    .execute(&t.pool)
    .await
    .unwrap();
    sqlx::query(r#"UPDATE services SET labels = '{"era": "old"}', version = version + 1"#)
        .execute(&t.pool)
        .await
        .unwrap();
    sqlx::query(
        "UPDATE services SET spec = jsonb_set(spec, '{ports}',
             (SELECT jsonb_agg(jsonb_build_object('port', p, 'protocol', 'TCP')) FROM generate_series(1, 101) p))
         WHERE name = 'bulk'",
    )
    .execute(&t.pool)
    .await
    .unwrap();
    // The namespace first, then the service in it; `bulk` is set aside, not sent, and stops nothing.
    assert_eq!(t.app.backfill_cluster_objects_once().await.unwrap(), 2, "the namespace and the service");
    assert_eq!(t.app.backfill_cluster_objects_once().await.unwrap(), 0, "each once");
    assert_eq!(t.count("services WHERE sent_to_cluster IS NULL").await, 0, "bulk set aside, not looked at again");
    eventually(30, "the service as stored to reach the cluster's API", async || {
        let each = "jsonpath={.metadata.labels.era}";
        kubectl.run(&admin, &["get", "service", "web", "-n", "shop", "-o", each]).await.1 == "old"
    })
    .await;
    // Each is an Operation on the cluster that the region carried out.
    eventually(30, "the backfill's operations to succeed", async || {
        let operations: Value = owner.get(&format!("{path}/operations?limit=100")).await.ok();
        let ops: Vec<&Value> = operations["items"].as_array().into_iter().flatten().collect();
        let succeeded = |kind: &str| ops.iter().filter(|op| op["kind"] == kind && op["status"] == "succeeded").count();
        succeeded("namespace_create") == 2 && succeeded("service_update") == 1
    })
    .await;
}

/// kubectl's JSON of an object once it exists (within 20 s).
async fn eventually_json(kubectl: &Kubectl, config: &std::path::Path, args: &[&str]) -> Value {
    for _ in 0..100 {
        let (found, out, _) = kubectl.run(config, args).await;
        if found {
            return serde_json::from_str(&out).expect("kubectl's JSON");
        }
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    panic!("kubectl {args:?} found nothing in 20 s");
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn a_deployment_that_adopts_cluster_edits_takes_them_as_revisions(
    options: PgPoolOptions,
    connect: PgConnectOptions,
) {
    let t = TestApp::start(options, connect).await;
    let _region = region(&t);
    let served = served(&t).await;
    let cluster = served.cluster();
    let Served { acme, owner, project, path, kubectl, admin } = served;
    let spec = json!({
        "image": "registry.example.com/shop/api:7", "replicas": 2, "on_drift": "adopt",
        "env": [{ "name": "MODE", "value": "production" }],
        "ports": [{ "name": "http", "container_port": 8080 }],
        "strategy": { "auto_rollback": true },
    });
    let (deployment, created) = owner.create_deployment(&project, &cluster, "api", spec).await;
    owner.succeeds(&created).await;
    let deployment_path =
        format!("/v1/projects/{project}/clusters/{cluster}/namespaces/default/deployments/{}", deployment.id);
    // kubectl shows the whole container Moke runs, environment and ports too.
    let container =
        ok(&kubectl, &admin, &["get", "deployment", "api", "-o", "jsonpath={.spec.template.spec.containers[0]}"]).await;
    let container: Value = serde_json::from_str(&container).unwrap();
    assert_eq!(container["env"], json!([{ "name": "MODE", "value": "production" }]), "{container}");
    assert_eq!(container["ports"][0]["containerPort"], 8080, "{container}");

    // kubectl's edits become revisions of the Moke deployment, with who made them.
    ok(&kubectl, &admin, &["scale", "deployment/api", "--replicas=3"]).await;
    ok(&kubectl, &admin, &["set", "image", "deployment/api", "api=registry.example.com/shop/api:8"]).await;
    ok(&kubectl, &admin, &["set", "env", "deployment/api", "LOG=debug"]).await;
    eventually(30, "the edits to be adopted and rolled out", async || {
        let view: DeploymentView = owner.get(&deployment_path).await.ok();
        let pods = pod_images(&kubectl, &admin, "default").await;
        view.spec.replicas == 3
            && view.spec.image == "registry.example.com/shop/api:8"
            && view.spec.env.len() == 2
            && view.status.ready_replicas == 3
            && pods.lines().filter(|line| line.ends_with("shop/api:8")).count() == 3
    })
    .await;
    let view: DeploymentView = owner.get(&deployment_path).await.ok();
    assert!(view.spec.strategy.auto_rollback && view.spec.ports[0].container_port == 8080, "{:?}", view.spec);
    let revisions: Value = owner.get(&format!("{deployment_path}/revisions")).await.ok();
    let adopted: Vec<&Value> = revisions["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["cause"].as_str().is_some_and(|c| c.starts_with("adopted from the cluster")))
        .collect();
    assert!(!adopted.is_empty(), "{revisions}");
    assert!(adopted.iter().any(|r| r["cause"].as_str().unwrap().contains("spec.template")), "{revisions}");
    let replicas = ok(&kubectl, &admin, &["get", "deployment", "api", "-o", "jsonpath={.spec.replicas}"]).await;
    assert_eq!(replicas, "3", "kubectl's scale stays");

    // A binding made in the cluster lets a Moke viewer edit, but Moke's API
    // would not let them: their change is put back, never adopted.
    let (_, viewer_token) = t.member(&acme, "viewer@acme.test", "viewer").await;
    let viewer = kubeconfig(&owner, &viewer_token, &path, &kubectl, "viewer.yaml").await;
    let whoami = ["auth", "whoami", "-o", "jsonpath={.status.userInfo.username}"];
    let viewer_name = ok(&kubectl, &viewer, &whoami).await;
    let user = format!("--user={viewer_name}");
    ok(&kubectl, &admin, &["create", "rolebinding", "viewer-edits", "--clusterrole=edit", &user]).await;
    ok(&kubectl, &viewer, &["scale", "deployment/api", "--replicas=1"]).await;
    eventually(30, "the viewer's scale to be put back", async || {
        let replicas = kubectl.run(&admin, &["get", "deployment", "api", "-o", "jsonpath={.spec.replicas}"]).await.1;
        let view: DeploymentView = owner.get(&deployment_path).await.ok();
        let said = view
            .status
            .conditions
            .iter()
            .any(|c| c.condition_type == "Drifted" && c.message.contains("put its spec back"));
        replicas == "3" && said && view.spec.replicas == 3
    })
    .await;

    // An edit the organization's rules refuse is not adopted: the audit log
    // says why, and the cluster gets Moke's spec back.
    let policy = json!({ "deploy": { "allowed_image_prefixes": ["registry.example.com/shop/"] } });
    let (_, alice) = t.member(&acme, "alice@acme.test", "owner").await;
    owner.with_token(&alice).put::<Value>(&owner.org_path("/policy"), policy).await.expect(StatusCode::OK);
    ok(&kubectl, &admin, &["set", "image", "deployment/api", "api=evil.example.org/miner:1"]).await;
    eventually(60, "the refused edit to be put back", async || {
        let image = kubectl
            .run(&admin, &["get", "deployment", "api", "-o", "jsonpath={.spec.template.spec.containers[0].image}"])
            .await
            .1;
        let view: DeploymentView = owner.get(&deployment_path).await.ok();
        let said = view
            .status
            .conditions
            .iter()
            .any(|c| c.condition_type == "Drifted" && c.message.contains("did not take it"));
        image == "registry.example.com/shop/api:8" && said
    })
    .await;
    let audit: Value = owner.get(&owner.org_path("/audit-events?action=deployment.cluster_edit_refused")).await.ok();
    let events = audit["items"].as_array().unwrap();
    assert_eq!(events.len(), 1, "{audit}");
    assert!(events[0]["details"]["reason"].as_str().unwrap().contains("allowed_image_prefixes"), "{audit}");
    let pods = pod_images(&kubectl, &admin, "default").await;
    assert!(!pods.contains("evil"), "{pods}");
    let view: DeploymentView = owner.get(&deployment_path).await.ok();
    assert_eq!(view.spec.image, "registry.example.com/shop/api:8");
}

const SETTINGS: &str = r#"apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: default
data:
  MODE: production
  REGION: eu
"#;

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn server_side_apply_keeps_each_managers_fields(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let _region = region(&t);
    let Served { kubectl, admin, .. } = served(&t).await;
    let first = kubectl.write("settings.yaml", SETTINGS);
    let second =
        kubectl.write("settings-ci.yaml", &SETTINGS.replace("production", "staging").replace("  REGION: eu\n", ""));
    let (first, second) = (first.to_str().unwrap(), second.to_str().unwrap());

    let applied = ok(&kubectl, &admin, &["apply", "--server-side", "--field-manager=platform", "-f", first]).await;
    assert!(applied.contains("configmap/settings serverside-applied"), "{applied}");
    let (refused, _, err) = kubectl.run(&admin, &["apply", "--server-side", "--field-manager=ci", "-f", second]).await;
    assert!(!refused && err.contains("conflict with \"platform\"") && err.contains(".data.MODE"), "{err}");
    let mode = ok(&kubectl, &admin, &["get", "configmap", "settings", "-o", "jsonpath={.data.MODE}"]).await;
    assert_eq!(mode, "production", "a refused apply changes nothing");

    ok(&kubectl, &admin, &["apply", "--server-side", "--field-manager=ci", "--force-conflicts", "-f", second]).await;
    let managed = ok(&kubectl, &admin, &["get", "configmap", "settings", "--show-managed-fields", "-o", "json"]).await;
    let managed: Value = serde_json::from_str(&managed).unwrap();
    assert_eq!(managed["data"]["MODE"], "staging");
    let fields_of = |manager: &str| -> Value {
        managed["metadata"]["managedFields"]
            .as_array()
            .and_then(|all| all.iter().find(|m| m["manager"] == manager))
            .map(|m| m["fieldsV1"]["f:data"].clone())
            .unwrap_or(Value::Null)
    };
    assert!(fields_of("ci")["f:MODE"].is_object(), "ci took MODE over: {managed}");
    assert!(fields_of("platform")["f:MODE"].is_null() && fields_of("platform")["f:REGION"].is_object(), "{managed}");

    // The platform team's next configuration leaves MODE to CI and drops
    // REGION: MODE stays (CI's), REGION goes (nobody else set it).
    let next = SETTINGS.replace("  MODE: production\n  REGION: eu\n", "  OWNER: platform\n");
    let next = kubectl.write("settings-2.yaml", &next);
    ok(&kubectl, &admin, &["apply", "--server-side", "--field-manager=platform", "-f", next.to_str().unwrap()]).await;
    let data = ok(&kubectl, &admin, &["get", "configmap", "settings", "-o", "jsonpath={.data}"]).await;
    assert_eq!(serde_json::from_str::<Value>(&data).unwrap(), json!({ "MODE": "staging", "OWNER": "platform" }));
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn a_watch_resumes_where_it_left_off_and_lists_page(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let _region = region(&t);
    let Served { kubectl, admin, .. } = served(&t).await;
    ok(&kubectl, &admin, &["create", "configmap", "a", "--from-literal=n=0"]).await;
    let start = ok(&kubectl, &admin, &["get", "configmap", "a", "-o", "jsonpath={.metadata.resourceVersion}"]).await;
    let watch_from = |version: &str| {
        format!("/api/v1/namespaces/default/configmaps?watch=1&resourceVersion={version}&timeoutSeconds=3")
    };
    let events = |out: &str| -> Vec<(String, String, String)> {
        out.lines()
            .filter_map(|line| serde_json::from_str::<Value>(line).ok())
            .map(|event| {
                let object = &event["object"]["metadata"];
                let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
                (text(&event["type"]), text(&object["name"]), text(&object["resourceVersion"]))
            })
            .collect()
    };

    // A watch sees one change, then its connection ends (after 3 s).
    let first_url = watch_from(&start);
    let first_args = ["get", "--raw", first_url.as_str()];
    let watching = kubectl.run(&admin, &first_args);
    let change = async {
        tokio::time::sleep(std::time::Duration::from_millis(700)).await;
        ok(&kubectl, &admin, &["label", "configmap", "a", "step=1"]).await;
    };
    let ((_, first, err), ()) = tokio::join!(watching, change);
    let first = events(&first);
    assert_eq!(first.iter().map(|e| (e.0.as_str(), e.1.as_str())).collect::<Vec<_>>(), [("MODIFIED", "a")], "{err}");

    // While nobody watches, three more changes.
    ok(&kubectl, &admin, &["create", "configmap", "b", "--from-literal=n=1"]).await;
    ok(&kubectl, &admin, &["label", "configmap", "a", "step=2", "--overwrite"]).await;
    ok(&kubectl, &admin, &["delete", "configmap", "b"]).await;

    // Resuming from the last version seen gives exactly those, in order.
    let (_, resumed, _) = kubectl.run(&admin, &["get", "--raw", &watch_from(&first[0].2)]).await;
    let resumed = events(&resumed);
    let seen: Vec<(&str, &str)> = resumed.iter().map(|e| (e.0.as_str(), e.1.as_str())).collect();
    assert_eq!(seen, [("ADDED", "b"), ("MODIFIED", "a"), ("DELETED", "b")]);
    let versions: Vec<u64> = resumed.iter().map(|e| e.2.parse().unwrap()).collect();
    assert!(versions.windows(2).all(|w| w[0] < w[1]) && versions[0] > first[0].2.parse::<u64>().unwrap());

    // kubectl's lists come in pages (here one object at a time), nothing lost.
    for name in ["c", "d", "e"] {
        ok(&kubectl, &admin, &["create", "configmap", name]).await;
    }
    let paged = ok(&kubectl, &admin, &["get", "configmaps", "--chunk-size=1", "-o", "name"]).await;
    let names: Vec<&str> = paged.lines().collect();
    assert_eq!(names, ["configmap/a", "configmap/c", "configmap/d", "configmap/e"], "{paged}");

    // A Service made by kubectl's typed client (protobuf) keeps its ports.
    ok(&kubectl, &admin, &["create", "service", "nodeport", "cache", "--tcp=6379:7000"]).await;
    let ports = ok(
        &kubectl,
        &admin,
        &[
            "get",
            "service",
            "cache",
            "-o",
            "jsonpath={.spec.ports[0].port} {.spec.ports[0].targetPort} {.spec.ports[0].nodePort}",
        ],
    )
    .await;
    let ports: Vec<&str> = ports.split_whitespace().collect();
    assert_eq!(ports[..2], ["6379", "7000"]);
    assert!(ports[2].parse::<u16>().is_ok_and(|p| (30000..=32767).contains(&p)), "{ports:?}");
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn the_control_plane_shows_its_members_and_a_failed_leader_hands_over(
    options: PgPoolOptions,
    connect: PgConnectOptions,
) {
    let t = TestApp::start(options, connect).await;
    let mut config = AgentConfig::new("eu-central-1", zones("eu-central-1"));
    config.admin_token = Some("admin-token-of-this-test".into());
    let region = BackgroundAgent::start(config, Transport::Postgres(t.pool.clone()));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let admin_url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(axum::serve(listener, region.agent.admin_router()).into_future());
    let admin_api = async |method: reqwest::Method, path: &str| -> Value {
        let answer = t
            .client
            .request(method, format!("{admin_url}{path}"))
            .header("authorization", "Bearer admin-token-of-this-test")
            .send()
            .await
            .unwrap();
        answer.json().await.unwrap_or(Value::Null)
    };
    let served = served(&t).await;
    let cluster_id = served.cluster();
    let Served { kubectl, admin, .. } = served;

    // Three API servers, each with a controller manager and a scheduler, and an etcd of three.
    let pods =
        ok(&kubectl, &admin, &["get", "pods", "-n", "kube-system", "-l", "tier=control-plane", "--no-headers"]).await;
    for component in ["kube-apiserver-", "kube-controller-manager-", "kube-scheduler-", "etcd-"] {
        let running = pods.lines().filter(|l| l.starts_with(component) && l.contains("1/1") && l.contains("Running"));
        assert_eq!(running.count(), 3, "{component}:\n{pods}");
    }
    let region_label = ok(
        &kubectl,
        &admin,
        &["get", "nodes", "-o", "jsonpath={.items[0].metadata.labels.topology\\.kubernetes\\.io/region}"],
    )
    .await;
    assert_eq!(region_label, "eu-central-1");

    // One controller manager leads; when its zone fails, another takes over.
    let lease = |field: &'static str| {
        let kubectl = &kubectl;
        let admin = &admin;
        async move {
            ok(
                kubectl,
                admin,
                &[
                    "get",
                    "lease",
                    "kube-controller-manager",
                    "-n",
                    "kube-system",
                    "-o",
                    &format!("jsonpath={{.spec.{field}}}"),
                ],
            )
            .await
        }
    };
    let leader = lease("holderIdentity").await;
    let member = leader.split('_').next().unwrap().to_string();
    assert!(member.contains("apiserver"), "{leader}");
    let state = admin_api(reqwest::Method::GET, "/state").await;
    let zone = state["clusters"][&cluster_id]["api_servers"]
        .as_array()
        .and_then(|members| members.iter().find(|m| m["name"] == *member))
        .and_then(|m| m["zone"].as_str())
        .unwrap()
        .to_string();
    admin_api(reqwest::Method::POST, &format!("/faults/zones/{zone}/fail")).await;
    eventually(20, "another controller manager to take the lease", async || lease("holderIdentity").await != leader)
        .await;
    assert_eq!(lease("leaseTransitions").await, "1");
    let failed = ok(
        &kubectl,
        &admin,
        &["get", "pod", &format!("kube-apiserver-{member}"), "-n", "kube-system", "-o", "jsonpath={.status.phase}"],
    )
    .await;
    assert_eq!(failed, "Unknown", "the failed member's API server is not running");
    admin_api(reqwest::Method::POST, &format!("/faults/zones/{zone}/restore")).await;
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn secrets_are_sealed_at_rest_and_open_after_a_restart(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let state_file = std::env::temp_dir().join(format!("moke-region-{}.json", unique()));
    let mut config = AgentConfig::new("eu-central-1", zones("eu-central-1"));
    config.state_file = Some(state_file.clone());
    let region = BackgroundAgent::start(config.clone(), Transport::Postgres(t.pool.clone()));
    let served = served(&t).await;
    let cluster_id = served.cluster();
    let Served { acme, owner, path, kubectl, admin, .. } = served;
    let (_, viewer_token) = t.member(&acme, "viewer@acme.test", "viewer").await;
    let viewer = kubeconfig(&owner, &viewer_token, &path, &kubectl, "viewer.yaml").await;

    // kubectl's typed client (protobuf) and a manifest with stringData.
    ok(&kubectl, &admin, &["create", "secret", "generic", "db", "--from-literal=password=hunter2"]).await;
    let manifest =
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: api\ntype: Opaque\nstringData:\n  token: s3cr3t-token\n";
    ok(&kubectl, &admin, &["apply", "-f", kubectl.write("api-secret.yaml", manifest).to_str().unwrap()]).await;
    let password = ok(&kubectl, &admin, &["get", "secret", "db", "-o", "jsonpath={.data.password}"]).await;
    assert_eq!(password, "aHVudGVyMg==");
    let listed = ok(&kubectl, &admin, &["get", "secrets"]).await;
    assert!(listed.lines().any(|l| l.starts_with("api") && l.contains("Opaque") && l.contains(" 1 ")), "{listed}");
    let (read, _, err) = kubectl.run(&viewer, &["get", "secret", "db"]).await;
    assert!(!read && err.contains("forbidden"), "viewers do not read secrets: {err}");

    // On disk the values are sealed; the key is a file of its own.
    eventually(20, "the secrets to be saved", async || {
        std::fs::read_to_string(&state_file).is_ok_and(|saved| saved.contains("/secrets/default/api"))
    })
    .await;
    let saved = std::fs::read_to_string(&state_file).unwrap();
    for plain in ["aHVudGVyMg", "hunter2", "czNjcjN0LXRva2Vu", "s3cr3t-token"] {
        assert!(!saved.contains(plain), "{plain} is on disk in the clear");
    }
    let key_file = state_file.with_extension("kms-key");
    assert_eq!(std::fs::read(&key_file).unwrap().len(), 32);
    region.kill();

    // A new agent on the same state opens them; without the key it refuses to start.
    let restarted = moke_region::Agent::new(config.clone(), Transport::Postgres(t.pool.clone())).unwrap();
    let store = restarted.state().kube.remove(&cluster_id).unwrap();
    assert_eq!(store.objects["/secrets/default/db"]["data"]["password"], "aHVudGVyMg==");
    std::fs::remove_file(&key_file).unwrap();
    assert!(moke_region::Agent::new(config, Transport::Postgres(t.pool.clone())).is_err());
    let _ = std::fs::remove_file(state_file);
}
