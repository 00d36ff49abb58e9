//! Kubeconfigs that kubectl can use: each cluster's CA in Vault, the
//! control plane's serving certificate signed for the region's own key, and
//! real `kubectl` against the simulated control plane's mutual-TLS endpoint.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use moke_api::model::{
    AuditEventView, ClusterView, ExecCredential, KubeconfigView, OperationStatus, OperationView, Page,
};
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
    let owner = t.client(tenant);
    let (cluster, _) = owner.create_cluster(project, name, json!({ "region": "eu-central-1" })).await;
    let cluster = cluster.id.to_string();
    owner.create_node_pool(project, &cluster, "workers", 4).await;
    let path = format!("/v1/projects/{project}/clusters/{cluster}");
    until(t, region, "the control plane to serve", async || {
        owner.get::<ClusterView>(&path).await.ok().status.endpoint.is_some()
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
    let owner = t.client(&acme);
    let project = owner.create_project("web").await.id.to_string();
    let cluster = serving_cluster(&t, &region, &acme, &project, "prod").await;
    let kubectl = Kubectl::new();

    let view: KubeconfigView =
        owner.get(&format!("{cluster}/kubeconfig?expiry_seconds=3600")).await.expect(StatusCode::OK);
    assert_eq!(view.groups, ["moke:cluster-admins"]);
    let kubeconfig = view.kubeconfig.as_str();
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
    let expires = view.expires_at.unwrap_or_else(|| panic!("no expiry: {view:?}"));
    let lifetime = (expires - chrono::Utc::now()).num_seconds();
    assert!((3500..=3600).contains(&lifetime), "expires in {lifetime} s");
    let events: Page<AuditEventView> =
        owner.get(&owner.org_path("/audit-events?limit=100")).await.expect(StatusCode::OK);
    let issued = events
        .items
        .iter()
        .find(|e| e.action == "cluster.credentials_issue")
        .unwrap_or_else(|| panic!("no credentials issued: {events:?}"));
    assert!(issued.details["serial_number"].is_string(), "{issued:?}");
    assert_eq!(issued.details["groups"], json!(["moke:cluster-admins"]));

    // The exec variant and its credential endpoint.
    let exec: KubeconfigView = owner.get(&format!("{cluster}/kubeconfig?format=exec")).await.expect(StatusCode::OK);
    assert!(exec.kubeconfig.contains("command: moke"), "{exec:?}");
    let credential: ExecCredential =
        owner.post(&format!("{cluster}/credentials?access=view"), json!({})).await.expect(StatusCode::OK);
    assert_eq!(credential.kind, "ExecCredential");
    assert!(credential.status.client_certificate_data.contains("BEGIN CERTIFICATE"));
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn roles_decide_groups_and_credentials_stay_with_their_cluster(
    options: PgPoolOptions,
    connect: PgConnectOptions,
) {
    let t = TestApp::start(options, connect).await;
    let region = agent(&t);
    let acme = t.tenant("acme").await;
    let owner = t.client(&acme);
    let project = owner.create_project("web").await.id.to_string();
    let a = serving_cluster(&t, &region, &acme, &project, "a").await;
    let b = serving_cluster(&t, &region, &acme, &project, "b").await;
    let kubectl = Kubectl::new();

    // Viewers get view groups and cannot ask for more; members edit.
    let (_, viewer) = t.member(&acme, "viewer@acme.test", "viewer").await;
    let viewer = owner.with_token(&viewer);
    let view: KubeconfigView = viewer.get(&format!("{a}/kubeconfig")).await.expect(StatusCode::OK);
    assert_eq!(view.groups, ["moke:viewers"]);
    viewer.get::<KubeconfigView>(&format!("{a}/kubeconfig?access=admin")).await.refused(StatusCode::FORBIDDEN);
    let (_, member) = t.member(&acme, "member@acme.test", "member").await;
    let member_view: KubeconfigView =
        owner.with_token(&member).get(&format!("{a}/kubeconfig")).await.expect(StatusCode::OK);
    assert_eq!(member_view.groups, ["moke:editors"]);
    let file = kubectl.write("viewer.yaml", &view.kubeconfig);
    let (ok, who, err) = kubectl.run(&file, &["auth", "whoami", "-o", "json"]).await;
    assert!(ok, "{err}");
    assert!(who.contains("moke:viewers") && who.contains("usr_"), "{who}");

    // A's certificate at B's endpoint (trusting B's serving certificate): refused in the handshake.
    let for_a: KubeconfigView = owner.get(&format!("{a}/kubeconfig")).await.expect(StatusCode::OK);
    let for_b: KubeconfigView = owner.get(&format!("{b}/kubeconfig")).await.expect(StatusCode::OK);
    let server = |k: &str| k.lines().find(|l| l.trim_start().starts_with("server:")).unwrap().to_string();
    let ca_line =
        |k: &str| k.lines().find(|l| l.trim_start().starts_with("certificate-authority-data:")).unwrap().to_string();
    let (ka, kb) = (for_a.kubeconfig.as_str(), for_b.kubeconfig.as_str());
    let crossed = ka.replace(&server(ka), &server(kb)).replace(&ca_line(ka), &ca_line(kb));
    let file = kubectl.write("crossed.yaml", &crossed);
    let (ok, _, err) = kubectl.run(&file, &["get", "nodes"]).await;
    assert!(!ok, "cluster B accepted cluster A's certificate");
    assert!(!err.contains("Unauthorized"), "refused before HTTP: {err}");

    // Revocation: every earlier credential stops working; new ones work.
    let old = kubectl.write("old.yaml", ka);
    assert!(kubectl.run(&old, &["get", "nodes"]).await.0);
    let op: OperationView =
        owner.post(&format!("{a}/credentials/revoke"), json!({})).await.expect(StatusCode::ACCEPTED);
    viewer.post::<OperationView>(&format!("{a}/credentials/revoke"), json!({})).await.refused(StatusCode::FORBIDDEN);
    until(&t, &region, "the revocation", async || owner.operation(op.id).await.status == OperationStatus::Succeeded)
        .await;
    let (ok, _, err) = kubectl.run(&old, &["get", "nodes"]).await;
    assert!(!ok && err.contains("Unauthorized"), "{err}");
    let fresh: KubeconfigView = owner.get(&format!("{a}/kubeconfig")).await.expect(StatusCode::OK);
    let fresh = kubectl.write("fresh.yaml", &fresh.kubeconfig);
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
    let owner = t.client(&acme);
    let project = owner.create_project("web").await.id.to_string();
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
    owner
        .get::<KubeconfigView>(&format!("{cluster}/kubeconfig"))
        .await
        .refused_with(StatusCode::SERVICE_UNAVAILABLE, "vault_unavailable");
    owner.get::<ClusterView>(&cluster).await.about("reads need no Vault").expect(StatusCode::OK);
    owner
        .post::<OperationView>(
            &format!("/v1/projects/{project}/clusters"),
            json!({ "name": "next", "spec": { "region": "eu-central-1" } }),
        )
        .await
        .refused_with(StatusCode::SERVICE_UNAVAILABLE, "vault_unavailable");
    assert_eq!(t.count("clusters").await, 1, "no cluster without its CA");
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn a_deleted_clusters_ca_is_destroyed(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let region = agent(&t);
    let acme = t.tenant("acme").await;
    let owner = t.client(&acme);
    let project = owner.create_project("web").await.id.to_string();
    let (cluster, _) = owner.create_cluster(&project, "short-lived", json!({ "region": "eu-central-1" })).await;
    let path = format!("/v1/projects/{project}/clusters/{}", cluster.id);
    owner.delete::<OperationView>(&path).await.expect(StatusCode::ACCEPTED);
    until(&t, &region, "the cluster to be gone", async || {
        owner.get::<ClusterView>(&path).await.status == StatusCode::NOT_FOUND
    })
    .await;
    owner.get::<ClusterView>(&path).await.refused_with(StatusCode::NOT_FOUND, "not_found");
    assert_eq!(t.app.destroy_orphaned_cluster_cas_once().await.unwrap(), 1);
    assert_eq!(t.count("cluster_cas WHERE destroyed_at IS NOT NULL").await, 1);
    assert_eq!(t.app.destroy_orphaned_cluster_cas_once().await.unwrap(), 0);
}

/// The control-plane firewall (DOKS `control_plane_firewall`): with it on,
/// kubectl from an address it does not list cannot even connect; listing the
/// address lets it back in. Bad lists are refused naming each entry.
#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn the_control_plane_firewall_refuses_kubectl_from_elsewhere(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let region = agent(&t);
    let acme = t.tenant("acme").await;
    let owner = t.client(&acme);
    let project = owner.create_project("web").await.id.to_string();
    let cluster = serving_cluster(&t, &region, &acme, &project, "prod").await;
    let kubectl = Kubectl::new();
    let view: KubeconfigView = owner.get(&format!("{cluster}/kubeconfig")).await.expect(StatusCode::OK);
    let file = kubectl.write("admin.yaml", &view.kubeconfig);
    let (ok, _, err) = kubectl.run(&file, &["get", "nodes"]).await;
    assert!(ok, "open by default: {err}");

    let firewall = |enabled: bool, addresses: Value| json!({ "spec": { "control_plane_firewall": { "enabled": enabled, "allowed_addresses": addresses } } });
    let problem = owner.patch::<OperationView>(&cluster, firewall(true, json!([]))).await;
    let problem = problem.refused(StatusCode::BAD_REQUEST);
    assert_eq!(problem.code_of("spec.control_plane_firewall.allowed_addresses"), "empty", "{problem:?}");
    let bad = json!(["10.0.0.1/8", "not-a-network", "192.0.2.0/24", "192.0.2.0/24"]);
    let problem = owner.patch::<OperationView>(&cluster, firewall(true, bad)).await.refused(StatusCode::BAD_REQUEST);
    let list = "spec.control_plane_firewall.allowed_addresses";
    assert_eq!(problem.code_of(&format!("{list}[0]")), "host_bits_set", "{problem:?}");
    assert_eq!(problem.code_of(&format!("{list}[1]")), "invalid", "{problem:?}");
    assert_eq!(problem.code_of(&format!("{list}[3]")), "duplicate", "{problem:?}");

    let problem = owner.patch::<OperationView>(&cluster, firewall(true, json!(["010.0.0.0/8", "::ffff:0:0/96"]))).await;
    let problem = problem.refused(StatusCode::BAD_REQUEST);
    assert_eq!(problem.code_of(&format!("{list}[0]")), "not_canonical", "{problem:?}");
    assert_eq!(problem.code_of(&format!("{list}[1]")), "ipv4_mapped", "{problem:?}");
    // Members manage the cluster but not who may reach it: that is a cluster admin's.
    let (_, member) = t.member(&acme, "member@acme.test", "member").await;
    let member = owner.with_token(&member);
    member.patch::<OperationView>(&cluster, firewall(false, json!(["0.0.0.0/0"]))).await.refused(StatusCode::FORBIDDEN);
    member.patch::<OperationView>(&cluster, json!({ "labels": { "team": "web" } })).await.expect(StatusCode::ACCEPTED);

    // A client keeping its connection open across the change: its next request is refused.
    let server = view.kubeconfig.lines().find_map(|l| l.trim().strip_prefix("server: ")).unwrap().to_string();
    let (certificate, key, ca) = (
        pem_from_kubeconfig(&view.kubeconfig, "client-certificate-data"),
        pem_from_kubeconfig(&view.kubeconfig, "client-key-data"),
        pem_from_kubeconfig(&view.kubeconfig, "certificate-authority-data"),
    );
    let open = reqwest::Client::builder()
        .tls_certs_only([reqwest::Certificate::from_pem(ca.as_bytes()).unwrap()])
        .identity(reqwest::Identity::from_pem(format!("{certificate}\n{key}").as_bytes()).unwrap())
        .build()
        .unwrap();
    let before = open.get(format!("{server}/version")).send().await.unwrap();
    assert_eq!(before.status(), StatusCode::OK);

    // On, for a network kubectl is not in: the connection is dropped.
    let op: OperationView = owner
        .patch(&cluster, firewall(true, json!(["192.0.2.0/24", "2001:db8::/32"])))
        .await
        .expect(StatusCode::ACCEPTED);
    until(&t, &region, "the firewall to be on", async || {
        owner.operation(op.id).await.status == OperationStatus::Succeeded
    })
    .await;
    let view: ClusterView = owner.get(&cluster).await.expect(StatusCode::OK);
    assert!(view.spec.control_plane_firewall.enabled, "{view:?}");
    let (ok, out, err) = kubectl.run(&file, &["get", "nodes"]).await;
    assert!(!ok, "kubectl from 127.0.0.1 reached a control plane that does not list it: {out}");
    let after = open.get(format!("{server}/version")).send().await.expect("the open connection answers");
    assert_eq!(after.status(), StatusCode::FORBIDDEN, "a connection opened before the firewall is held to it");
    assert!(!err.contains("Unauthorized") && !err.contains("Forbidden"), "refused before TLS, not by the API: {err}");

    // Listing loopback lets it back in.
    let op: OperationView =
        owner.patch(&cluster, firewall(true, json!(["127.0.0.0/8"]))).await.expect(StatusCode::ACCEPTED);
    until(&t, &region, "the firewall to list loopback", async || {
        owner.operation(op.id).await.status == OperationStatus::Succeeded
    })
    .await;
    let (ok, _, err) = kubectl.run(&file, &["get", "nodes"]).await;
    assert!(ok, "listed: {err}");
}

/// A snapshot whose command the region never takes fails at its deadline,
/// instead of holding up every later one.
#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn a_lost_snapshot_fails_at_its_deadline(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let region = agent(&t);
    let acme = t.tenant("acme").await;
    let owner = t.client(&acme);
    let project = owner.create_project("web").await.id.to_string();
    let cluster = serving_cluster(&t, &region, &acme, &project, "prod").await;
    // The agent is not run again: the command waits, and the next snapshot with it.
    let op: OperationView = owner.post(&format!("{cluster}/snapshots"), json!({})).await.expect(StatusCode::ACCEPTED);
    let again = owner.post::<OperationView>(&format!("{cluster}/snapshots"), json!({})).await;
    again.refused_with(StatusCode::CONFLICT, "snapshot_in_progress");
    assert_eq!(t.app.enforce_etcd_deadlines_once().await.unwrap(), 0, "not yet due");
    sqlx::query("UPDATE operations SET created_at = now() - interval '11 minutes' WHERE id = $1")
        .bind(op.id.uuid())
        .execute(&t.pool)
        .await
        .unwrap();
    assert_eq!(t.app.enforce_etcd_deadlines_once().await.unwrap(), 0, "a silent region's work is left alone");
    region.heartbeat().await.unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while t.count("region_health WHERE last_heartbeat_at > now() - interval '1 minute'").await == 0 {
        t.app.ingest_region_status_once().await.unwrap();
        assert!(std::time::Instant::now() < deadline, "the heartbeat was never recorded");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(t.app.enforce_etcd_deadlines_once().await.unwrap(), 1);
    let failed = owner.operation(op.id).await;
    assert_eq!(failed.status, OperationStatus::Failed, "{failed:?}");
    assert_eq!(failed.error.map(|e| e.code).as_deref(), Some("deadline_exceeded"));
    assert_eq!(t.app.enforce_etcd_deadlines_once().await.unwrap(), 0, "failed once");
    owner.post::<OperationView>(&format!("{cluster}/snapshots"), json!({})).await.expect(StatusCode::ACCEPTED);
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
    let owner = t.client(&acme);
    let project = owner.create_project("web").await.id.to_string();
    let (broken, create) = owner.create_cluster(&project, "broken", json!({ "region": "eu-central-1" })).await;
    let (broken_id, broken) = (broken.id.uuid(), broken.id.to_string());
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
    owner.get::<KubeconfigView>(&format!("{prod}/kubeconfig")).await.expect(StatusCode::OK);

    // After its last attempt the broken request is set aside, and says why.
    sqlx::query("UPDATE cluster_cas SET serving_attempts = 9, serving_retry_at = now() WHERE cluster_id = $1")
        .bind(broken_id)
        .execute(&t.pool)
        .await
        .unwrap();
    t.app.sign_serving_certificates_once().await.unwrap();
    assert_eq!(attempts().await.0, 10);
    let path = format!("/v1/projects/{project}/clusters/{broken}/kubeconfig");
    let problem = owner.get::<KubeconfigView>(&path).await.refused(StatusCode::CONFLICT);
    let detail = &problem.detail;
    assert!(detail.contains("could not be signed") && !detail.contains("sign-verbatim"), "{problem:?}");
    let audited: i64 =
        sqlx::query_scalar("SELECT count(*) FROM audit_events WHERE action = 'cluster.serving_certificate_failed'")
            .fetch_one(&t.pool)
            .await
            .unwrap();
    assert_eq!(audited, 1);
    assert_eq!(t.app.sign_serving_certificates_once().await.unwrap(), 0, "set aside: not tried again");
    // The create waited for a control plane that can serve; it never will.
    let failed = owner.operation(create.id).await;
    assert_eq!(failed.status, OperationStatus::Failed, "{failed:?}");
    assert_eq!(failed.error.map(|e| e.code).as_deref(), Some("certificate_request_refused"));
}
