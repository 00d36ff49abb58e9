//! The `moke` CLI as a customer runs it, a process against a live gateway
//! and region: sign up, sign in, create a project, a cluster and a node pool with
//! `--wait`, save a kubeconfig, run real `kubectl get nodes` through the
//! exec credential plugin, deploy a Deployment YAML, sign out.
//!
//! The binary is the workspace's `moke` (`cargo xtask test` builds every
//! target first); its config and kubeconfig live in a temporary HOME.

use std::path::{Path, PathBuf};
use std::time::Duration;

use moke_region::{AgentConfig, Transport};
use serde_json::Value;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};

use crate::common::{BackgroundAgent, TestApp, eventually, zones};

/// The `moke` binary beside this test binary's folder (`target/debug/moke`).
fn moke_binary() -> PathBuf {
    let deps = std::env::current_exe().unwrap().parent().unwrap().to_path_buf();
    let binary = deps.parent().unwrap().join("moke");
    assert!(binary.exists(), "{} is missing: build it with `cargo build -p moke-cli`", binary.display());
    binary
}

struct Cli {
    binary: PathBuf,
    home: tempfile::TempDir,
}

impl Cli {
    /// Runs `moke args…` (with `stdin`); returns (succeeded, stdout, stderr).
    async fn run(&self, args: &[&str], env: &[(&str, &str)]) -> (bool, String, String) {
        let path = format!("{}:{}", self.binary.parent().unwrap().display(), std::env::var("PATH").unwrap_or_default());
        let output = tokio::process::Command::new(&self.binary)
            .args(args)
            .env_clear()
            .current_dir(self.home.path())
            .env("HOME", self.home.path())
            .env("PATH", path)
            .envs(env.iter().copied())
            .kill_on_drop(true)
            .output();
        let output = tokio::time::timeout(Duration::from_secs(180), output).await.expect("moke finished").unwrap();
        let (out, err) = (
            String::from_utf8_lossy(&output.stdout).into_owned(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        );
        (output.status.success(), out, err)
    }

    async fn ok(&self, args: &[&str]) -> String {
        let (ok, out, err) = self.run(args, &[]).await;
        assert!(ok, "moke {args:?} failed:\n{out}\n{err}");
        out
    }

    async fn json(&self, args: &[&str]) -> Value {
        let mut args = args.to_vec();
        args.extend(["-o", "json"]);
        let out = self.ok(&args).await;
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("moke {args:?} printed no JSON ({e}): {out}"))
    }

    fn path(&self, relative: &str) -> PathBuf {
        self.home.path().join(relative)
    }
}

fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn from_nothing_to_kubectl_with_only_moke_commands(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let _region = BackgroundAgent::start(
        AgentConfig::new("eu-central-1", zones("eu-central-1")),
        Transport::Postgres(t.pool.clone()),
    );
    let (email, password) = ("ada@example.com", "correct horse battery staple");
    let cli = Cli { binary: moke_binary(), home: tempfile::tempdir().unwrap() };

    // Sign up (passwords travel in files, not in the process list) and
    // confirm with the mailed token.
    let signup = cli.path("signup.json");
    let body =
        serde_json::json!({ "email": email, "password": password, "display_name": "Ada", "organization_name": "acme" });
    std::fs::write(&signup, body.to_string()).unwrap();
    let anonymous = [("MOKE_HOST", t.base.as_str())];
    let (ok, out, err) = cli.run(&["account", "create", "--json-body", signup.to_str().unwrap()], &anonymous).await;
    assert!(ok, "{out}\n{err}");
    let token = t.mailed_token("signup", email).await;
    std::fs::write(&signup, serde_json::json!({ "token": token, "password": password }).to_string()).unwrap();
    let (ok, out, err) = cli.run(&["account", "confirm", "--json-body", signup.to_str().unwrap()], &anonymous).await;
    assert!(ok, "{out}\n{err}");

    // Sign in: a personal token for the CLI, in a file only its owner reads.
    let (ok, out, err) =
        cli.run(&["auth", "login", "--host", &t.base, "--email", email], &[("MOKE_PASSWORD", password)]).await;
    assert!(ok, "{out}\n{err}");
    assert!(err.contains("signed in as ada@example.com"), "{err}");
    let credentials = cli.path(".config/moke/credentials.toml");
    assert_eq!(mode(&credentials), 0o600);
    assert!(std::fs::read_to_string(&credentials).unwrap().contains("moke_pat_"));
    let status = cli.json(&["auth", "status"]).await;
    assert_eq!(status["credential"], "valid", "{status}");

    // A project, a cluster and a node pool, each waited for.
    let project = cli.json(&["project", "create", "--name", "shop"]).await;
    let project_id = project["id"].as_str().unwrap().to_string();
    // What the cluster will cost, before it is made: priced, nothing created.
    let args = ["cluster", "create", "--project", "shop", "--name", "prod", "--region", "eu-central-1"];
    let priced = [&args[..], &["--control-plane-replicas", "3", "--node-pool", "bm.small=2", "--estimate"]].concat();
    let table = cli.ok(&priced).await;
    assert!(table.contains("Node bm.small") && table.contains("MONTHLY TOTAL  USD 307.24"), "{table}");
    let (ok, _, err) = cli.run(&[&args[..], &["--node-pool", "bm.small", "--estimate"]].concat(), &[]).await;
    assert!(!ok && err.contains("MACHINE_TYPE=COUNT"), "{err}");
    assert_eq!(cli.json(&["cluster", "list", "--project", "shop"]).await, serde_json::json!([]));
    let plans = cli.json(&["billing", "plan", "list"]).await;
    assert_eq!(plans.as_array().map(Vec::len), Some(3), "{plans}");
    let plan = cli.json(&["billing", "plan", "view"]).await;
    assert_eq!(plan["plan"]["id"], "standard", "{plan}");
    let cluster = cli
        .json(&["cluster", "create", "--project", "shop", "--name", "prod", "--region", "eu-central-1", "--wait"])
        .await;
    assert_eq!(cluster["status"], "succeeded", "{cluster}");
    let pool = cli
        .json(&[
            "node-pool",
            "create",
            "--project",
            "shop",
            "--cluster",
            "prod",
            "--name",
            "workers",
            "--machine-type",
            "bm.small",
            "--count",
            "2",
            "--wait",
        ])
        .await;
    assert_eq!(pool["status"], "succeeded", "{pool}");

    // The month's invoice, by the names people reach for: listed, then downloaded as PDF and CSV
    // (its usage reported now, if the region has not yet).
    let now = chrono::Utc::now();
    let cluster_id = cluster["target"]["id"].as_str().unwrap();
    let _ = t.report_usage_as(cluster_id, None, "", now - chrono::Duration::seconds(5), now, "cli").await;
    let invoices = cli.json(&["billing", "invoices"]).await;
    let draft = invoices[0]["id"].as_str().unwrap_or_else(|| panic!("a draft: {invoices}")).to_string();
    assert_eq!(invoices[0]["status"], "draft", "{invoices}");
    let saved = cli.ok(&["billing", "download", "--invoice", &draft]).await;
    assert!(saved.is_empty(), "the file's name goes to stderr: {saved}");
    let month = now.format("%Y-%m");
    let pdf = std::fs::read(cli.path(&format!("moke-invoice-{month}-draft.pdf"))).unwrap();
    assert!(pdf.starts_with(b"%PDF-"), "a PDF");
    let csv = cli.ok(&["billing", "invoice", "csv", "--invoice", &draft, "--file", "-"]).await;
    assert!(csv.lines().next().is_some_and(|header| header.contains("amount")), "{csv}");
    let (ok, _, err) =
        cli.run(&["billing", "download", "--invoice", "bill_00000000000000000000000000000000"], &[]).await;
    assert!(!ok && err.contains("404"), "{err}");
    let scale = cli.path("scale.json");
    std::fs::write(&scale, serde_json::json!({ "spec": { "count": 3 } }).to_string()).unwrap();
    let args = ["node-pool", "update", "--project", "shop", "--cluster", "prod", "--node-pool", "workers"];
    let change = cli.json(&[&args[..], &["--json-body", scale.to_str().unwrap(), "--estimate"]].concat()).await;
    assert_eq!(change["monthly_delta"], "120.02", "one more bm.small node: {change}");
    let table = cli.ok(&["cluster", "list", "--project", "shop"]).await;
    assert!(table.starts_with("ID") && table.contains("prod"), "{table}");
    // The same change as a dry run: its diff and steps, and the pool unchanged.
    let plan = cli.ok(&[&args[..], &["--json-body", scale.to_str().unwrap(), "--dry-run"]].concat()).await;
    assert!(plan.contains("Dry run") && plan.contains("/count: 2 -> 3"), "{plan}");
    let plan = cli.json(&["cluster", "delete", "--project", "shop", "--cluster", "prod", "--dry-run"]).await;
    assert_eq!(plan["operations"][0]["kind"], "cluster_delete", "{plan}");
    let pool =
        cli.json(&["node-pool", "view", "--project", "shop", "--cluster", "prod", "--node-pool", "workers"]).await;
    assert_eq!(pool["spec"]["count"], 2, "{pool}");
    let (ok, _, err) =
        cli.run(&["cluster", "delete", "--project", "shop", "--cluster", "nope", "--dry-run"], &[]).await;
    assert!(!ok && err.contains("not found"), "refused as the real call: {err}");
    // Once the organization's policy holds deletes, the plan says the delete would wait.
    let org = cli.json(&["org", "list"]).await[0]["id"].as_str().unwrap().to_string();
    let policy = cli.path("policy.json");
    std::fs::write(&policy, serde_json::json!({ "approvals": { "required_for": ["cluster_delete"] } }).to_string())
        .unwrap();
    cli.ok(&["org", "policy", "update", "--org", &org, "--json-body", policy.to_str().unwrap()]).await;
    let plan = cli.ok(&["cluster", "delete", "--project", "shop", "--cluster", "prod", "--dry-run"]).await;
    assert!(plan.contains("It would wait for approval (rule cluster_delete of policy version 1)"), "{plan}");

    // A kubeconfig in ~/.kube/config whose user is the exec plugin.
    let mut cluster_id = String::new();
    eventually(30, "the control plane to serve", async || {
        let view = cli.json(&["cluster", "view", "--project", "shop", "--cluster", "prod"]).await;
        cluster_id = view["id"].as_str().unwrap_or_default().to_string();
        view["status"]["endpoint"].is_string()
    })
    .await;
    cli.ok(&["kubeconfig", "save", "--project", "shop", "--cluster", "prod"]).await;
    let kubeconfig = cli.path(".kube/config");
    assert_eq!(mode(&kubeconfig), 0o600);
    assert!(std::fs::read_to_string(&kubeconfig).unwrap().contains("command: moke"));

    // kubectl runs `moke kubeconfig token`, which caches its credential.
    let kubectl = tokio::process::Command::new("kubectl")
        .args(["get", "nodes", "-o", "json"])
        .env("HOME", cli.home.path())
        .env("KUBECONFIG", &kubeconfig)
        .env("PATH", format!("{}:{}", cli.binary.parent().unwrap().display(), std::env::var("PATH").unwrap()))
        .output()
        .await
        .expect("kubectl");
    let nodes: Value = serde_json::from_slice(&kubectl.stdout)
        .unwrap_or_else(|_| panic!("kubectl: {}", String::from_utf8_lossy(&kubectl.stderr)));
    assert_eq!(nodes["items"].as_array().unwrap().len(), 2, "{nodes}");
    let suffix = format!("-{project_id}-{cluster_id}-admin.json");
    let cached = |home: &Path| -> Vec<PathBuf> {
        std::fs::read_dir(home.join(".config/moke/cache"))
            .map(|dir| dir.flatten().map(|e| e.path()).filter(|p| p.to_string_lossy().ends_with(&suffix)).collect())
            .unwrap_or_default()
    };
    let cache = cached(cli.home.path());
    assert_eq!(cache.len(), 1, "one cached credential for this identity");
    assert_eq!(mode(&cache[0]), 0o600, "the exec credential is cached for its owner only");

    // A Deployment YAML, rolled out and waited for.
    let manifest = cli.path("app.yaml");
    std::fs::write(
        &manifest,
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 2\n  selector:\n    matchLabels: {app: web}\n  template:\n    metadata:\n      labels: {app: web}\n    spec:\n      containers:\n      - name: web\n        image: registry.example.com/shop/web:1.0.0\n",
    )
    .unwrap();
    let manifest = manifest.to_str().unwrap();
    let rolled = cli.json(&["deploy", "-f", manifest, "--project", "shop", "--cluster", "prod", "--wait"]).await;
    assert_eq!(rolled[0]["status"], "succeeded", "{rolled}");
    // Again: an update of the same Deployment, not a second one.
    cli.ok(&["deploy", "-f", manifest, "--project", "shop", "--cluster", "prod", "--wait"]).await;
    let deployments =
        cli.json(&["deployment", "list", "--project", "shop", "--cluster", "prod", "--namespace", "default"]).await;
    assert_eq!(deployments.as_array().unwrap().len(), 1, "{deployments}");

    // A refusal names the field, on stderr, with a non-zero exit.
    let (ok, _, err) =
        cli.run(&["cluster", "create", "--project", "shop", "--name", "moon", "--region", "mars-north-1"], &[]).await;
    assert!(!ok && err.contains("spec.region"), "{err}");

    // Signing out revokes the CLI's token.
    let token = std::fs::read_to_string(&credentials).unwrap();
    let token = token.split('"').find(|s| s.starts_with("moke_pat_")).unwrap().to_string();
    cli.ok(&["auth", "logout"]).await;
    assert!(cached(cli.home.path()).is_empty(), "signing out forgets the cached cluster credentials");
    let (status, _) = t.get("/v1/me", &token).await;
    assert_eq!(status, reqwest::StatusCode::UNAUTHORIZED);
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn moke_auth_login_signs_in_with_a_code_a_signed_in_person_approves(
    options: PgPoolOptions,
    connect: PgConnectOptions,
) {
    use tokio::io::{AsyncBufReadExt, BufReader};

    let t = TestApp::start(options, connect).await;
    let (email, password) = ("ada@example.com", "correct horse battery staple");
    let signed_up = t.signed_up(email, password, "acme").await;
    let cli = Cli { binary: moke_binary(), home: tempfile::tempdir().unwrap() };

    // The new machine asks for a code and waits.
    let mut login = tokio::process::Command::new(&cli.binary)
        .args(["auth", "login", "--host", &t.base])
        .env_clear()
        .env("HOME", cli.home.path())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(login.stderr.take().unwrap()).lines();
    let shown = tokio::time::timeout(Duration::from_secs(30), lines.next_line()).await.unwrap().unwrap().unwrap();
    let code = shown.rsplit(' ').next().unwrap().to_string();
    assert!(shown.contains("/device?user_code=") && code.len() == 9, "{shown}");

    // Where the person is signed in, they approve it.
    let signed_in = [("MOKE_HOST", t.base.as_str()), ("MOKE_TOKEN", signed_up.session.access_token.as_str())];
    let (ok, out, err) = cli.run(&["auth", "device", "approve", "--user-code", &code], &signed_in).await;
    assert!(ok, "{out}\n{err}");

    let status = tokio::time::timeout(Duration::from_secs(60), login.wait()).await.unwrap().unwrap();
    let mut rest = String::new();
    while let Ok(Some(line)) = lines.next_line().await {
        rest += &line;
    }
    assert!(status.success() && rest.contains("signed in as ada@example.com"), "{rest}");
    let credentials = std::fs::read_to_string(cli.path(".config/moke/credentials.toml")).unwrap();
    assert!(credentials.contains("moke_pat_"), "{credentials}");
    let status = cli.json(&["auth", "status"]).await;
    assert_eq!(status["credential"], "valid", "{status}");
}
