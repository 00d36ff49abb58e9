//! Kubeconfigs that kubectl can use: each cluster's CA in Vault, the
//! control plane's serving certificate signed for the region's own key, and
//! real `kubectl` against the simulated control plane's mutual-TLS endpoint.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use moke_region::{Agent, AgentConfig, Transport};
use reqwest::StatusCode;
use serde_json::{Value, json};
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};

use crate::common::{Tenant, TestApp, VaultProxy};

pub fn agent(t: &TestApp) -> Agent {
    let zones = crate::common::zones("eu-central-1");
    Agent::new(AgentConfig::new("eu-central-1", zones), Transport::Postgres(t.pool.clone())).unwrap()
}

/// Runs the region and the gateway's ingest until `done` holds (20 s at most).
pub async fn until(t: &TestApp, region: &Agent, what: &str, done: impl AsyncFn() -> bool) {
    for _ in 0..200 {
        while region.run_once().await.unwrap() > 0 {}
        while t.app.ingest_region_status_once().await.unwrap() > 0 {}
        if done().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("timed out waiting for {what}");
}

/// A cluster with a node pool whose control plane serves; returns its path.
pub async fn serving_cluster(t: &TestApp, region: &Agent, tenant: &Tenant, project: &str, name: &str) -> String {
    let (cluster, _) = t.cluster(tenant, project, name).await;
    t.node_pool(tenant, project, &cluster, "workers", 4).await;
    let path = format!("/v1/projects/{project}/clusters/{cluster}");
    until(t, region, "the control plane to serve", async || {
        let (_, view) = t.get(&path, &tenant.token).await;
        view["status"]["endpoint"].is_string()
    })
    .await;
    path
}

pub struct Kubectl {
    dir: PathBuf,
}

impl Kubectl {
    pub fn new() -> Kubectl {
        let dir = std::env::temp_dir().join(format!("moke-kubectl-{}", uuid::Uuid::now_v7().simple()));
        std::fs::create_dir_all(&dir).unwrap();
        Kubectl { dir }
    }

    pub fn write(&self, name: &str, kubeconfig: &str) -> PathBuf {
        let path = self.dir.join(name);
        std::fs::write(&path, kubeconfig).unwrap();
        path
    }

    /// Runs kubectl with `kubeconfig`; (succeeded, stdout, stderr). Async:
    /// the control plane it talks to runs on this test's runtime.
    pub async fn run(&self, kubeconfig: &Path, args: &[&str]) -> (bool, String, String) {
        let output = tokio::process::Command::new("kubectl")
            .arg("--kubeconfig")
            .arg(kubeconfig)
            .arg("--cache-dir")
            .arg(self.dir.join("cache"))
            .arg("--request-timeout=10s")
            .args(args)
            .env("HOME", &self.dir)
            .output()
            .await
            .expect("kubectl");
        let text = |b: &[u8]| String::from_utf8_lossy(b).to_string();
        (output.status.success(), text(&output.stdout), text(&output.stderr))
    }
}

impl Drop for Kubectl {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn pem_from_kubeconfig(kubeconfig: &str, field: &str) -> String {
    use base64::Engine;
    let line = kubeconfig.lines().find(|l| l.trim_start().starts_with(field)).unwrap();
    let data = line.split_once(": ").unwrap().1.trim();
    String::from_utf8(base64::engine::general_purpose::STANDARD.decode(data).unwrap()).unwrap()
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn kubectl_works_with_a_downloaded_kubeconfig(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let region = agent(&t);
    let acme = t.tenant("acme").await;
    let project = t.project(&acme, "web").await;
    let cluster = serving_cluster(&t, &region, &acme, &project, "prod").await;
    let kubectl = Kubectl::new();

    let (status, view) = t.get(&format!("{cluster}/kubeconfig?expiry_seconds=3600"), &acme.token).await;
    assert_eq!(status, StatusCode::OK, "{view}");
    assert_eq!(view["groups"], json!(["moke:cluster-admins"]));
    let kubeconfig = view["kubeconfig"].as_str().unwrap();
    let file = kubectl.write("admin.yaml", kubeconfig);
    let (ok, raw, err) = kubectl.run(&file, &["config", "view", "--raw", "-o", "json"]).await;
    assert!(ok, "{err}");
    let parsed: Value = serde_json::from_str(&raw).unwrap();
    assert!(parsed["clusters"][0]["cluster"]["server"].as_str().unwrap().starts_with("https://127.0.0.1:"));

    let (ok, nodes, err) = kubectl.run(&file, &["get", "nodes", "-o", "json"]).await;
    assert!(ok, "get nodes failed: {err}");
    let nodes: Value = serde_json::from_str(&nodes).unwrap();
    let zones: std::collections::BTreeSet<&str> = nodes["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["metadata"]["labels"]["topology.kubernetes.io/zone"].as_str().unwrap())
        .collect();
    assert_eq!(nodes["items"].as_array().unwrap().len(), 4);
    assert_eq!(zones.len(), 3, "nodes spread over the zones");
    let (ok, table, err) = kubectl.run(&file, &["get", "nodes"]).await;
    assert!(ok && table.contains("Ready"), "{table}{err}");
    let (ok, namespaces, err) = kubectl.run(&file, &["get", "namespaces"]).await;
    assert!(ok && namespaces.contains("kube-system"), "{namespaces}{err}");
    let (ok, version, err) = kubectl.run(&file, &["version", "-o", "json"]).await;
    assert!(ok, "{err}");
    let version: Value = serde_json::from_str(&version).unwrap();
    assert_eq!(version["serverVersion"]["major"], "1");
    let (ok, who, err) = kubectl.run(&file, &["auth", "whoami", "-o", "json"]).await;
    assert!(ok, "{err}");
    let who: Value = serde_json::from_str(&who).unwrap();
    let user = &who["status"]["userInfo"];
    assert!(user["username"].as_str().unwrap().starts_with("sa_"), "{who}");
    assert!(user["groups"].as_array().unwrap().contains(&json!("moke:cluster-admins")));

    // The client certificate chains to this cluster's CA and expires when asked.
    let certificate = pem_from_kubeconfig(kubeconfig, "client-certificate-data");
    let ca = pem_from_kubeconfig(kubeconfig, "certificate-authority-data");
    let (cert_file, ca_file) = (kubectl.write("client.pem", &certificate), kubectl.write("ca.pem", &ca));
    let verified = Command::new("openssl")
        .args(["verify", "-partial_chain", "-CAfile"])
        .arg(&ca_file)
        .arg(&cert_file)
        .output()
        .unwrap();
    assert!(verified.status.success(), "{}", String::from_utf8_lossy(&verified.stdout));
    let expires: chrono::DateTime<chrono::Utc> = view["expires_at"].as_str().unwrap().parse().unwrap();
    let lifetime = (expires - chrono::Utc::now()).num_seconds();
    assert!((3500..=3600).contains(&lifetime), "expires in {lifetime} s");
    let (_, events) = t.get(&format!("/v1/orgs/{}/audit-events?limit=100", acme.org), &acme.token).await;
    let issued =
        events["items"].as_array().unwrap().iter().find(|e| e["action"] == "cluster.credentials_issue").unwrap();
    assert!(issued["details"]["serial_number"].is_string());
    assert_eq!(issued["details"]["groups"], json!(["moke:cluster-admins"]));

    // The exec variant and its credential endpoint.
    let (_, exec) = t.get(&format!("{cluster}/kubeconfig?format=exec"), &acme.token).await;
    assert!(exec["kubeconfig"].as_str().unwrap().contains("command: moke"));
    let (status, credential) = t.post(&format!("{cluster}/credentials?access=view"), &acme.token, json!({})).await;
    assert_eq!(status, StatusCode::OK, "{credential}");
    assert_eq!(credential["kind"], "ExecCredential");
    assert!(credential["status"]["clientCertificateData"].as_str().unwrap().contains("BEGIN CERTIFICATE"));
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn roles_decide_groups_and_credentials_stay_with_their_cluster(
    options: PgPoolOptions,
    connect: PgConnectOptions,
) {
    let t = TestApp::start(options, connect).await;
    let region = agent(&t);
    let acme = t.tenant("acme").await;
    let project = t.project(&acme, "web").await;
    let a = serving_cluster(&t, &region, &acme, &project, "a").await;
    let b = serving_cluster(&t, &region, &acme, &project, "b").await;
    let kubectl = Kubectl::new();

    // Viewers get view groups and cannot ask for more; members edit.
    let (_, viewer) = t.member(&acme, "viewer@acme.test", "viewer").await;
    let (status, view) = t.get(&format!("{a}/kubeconfig"), &viewer).await;
    assert_eq!((status, &view["groups"]), (StatusCode::OK, &json!(["moke:viewers"])));
    assert_eq!(t.get(&format!("{a}/kubeconfig?access=admin"), &viewer).await.0, StatusCode::FORBIDDEN);
    let (_, member) = t.member(&acme, "member@acme.test", "member").await;
    assert_eq!(t.get(&format!("{a}/kubeconfig"), &member).await.1["groups"], json!(["moke:editors"]));
    let file = kubectl.write("viewer.yaml", view["kubeconfig"].as_str().unwrap());
    let (ok, who, err) = kubectl.run(&file, &["auth", "whoami", "-o", "json"]).await;
    assert!(ok, "{err}");
    assert!(who.contains("moke:viewers") && who.contains("usr_"), "{who}");

    // A's certificate at B's endpoint (trusting B's serving certificate): refused in the handshake.
    let (_, for_a) = t.get(&format!("{a}/kubeconfig"), &acme.token).await;
    let (_, for_b) = t.get(&format!("{b}/kubeconfig"), &acme.token).await;
    let server = |k: &str| k.lines().find(|l| l.trim_start().starts_with("server:")).unwrap().to_string();
    let ca_line =
        |k: &str| k.lines().find(|l| l.trim_start().starts_with("certificate-authority-data:")).unwrap().to_string();
    let (ka, kb) = (for_a["kubeconfig"].as_str().unwrap(), for_b["kubeconfig"].as_str().unwrap());
    let crossed = ka.replace(&server(ka), &server(kb)).replace(&ca_line(ka), &ca_line(kb));
    let file = kubectl.write("crossed.yaml", &crossed);
    let (ok, _, err) = kubectl.run(&file, &["get", "nodes"]).await;
    assert!(!ok, "cluster B accepted cluster A's certificate");
    assert!(!err.contains("Unauthorized"), "refused before HTTP: {err}");

    // Revocation: every earlier credential stops working; new ones work.
    let old = kubectl.write("old.yaml", ka);
    assert!(kubectl.run(&old, &["get", "nodes"]).await.0);
    let (status, op) = t.post(&format!("{a}/credentials/revoke"), &acme.token, json!({})).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{op}");
    assert_eq!(t.post(&format!("{a}/credentials/revoke"), &viewer, json!({})).await.0, StatusCode::FORBIDDEN);
    let op_path = format!("/v1/operations/{}", op["id"].as_str().unwrap());
    until(&t, &region, "the revocation", async || t.get(&op_path, &acme.token).await.1["status"] == "succeeded").await;
    let (ok, _, err) = kubectl.run(&old, &["get", "nodes"]).await;
    assert!(!ok && err.contains("Unauthorized"), "{err}");
    let (_, fresh) = t.get(&format!("{a}/kubeconfig"), &acme.token).await;
    let fresh = kubectl.write("fresh.yaml", fresh["kubeconfig"].as_str().unwrap());
    assert!(kubectl.run(&fresh, &["get", "nodes"]).await.0);
    // Cluster B never noticed.
    let b_file = kubectl.write("b.yaml", kb);
    assert!(kubectl.run(&b_file, &["get", "nodes"]).await.0);
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn cluster_cas_live_and_die_with_their_clusters_and_fail_closed(
    options: PgPoolOptions,
    connect: PgConnectOptions,
) {
    let proxy = VaultProxy::start().await;
    let addr = proxy.addr.clone();
    let t = TestApp::start_with(options, connect, move |c| {
        c.vault.addr = addr;
        c.vault.timeout_seconds = 2;
    })
    .await;
    let region = agent(&t);
    let acme = t.tenant("acme").await;
    let project = t.project(&acme, "web").await;
    let cluster = serving_cluster(&t, &region, &acme, &project, "prod").await;
    assert_eq!(t.count("cluster_cas WHERE destroyed_at IS NULL").await, 1);
    // Nothing secret is stored: the CA's key stays in Vault, the serving key in the region.
    let columns: Vec<String> = sqlx::query_scalar(
        "SELECT column_name::text FROM information_schema.columns WHERE table_name = 'cluster_cas' ORDER BY 1",
    )
    .fetch_all(&t.pool)
    .await
    .unwrap();
    assert!(columns.iter().all(|c| !c.contains("key_pem") && !c.contains("private")), "{columns:?}");

    proxy.cut();
    let (status, problem) = t.get(&format!("{cluster}/kubeconfig"), &acme.token).await;
    assert_eq!((status, problem["code"].as_str()), (StatusCode::SERVICE_UNAVAILABLE, Some("vault_unavailable")));
    assert_eq!(t.get(&cluster, &acme.token).await.0, StatusCode::OK, "reads need no Vault");
    let (status, problem) = t
        .post(
            &format!("/v1/projects/{project}/clusters"),
            &acme.token,
            json!({ "name": "next", "spec": { "region": "eu-central-1" } }),
        )
        .await;
    assert_eq!((status, problem["code"].as_str()), (StatusCode::SERVICE_UNAVAILABLE, Some("vault_unavailable")));
    assert_eq!(t.count("clusters").await, 1, "no cluster without its CA");
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn a_deleted_clusters_ca_is_destroyed(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let region = agent(&t);
    let acme = t.tenant("acme").await;
    let project = t.project(&acme, "web").await;
    let (cluster, _) = t.cluster(&acme, &project, "short-lived").await;
    let path = format!("/v1/projects/{project}/clusters/{cluster}");
    assert_eq!(t.delete(&path, &acme.token).await.0, StatusCode::ACCEPTED);
    until(&t, &region, "the cluster to be gone", async || t.get(&path, &acme.token).await.0 == StatusCode::NOT_FOUND)
        .await;
    assert_eq!(t.app.destroy_orphaned_cluster_cas_once().await.unwrap(), 1);
    assert_eq!(t.count("cluster_cas WHERE destroyed_at IS NOT NULL").await, 1);
    assert_eq!(t.app.destroy_orphaned_cluster_cas_once().await.unwrap(), 0);
}

/// A control plane's certificate request that cannot be signed (its issuer
/// is gone) waits on its own backoff and, after its attempts, is set aside
/// with its reason: it never holds up another cluster's.
#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn an_unsignable_certificate_request_holds_up_no_other_cluster(
    options: PgPoolOptions,
    connect: PgConnectOptions,
) {
    let t = TestApp::start(options, connect).await;
    let region = agent(&t);
    let acme = t.tenant("acme").await;
    let project = t.project(&acme, "web").await;
    let (broken, _) = t.cluster(&acme, &project, "broken").await;
    let broken_id = broken.parse::<moke_api::ids::ClusterId>().unwrap().uuid();
    sqlx::query("UPDATE cluster_cas SET issuer_id = 'gone' WHERE cluster_id = $1")
        .bind(broken_id)
        .execute(&t.pool)
        .await
        .unwrap();
    let attempts = async || -> (i32, Option<String>) {
        sqlx::query_as("SELECT serving_attempts, serving_error FROM cluster_cas WHERE cluster_id = $1")
            .bind(broken_id)
            .fetch_one(&t.pool)
            .await
            .unwrap()
    };
    until(&t, &region, "the broken cluster's request to fail", async || {
        t.app.sign_serving_certificates_once().await.unwrap();
        attempts().await.1.is_some()
    })
    .await;
    let (_, error) = attempts().await;
    assert_eq!(error.as_deref(), Some("certificate_request_refused"), "a code that names no Vault internals");

    // Another cluster's request is signed meanwhile, and kubectl can use it.
    let prod = serving_cluster(&t, &region, &acme, &project, "prod").await;
    let (status, view) = t.get(&format!("{prod}/kubeconfig"), &acme.token).await;
    assert_eq!(status, StatusCode::OK, "{view}");

    // After its last attempt the broken request is set aside, and says why.
    sqlx::query("UPDATE cluster_cas SET serving_attempts = 9, serving_retry_at = now() WHERE cluster_id = $1")
        .bind(broken_id)
        .execute(&t.pool)
        .await
        .unwrap();
    t.app.sign_serving_certificates_once().await.unwrap();
    assert_eq!(attempts().await.0, 10);
    let path = format!("/v1/projects/{project}/clusters/{broken}/kubeconfig");
    let (status, problem) = t.get(&path, &acme.token).await;
    assert_eq!(status, StatusCode::CONFLICT, "{problem}");
    let detail = problem["detail"].as_str().unwrap();
    assert!(detail.contains("could not be signed") && !detail.contains("sign-verbatim"), "{problem}");
    let audited: i64 =
        sqlx::query_scalar("SELECT count(*) FROM audit_events WHERE action = 'cluster.serving_certificate_failed'")
            .fetch_one(&t.pool)
            .await
            .unwrap();
    assert_eq!(audited, 1);
    assert_eq!(t.app.sign_serving_certificates_once().await.unwrap(), 0, "set aside: not tried again");
}
