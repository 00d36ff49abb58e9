//! Developer commands for the Moke workspace: `cargo xtask <command>`.
//!
//! - `dev`: run the whole system on embedded defaults (private Postgres when
//!   `DATABASE_URL` is unset), until Ctrl-C.
//! - `test`: make sure the services the tests need are up, run every test.
//! - `lint`: rustfmt, clippy and `cargo deny` (licenses, bans, sources) as CI runs them.
//! - `schemas`: regenerate `openapi/moke.json` and `graphql/schema.graphql` from the code.
//! - `sqlx-prepare`: regenerate the offline query data in `.sqlx/`.
//! - `fuzz-api`: schemathesis over the served OpenAPI document, against a fresh dev gateway.
//! - `bench api`: the API benchmark beside pgbench (see loadtests/README.md).
//! - `bench region`: commit-to-agent latency and a 10 000-update release wave on each queue transport.
//! - `bench kube`: a hosted cluster's API with 1 000 pods (kubectl, list, watch) beside Moke's REST read.
//!
//! Depends only on anyhow and libc, so it builds in seconds.

mod browser;
mod console_script;
mod deny;
mod nats;
mod oidc;
mod postgres;
mod schemathesis;
mod sdks;
mod test_python;
mod vault;

use std::env;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use anyhow::{Context, Result, bail};

fn main() -> ExitCode {
    let args: Vec<String> = env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("dev") => dev(&args[1..]),
        Some("billing") => dev_billing(&args[1..]),
        Some("test") => test(&args[1..]),
        Some("lint") => lint(),
        Some("console-script") => console_script::build().map(|dir| println!("{}", dir.display())),
        Some("schemas") => schemas(),
        Some("generate") => generate(&args[1..]),
        Some("sqlx-prepare") => sqlx_prepare(),
        Some("fuzz-api") => schemathesis::fuzz_api(&args[1..]),
        Some("bench") if args.get(1).map(String::as_str) == Some("api") => bench_api(&args[2..]),
        Some("bench") if args.get(1).map(String::as_str) == Some("region") => bench_region(),
        Some("bench") if args.get(1).map(String::as_str) == Some("auth") => {
            bench_in_process("auth-bench", "moke_auth_bench")
        }
        Some("bench") if args.get(1).map(String::as_str) == Some("console") => {
            bench_in_process("console-bench", "moke_console_bench")
        }
        Some("bench") if args.get(1).map(String::as_str) == Some("webhooks") => {
            bench_in_process("webhook-bench", "moke_webhook_bench")
        }
        Some("bench") if args.get(1).map(String::as_str) == Some("billing") => {
            bench_in_process("billing-bench", "moke_billing_bench")
        }
        Some("bench") if args.get(1).map(String::as_str) == Some("kube") => {
            bench_in_process("kube-bench", "moke_kube_bench")
        }
        _ => {
            eprintln!(
                "usage: cargo xtask <dev | billing close-month|grant-credit|set-quota|void-invoice [args] | test [cargo test args] | lint | console-script | fuzz-api [schemathesis args] | schemas | generate [--check] | sqlx-prepare | bench api | bench auth | bench region | bench webhooks | bench console | bench billing | bench kube>"
            );
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("xtask: {error:#}");
            ExitCode::FAILURE
        }
    }
}

/// The workspace root (the parent of this crate). Read at run time (`cargo
/// run` sets `CARGO_MANIFEST_DIR`), so a binary built from another checkout
/// sharing the target dir still acts on the checkout it was started from.
pub fn root() -> PathBuf {
    let manifest_dir = env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")));
    manifest_dir.parent().map(Path::to_path_buf).expect("xtask lives in the workspace")
}

