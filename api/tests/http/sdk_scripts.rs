//! The TypeScript (`sdk/typescript`) and Python (`sdk/python`) SDKs against a
//! live gateway and region agent over real HTTP: each runs its scenario
//! script (`sdk/*/examples/scenario.*`, the customer scenario of `sdk.rs`:
//! sign in, project, cluster, node pool, kubeconfig, deployment from a
//! manifest, 250 projects paged, a validation error, an idempotent retry) as
//! a child process, using nothing but its SDK.
//!
//! The toolchains come from `cargo xtask test` (`SDK_TEST_NODE_MODULES`:
//! typescript and @types/node; `SDK_TEST_PYTHON`: a virtualenv with the
//! Python SDK's dependencies and mypy), installed from the SDKs' lock files (not
//! `MOKE_*`: the gateway's configuration reads those).

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use moke_region::{AgentConfig, Transport};
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use tokio::process::Command;

use crate::common::{BackgroundAgent, TestApp, unique, zones};

const EMAIL: &str = "ada@example.com";
const PASSWORD: &str = "correct horse battery staple";
/// The whole scenario (three operations waited for, 250 creates) takes well under a minute.
const SCRIPT_TIMEOUT: Duration = Duration::from_secs(300);

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("api/ is in the workspace").to_path_buf()
}

/// The toolchain `cargo xtask test` names in `var`; fails (never skips) without it.
fn toolchain(var: &str) -> PathBuf {
    match std::env::var_os(var) {
        Some(path) if !path.is_empty() => PathBuf::from(path),
        _ => panic!(
            "{var} is not set: run the SDK scenarios through `cargo xtask test`, \
             which installs the SDKs' pinned toolchains under ~/.cache/moke and sets it"
        ),
    }
}

/// A gateway with a region agent and a signed-up person; the scenario's environment.
async fn live(options: PgPoolOptions, connect: PgConnectOptions) -> (TestApp, BackgroundAgent) {
    let t = TestApp::start(options, connect).await;
    let region = BackgroundAgent::start(
        AgentConfig::new("eu-central-1", zones("eu-central-1")),
        Transport::Postgres(t.pool.clone()),
    );
    t.sign_up(EMAIL, PASSWORD, "analytical").await;
    (t, region)
}

/// Runs `command` to its end (at most [`SCRIPT_TIMEOUT`]) and fails the test,
/// showing everything it printed, unless it exits 0.
async fn run(what: &str, mut command: Command) {
    command.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).kill_on_drop(true);
    let child = command.spawn().unwrap_or_else(|e| panic!("could not start {what} ({command:?}): {e}"));
    let output = match tokio::time::timeout(SCRIPT_TIMEOUT, child.wait_with_output()).await {
        Ok(output) => output.unwrap_or_else(|e| panic!("{what}: {e}")),
        Err(_) => panic!("{what} did not finish within {SCRIPT_TIMEOUT:?}"),
    };
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{what} failed ({}):\n--- stdout\n{stdout}\n--- stderr\n{stderr}", output.status);
    print!("{stdout}");
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn the_typescript_sdk_runs_the_customer_scenario(options: PgPoolOptions, connect: PgConnectOptions) {
    let node_modules = toolchain("SDK_TEST_NODE_MODULES");
    let sdk = repository().join("sdk/typescript");
    // The scenario and the SDK, compiled together with tsc --strict.
    let out = std::env::temp_dir().join(format!("moke-sdk-ts-{}", unique()));
    let mut tsc = Command::new("node");
    tsc.arg(node_modules.join("typescript/bin/tsc"))
        .arg("--project")
        .arg(sdk.join("examples/tsconfig.json"))
        .arg("--strict")
        .arg("--outDir")
        .arg(&out)
        .arg("--typeRoots")
        .arg(node_modules.join("@types"));
    run("tsc (sdk/typescript with examples/scenario.ts)", tsc).await;
    std::fs::write(out.join("package.json"), r#"{ "type": "module" }"#).unwrap();

    let (t, _region) = live(options, connect).await;
    let mut node = Command::new("node");
    node.arg(out.join("examples/scenario.js"))
        .env("MOKE_HOST", &t.base)
        .env("MOKE_EMAIL", EMAIL)
        .env("MOKE_PASSWORD", PASSWORD);
    run("the TypeScript scenario (sdk/typescript/examples/scenario.ts)", node).await;
    let _ = std::fs::remove_dir_all(&out);
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn the_python_sdk_runs_the_customer_scenario(options: PgPoolOptions, connect: PgConnectOptions) {
    let python = toolchain("SDK_TEST_PYTHON");
    let sdk = repository().join("sdk/python");
    // The scenario and the hand-written module, type-checked strictly
    // against the generated models (as tsc --strict does for TypeScript).
    let cache = std::env::temp_dir().join(format!("moke-sdk-mypy-{}", unique()));
    let mut mypy = Command::new(&python);
    mypy.args(["-m", "mypy", "--strict", "--cache-dir"])
        .arg(&cache)
        .args(["moke_sdk/extras.py", "examples/scenario.py"])
        .current_dir(&sdk)
        .env("MYPYPATH", &sdk);
    run("mypy --strict (sdk/python with examples/scenario.py)", mypy).await;
    let _ = std::fs::remove_dir_all(&cache);

    let (t, _region) = live(options, connect).await;
    let mut script = Command::new(python);
    script
        .arg(sdk.join("examples/scenario.py"))
        // The checked-in package itself, as `pip install sdk/python` would install it.
        .env("PYTHONPATH", &sdk)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env("PYTHONUNBUFFERED", "1")
        .env("MOKE_HOST", &t.base)
        .env("MOKE_EMAIL", EMAIL)
        .env("MOKE_PASSWORD", PASSWORD);
    run("the Python scenario (sdk/python/examples/scenario.py)", script).await;
}