/// Where cargo puts what it builds (`CARGO_TARGET_DIR`, else `target/`).
pub fn target_dir() -> PathBuf {
    env::var("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|_| root().join("target"))
}

fn cargo() -> Command {
    let mut command = Command::new(env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    command.current_dir(root());
    command
}

pub fn run(command: &mut Command) -> Result<()> {
    let status = command.status().with_context(|| format!("could not start {command:?}"))?;
    if !status.success() {
        bail!("{command:?} failed with {status}");
    }
    Ok(())
}

fn dev(args: &[String]) -> Result<()> {
    let db = postgres::ensure(postgres::Purpose::Dev)?;
    let vault = vault::ensure_persistent()?;
    let script = console_script::build()?;
    let mut command = cargo();
    command
        .args(["run", "--package", "moke-api", "--bin", "moke-server", "--", "dev"])
        .args(args)
        .env("DATABASE_URL", db.url("moke"))
        .env("MOKE_HTTP__CONSOLE_SCRIPT_DIR", &script)
        .env("SQLX_OFFLINE", "true");
    vault.apply(&mut command);
    if vault.fresh {
        // What the database holds (cluster CAs, secrets) was sealed by the
        // Vault that is gone: keep neither.
        println!("xtask: a new dev OpenBao, so a new dev database too (the old one's secrets were in the old Vault)");
        db.recreate_database("moke")?;
    } else {
        db.create_database("moke")?;
    }
    vault.share_dev_session()?;
    let mut child = command.spawn().context("could not start cargo")?;
    // Ctrl-C reaches the server too (same process group) and it shuts down
    // gracefully; xtask itself ignores it so it can stop Postgres afterwards.
    // SAFETY: setting a signal disposition to SIG_IGN has no preconditions.
    unsafe { libc::signal(libc::SIGINT, libc::SIG_IGN) };
    let result = child.wait();
    vault.forget_dev_session();
    drop(vault);
    drop(db);
    match result {
        Ok(status) if status.success() || status.code() == Some(130) || status.code().is_none() => Ok(()),
        Ok(status) => bail!("moke-server exited with {status}"),
        Err(error) => Err(error).context("could not wait for cargo"),
    }
}

/// `moke-server billing …` (close-month, grant-credit, set-quota,
/// void-invoice) on the database and Vault of `cargo xtask dev`, e.g. to
/// close a month on demand: `cargo xtask billing close-month --at 2027-01-03T00:00:00Z --early`.
fn dev_billing(args: &[String]) -> Result<()> {
    let db = postgres::ensure(postgres::Purpose::Dev)?;
    // The running `cargo xtask dev`'s Vault, else the dev Vault started for this command.
    let vault = match vault::Vault::running_dev_session() {
        Some(running) => running,
        None => vault::ensure_persistent()?,
    };
    if vault.fresh {
        bail!("there is no dev setup yet: run `cargo xtask dev` first");
    }
    db.create_database("moke")?;
    let mut command = cargo();
    command
        .args(["run", "--quiet", "--package", "moke-api", "--bin", "moke-server", "--", "billing"])
        .args(args)
        .env("DATABASE_URL", db.url("moke"))
        .env("SQLX_OFFLINE", "true");
    vault.apply(&mut command);
    run(&mut command)
}

fn test(args: &[String]) -> Result<()> {
    let db = postgres::ensure(postgres::Purpose::Test)?;
    let nats = nats::ensure()?;
    let vault = vault::ensure()?;
    let sdk_tools = sdks::ensure()?;
    let browser = browser::ensure()?;
    // The billing tests read invoice PDFs back with poppler's pdftotext.
    browser::debian_packages(&[("/usr/bin/pdftotext", "poppler-utils")], "the billing tests")?;
    // The console's browser tests run its pages with their script.
    let script = console_script::build()?;
    let test_python = test_python::ensure()?;
    let mut command = cargo();
    command
        .args(["test", "--workspace", "--all-targets"])
        .args(args)
        // Each #[sqlx::test] creates and migrates its own database on this server.
        .env("DATABASE_URL", db.url("postgres"))
        // The NATS tests use their own subject prefixes on this server.
        .env("NATS_URL", nats.url())
        // The tests' gateways log in to this Vault, each under its own KV path.
        .env("OIDC_PROVIDER_DIR", oidc::ensure()?)
        // The mail tests deliver to aiosmtpd on loopback.
        .env("GRPCURL", test_python::grpcurl(&test_python)?)
        .env("TEST_PYTHON", &test_python)
        .env("MOKE_HTTP__CONSOLE_SCRIPT_DIR", &script)
        // The TypeScript and Python SDK scenarios run with these.
        .env("SDK_TEST_NODE_MODULES", &sdk_tools.node_modules)
        .env("SDK_TEST_PYTHON", &sdk_tools.python)
        .env("SQLX_OFFLINE", "true")
        // A failing test's report then ends with its panic message, not a
        // backtrace: the end is what a shortened CI log keeps.
        .env("RUST_BACKTRACE", "0");
    vault.apply(&mut command);
    // The console's tests drive Chromium through ChromeDriver.
    browser.apply(&mut command);
    run(&mut command)
}

fn lint() -> Result<()> {
    run(cargo().args(["fmt", "--all", "--", "--check"]))?;
    run(cargo().args(["clippy", "--workspace", "--all-targets", "--", "-D", "warnings"]).env("SQLX_OFFLINE", "true"))?;
    // The console's script as browsers run it (wasm32).
    run(cargo().args([
        "clippy",
        "--package",
        "moke-console-enhance",
        "--target",
        "wasm32-unknown-unknown",
        "--",
        "-D",
        "warnings",
    ]))?;
    console_is_an_api_client()?;
    // Licenses, banned crates and sources (advisories need GitHub; see SECURITY.md).
    let cargo_deny = deny::ensure()?;
    run(Command::new(cargo_deny).current_dir(root()).args([
        "--manifest-path",
        "Cargo.toml",
        "check",
        "licenses",
        "bans",
        "sources",
    ]))
}

/// The console is a client of the public API: nothing of the gateway or
/// its database may be in its dependency tree.
fn console_is_an_api_client() -> Result<()> {
    let output = cargo()
        .args(["tree", "--package", "moke-console", "--edges", "normal", "--prefix", "none", "--format", "{p}"])
        .output()
        .context("could not run cargo tree")?;
    if !output.status.success() {
        bail!("cargo tree -p moke-console failed: {}", String::from_utf8_lossy(&output.stderr));
    }
    let tree = String::from_utf8_lossy(&output.stdout);
    let forbidden: Vec<&str> = tree
        .lines()
        .filter(|line| {
            ["moke-api ", "moke-iam ", "sqlx", "tonic ", "async-graphql "].iter().any(|c| line.starts_with(c))
        })
        .collect();
    if !forbidden.is_empty() {
        bail!("moke-console must reach the API only through moke-sdk, but depends on: {forbidden:?}");
    }
    Ok(())
}

/// Writes the API descriptions the code generates: OpenAPI and GraphQL SDL.
fn schemas() -> Result<()> {
    for (subcommand, file) in [
        ("openapi", "openapi/moke.json"),
        ("graphql-schema", "graphql/schema.graphql"),
        ("permissions", "iam/PERMISSIONS.md"),
    ] {
        let output = cargo()
            .args(["run", "--quiet", "--package", "moke-api", "--bin", "moke-server", "--", subcommand])
            .env("SQLX_OFFLINE", "true")
            .output()
            .with_context(|| format!("could not run moke-server {subcommand}"))?;
        if !output.status.success() {
            bail!("moke-server {subcommand} failed: {}", String::from_utf8_lossy(&output.stderr));
        }
        let path = root().join(file);
        std::fs::create_dir_all(path.parent().expect("a folder"))?;
        std::fs::write(&path, &output.stdout)?;
        println!("wrote {}", path.display());
    }
    Ok(())
}

/// Regenerates the SDKs from `openapi/moke.json`; with `--check`, writes
/// nothing and fails when a checked-in SDK differs from what the document
/// generates (CI runs that).
fn generate(args: &[String]) -> Result<()> {
    let check = args.iter().any(|arg| arg == "--check");
    let mut codegen = cargo();
    codegen.args(["run", "--quiet", "--package", "moke-codegen", "--"]);
    if check {
        codegen.arg("--check");
    }
    // Both, whatever the first says: a --check names every stale SDK.
    let rust = run(&mut codegen);
    let others = sdks::generate(check);
    rust.and(others)
}

/// Rebuilds the API crate against a freshly migrated database with
/// `SQLX_OFFLINE_DIR` set, which makes sqlx's macros write `.sqlx/`.
fn sqlx_prepare() -> Result<()> {
    let db = postgres::ensure(postgres::Purpose::Dev)?;
    let name = "moke_sqlx_prepare";
    db.recreate_database(name)?;
    db.apply_migrations(name, &root().join("api/migrations"))?;
    let offline_dir = root().join(".sqlx");
    if offline_dir.exists() {
        std::fs::remove_dir_all(&offline_dir)?;
    }
    std::fs::create_dir_all(&offline_dir)?;
    run(cargo().args(["clean", "--package", "moke-api"]))?;
    run(cargo()
        .args(["check", "--package", "moke-api", "--all-targets"])
        .env("DATABASE_URL", db.url(name))
        .env("SQLX_OFFLINE", "false")
        .env("SQLX_OFFLINE_DIR", &offline_dir))?;
    let count = std::fs::read_dir(&offline_dir)?.count();
    println!("wrote {count} query files to {}", offline_dir.display());
    Ok(())
}

/// The API benchmark (`BENCH_NO_BUILD=1`: of the release binaries already
/// built). With `BENCH_BASELINE_BIN` (a `moke-server` built from
/// another commit), that binary is benchmarked first in the same run, each
/// on a fresh database, so the two sets of ratios compare like for like.
fn bench_api(args: &[String]) -> Result<()> {
    let db = postgres::ensure(postgres::Purpose::Bench)?;
    let pgbench = postgres::tool("pgbench")?;
    let vault = vault::ensure()?;
    // BENCH_NO_BUILD=1 measures the release binaries already built (while
    // the tree is mid-change, or to profile them again).
    if env::var("BENCH_NO_BUILD").is_err() {
        run(cargo()
            .args(["build", "--release", "--package", "moke-api", "--package", "moke-loadtests"])
            .env("SQLX_OFFLINE", "true"))?;
    }
    let target = target_dir();
    let mut servers = Vec::new();
    if let Ok(baseline) = env::var("BENCH_BASELINE_BIN") {
        servers.push(("baseline", PathBuf::from(baseline)));
    }
    servers.push(("this tree", target.join("release/moke-server")));
    for (label, server) in servers {
        println!("xtask: bench api with {label}: {}", server.display());
        db.recreate_database("moke_bench")?;
        let mut command = Command::new(target.join("release/api-bench"));
        command
            .args(args)
            .env("DATABASE_URL", db.url("moke_bench"))
            .env("BENCH_SERVER_BIN", server)
            .env("PGBENCH", &pgbench)
            .env("PGBENCH_URL", db.url("moke_bench"));
        vault.apply(&mut command);
        run(&mut command)?;
    }
    Ok(())
}

/// A benchmark that hosts the gateway in its own process, on a fresh database.
fn bench_in_process(bin: &str, database: &str) -> Result<()> {
    bench_in_process_with(bin, database, &[], &[])
}

fn bench_in_process_with(bin: &str, database: &str, args: &[&str], envs: &[(&str, String)]) -> Result<()> {
    let db = postgres::ensure(postgres::Purpose::Bench)?;
    db.recreate_database(database)?;
    let vault = vault::ensure()?;
    run(cargo().args(["build", "--release", "--package", "moke-loadtests", "--bin", bin]).env("SQLX_OFFLINE", "true"))?;
    let target = target_dir();
    let mut command = Command::new(target.join("release").join(bin));
    command.args(args).env("DATABASE_URL", db.url(database)).env("MOKE_TELEMETRY__LOG_FILTER", "warn");
    command.envs(envs.iter().map(|(k, v)| (k, v)));
    vault.apply(&mut command);
    run(&mut command)
}

/// The region benchmark on each transport, each on a fresh database.
fn bench_region() -> Result<()> {
    let nats = nats::ensure()?;
    for backend in ["postgres", "nats"] {
        bench_in_process_with(
            "region-bench",
            "moke_region_bench",
            &[backend],
            &[("NATS_URL", nats.url().to_string())],
        )?;
    }
    Ok(())
}
