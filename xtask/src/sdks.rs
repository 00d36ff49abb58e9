//! The TypeScript and Python SDKs: `cargo xtask generate [--check]` runs
//! their pinned generators over `openapi/moke.json`, and `cargo xtask test`
//! hands their toolchains to the scenario tests (`api/tests/http/sdk_scripts.rs`).
//!
//! - TypeScript: `@hey-api/openapi-ts` (its fetch client), `typescript` and
//!   `@types/node`, pinned by `sdk/typescript/package-lock.json`, installed
//!   with `npm ci` into `~/.cache/moke/node-sdk-<hash of the lock>`; writes
//!   `sdk/typescript/src/generated/` (configured by `openapi-ts.config.mjs`).
//! - Python: `openapi-python-client` (formatting with ruff) and the SDK's own
//!   dependencies, pinned by `sdk/python/dev-requirements.txt`, installed into
//!   the virtualenv `~/.cache/moke/python-sdk-<hash of that file>`; writes
//!   `sdk/python/moke_sdk/` except the files written by hand ([`PYTHON_KEPT`]).
//!
//! Both read the document without the browser-only operations
//! ([`BROWSER_ONLY`]). Nothing is installed inside the clone. With `--check`
//! both generate into a temporary folder, which is compared with the
//! checked-in copies; every file that differs is named.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

/// Operations only a browser (the SSO redirect pair) or a CI system (the
/// deploy-hook endpoint, signed per request) calls: no SDK offers them.
const BROWSER_ONLY: [&str; 3] = ["sso_login_start", "sso_login_finish", "hook_delivery_create"];

/// Files of `sdk/python/moke_sdk/` written by hand: generation keeps them.
const PYTHON_KEPT: [&str; 2] = ["extras.py", "py.typed"];

/// The toolchains the scenario tests run the SDKs with.
pub struct Toolchains {
    /// The `node_modules` folder with `typescript` and `@types/node`.
    pub node_modules: PathBuf,
    /// The interpreter of a virtualenv with the Python SDK's dependencies.
    pub python: PathBuf,
}

/// Installs (once per pinned set) and returns both toolchains.
pub fn ensure() -> Result<Toolchains> {
    Ok(Toolchains { node_modules: ensure_node()?, python: ensure_python()? })
}

/// FNV-1a: a stable hash of a lock file, naming the cache folder it installs.
fn fnv1a(bytes: &[u8]) -> String {
    let hash = bytes.iter().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3));
    format!("{hash:016x}")
}

/// `npm ci` of `sdk/typescript`'s lock into its cache folder; its `node_modules`.
fn ensure_node() -> Result<PathBuf> {
    let sdk = crate::root().join("sdk/typescript");
    let lock =
        std::fs::read(sdk.join("package-lock.json")).context("could not read sdk/typescript/package-lock.json")?;
    let dir = crate::vault::cache_dir().join(format!("node-sdk-{}", fnv1a(&lock)));
    let ready = dir.join(".moke-ready");
    if ready.exists() {
        return Ok(dir.join("node_modules"));
    }
    println!("xtask: installing the TypeScript SDK's tools (sdk/typescript/package-lock.json) into {}", dir.display());
    if dir.exists() {
        std::fs::remove_dir_all(&dir)?;
    }
    std::fs::create_dir_all(&dir)?;
    std::fs::copy(sdk.join("package.json"), dir.join("package.json"))?;
    std::fs::write(dir.join("package-lock.json"), &lock)?;
    crate::run(
        Command::new("npm")
            .args(["ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel", "error"])
            .current_dir(&dir),
    )
    .context("could not npm ci the TypeScript SDK's tools (Node.js and npm are needed)")?;
    std::fs::write(&ready, "")?;
    Ok(dir.join("node_modules"))
}

/// The virtualenv of `sdk/python/dev-requirements.txt`; its interpreter.
fn ensure_python() -> Result<PathBuf> {
    let requirements = crate::root().join("sdk/python/dev-requirements.txt");
    let pins = std::fs::read(&requirements).context("could not read sdk/python/dev-requirements.txt")?;
    let venv = crate::vault::cache_dir().join(format!("python-sdk-{}", fnv1a(&pins)));
    let python = venv.join("bin/python");
    let ready = venv.join(".moke-ready");
    if ready.exists() {
        return Ok(python);
    }
    println!("xtask: installing the Python SDK's tools (sdk/python/dev-requirements.txt) into {}", venv.display());
    if venv.exists() {
        std::fs::remove_dir_all(&venv)?;
    }
    std::fs::create_dir_all(venv.parent().expect("a parent"))?;
    crate::run(Command::new("python3").args(["-m", "venv"]).arg(&venv))
        .context("could not create a Python virtualenv for the Python SDK (python3 -m venv)")?;
    crate::run(Command::new(venv.join("bin/pip")).args(["install", "--quiet", "--no-deps", "-r"]).arg(&requirements))
        .context("could not pip install sdk/python/dev-requirements.txt")?;
    std::fs::write(&ready, "")?;
    Ok(python)
}

/// Removes a folder when dropped.
struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Regenerates both SDKs; with `check`, writes nothing in the clone and
/// fails naming every checked-in file that differs from what is generated.
pub fn generate(check: bool) -> Result<()> {
    let started = std::time::Instant::now();
    let tools = ensure()?;
    let root = crate::root();
    let temp = TempDir(std::env::temp_dir().join(format!("moke-sdks-{}", std::process::id())));
    if temp.0.exists() {
        std::fs::remove_dir_all(&temp.0)?;
    }
    std::fs::create_dir_all(&temp.0)?;
    let document = temp.0.join("moke.json");
    filter_document(&tools.python, &root.join("openapi/moke.json"), &document)?;

    // TypeScript: straight into src/generated (the generator empties it
    // first), or into the temporary folder.
    let ts_checked_in = root.join("sdk/typescript/src/generated");
    let ts_output = if check { temp.0.join("typescript") } else { ts_checked_in.clone() };
    crate::run(
        Command::new("node")
            .arg(tools.node_modules.join("@hey-api/openapi-ts/bin/run.js"))
            .args(["--file", "openapi-ts.config.mjs", "--silent"])
            .current_dir(root.join("sdk/typescript"))
            .env("MOKE_SDK_DOCUMENT", &document)
            .env("MOKE_SDK_TS_OUTPUT", &ts_output),
    )
    .context("@hey-api/openapi-ts failed")?;

    // Python: always into the temporary folder (the generator replaces its
    // whole output folder), then copied over the generated files.
    let py_output = temp.0.join("python");
    let venv_bin = tools.python.parent().expect("bin/python").to_path_buf();
    let path = std::env::var_os("PATH").unwrap_or_default();
    let path = std::env::join_paths(std::iter::once(venv_bin).chain(std::env::split_paths(&path)))?;
    crate::run(
        Command::new(&tools.python)
            .args(["-m", "openapi_python_client", "generate", "--meta", "none", "--fail-on-warning", "--path"])
            .arg(&document)
            .arg("--config")
            .arg(root.join("sdk/python/openapi-python-client.yaml"))
            .arg("--output-path")
            .arg(&py_output)
            .current_dir(&temp.0)
            // ruff (the post hooks) is found on PATH.
            .env("PATH", path),
    )
    .context("openapi-python-client failed")?;
    let py_checked_in = root.join("sdk/python/moke_sdk");

    if check {
        let mut stale = differences(&ts_output, &ts_checked_in, &[])?;
        stale.extend(differences(&py_output, &py_checked_in, &PYTHON_KEPT)?);
        if !stale.is_empty() {
            let names: Vec<String> =
                stale.iter().map(|p| format!("  {}", p.strip_prefix(&root).unwrap_or(p).display())).collect();
            bail!(
                "the checked-in TypeScript/Python SDKs differ from what openapi/moke.json generates \
                 (run `cargo xtask generate`):\n{}",
                names.join("\n")
            );
        }
        println!("xtask: the TypeScript and Python SDKs are current ({:.1}s)", started.elapsed().as_secs_f64());
    } else {
        let changed = sync(&py_output, &py_checked_in, &PYTHON_KEPT)?;
        println!(
            "xtask: wrote sdk/typescript/src/generated and sdk/python/moke_sdk ({changed} Python files changed, {:.1}s)",
            started.elapsed().as_secs_f64()
        );
    }
    Ok(())
}

/// Writes `output`: the document at `input` without [`BROWSER_ONLY`] (and
/// without paths left with no operation).
fn filter_document(python: &Path, input: &Path, output: &Path) -> Result<()> {
    const SCRIPT: &str = r##"
import json, sys
source, target, *excluded = sys.argv[1:]
document = json.load(open(source, encoding="utf-8"))
found = set()
for path in list(document["paths"]):
    item = document["paths"][path]
    for method in list(item):
        if isinstance(item[method], dict) and item[method].get("operationId") in excluded:
            found.add(item.pop(method)["operationId"])
    if not any(m in item for m in ("get", "put", "post", "delete", "options", "head", "patch", "trace")):
        del document["paths"][path]
# A dry run answers another type than the operation's own, which the
# generated methods cannot return: the SDKs leave `dry_run` out (the Rust
# SDK offers it by hand, as `Client::dry_run`).
plan = {"$ref": "#/components/schemas/DryRunView"}
for item in document["paths"].values():
    for operation in item.values():
        if not isinstance(operation, dict) or "responses" not in operation:
            continue
        params = [p for p in operation.get("parameters", []) if p.get("name") != "dry_run"]
        if params:
            operation["parameters"] = params
        else:
            operation.pop("parameters", None)
        ok = operation["responses"].get("200")
        if not ok:
            continue
        for content in ok.get("content", {}).values():
            schema = content.get("schema", {})
            if schema == plan:
                del operation["responses"]["200"]
                break
            if plan in schema.get("anyOf", []):
                content["schema"] = next(s for s in schema["anyOf"] if s != plan)
                ok["description"] = ok["description"].removesuffix(" (or, for a dry run, what would change)")
missing = set(excluded) - found
if missing:
    sys.exit(f"operations not in the document: {sorted(missing)}")
json.dump(document, open(target, "w", encoding="utf-8"), indent=2, ensure_ascii=False)
"##;
    crate::run(Command::new(python).args(["-c", SCRIPT]).arg(input).arg(output).args(BROWSER_ONLY))
        .context("could not leave the browser-only operations out of the document")
}

/// Every file under `dir` (relative path → bytes), without `__pycache__`.
fn files(dir: &Path) -> Result<BTreeMap<PathBuf, Vec<u8>>> {
    fn walk(base: &Path, dir: &Path, into: &mut BTreeMap<PathBuf, Vec<u8>>) -> Result<()> {
        let Ok(entries) = std::fs::read_dir(dir) else { return Ok(()) };
        for entry in entries {
            let entry = entry?;
            let path = entry.path();
            if entry.file_name() == "__pycache__" {
                continue;
            }
            if entry.file_type()?.is_dir() {
                walk(base, &path, into)?;
            } else {
                let relative = path.strip_prefix(base).expect("under base").to_path_buf();
                into.insert(relative, std::fs::read(&path)?);
            }
        }
        Ok(())
    }
    let mut found = BTreeMap::new();
    walk(dir, dir, &mut found)?;
    Ok(found)
}

/// The files of `checked_in` (as paths under it) that differ from `generated`,
/// are missing, or are left over; files named in `kept` are not compared.
fn differences(generated: &Path, checked_in: &Path, kept: &[&str]) -> Result<Vec<PathBuf>> {
    let new = files(generated)?;
    let mut old = files(checked_in)?;
    old.retain(|path, _| !kept.iter().any(|k| path == Path::new(k)));
    let mut stale: Vec<PathBuf> = Vec::new();
    for (path, bytes) in &new {
        if old.get(path) != Some(bytes) {
            stale.push(checked_in.join(path));
        }
    }
    stale.extend(old.keys().filter(|path| !new.contains_key(*path)).map(|path| checked_in.join(path)));
    stale.sort();
    Ok(stale)
}

/// Makes `checked_in` hold what `generated` holds, keeping the files named
/// in `kept`; writes only what changed. Returns how many files changed.
fn sync(generated: &Path, checked_in: &Path, kept: &[&str]) -> Result<usize> {
    let stale = differences(generated, checked_in, kept)?;
    let new = files(generated)?;
    for path in &stale {
        let relative = path.strip_prefix(checked_in).expect("under checked_in");
        match new.get(relative) {
            Some(bytes) => {
                std::fs::create_dir_all(path.parent().expect("a parent"))?;
                std::fs::write(path, bytes)?;
            }
            None => {
                std::fs::remove_file(path)?;
                // Drop folders the removal left empty (never the root).
                let mut parent = path.parent();
                while let Some(dir) = parent.filter(|d| *d != checked_in) {
                    let _ = std::fs::remove_dir(dir.join("__pycache__"));
                    if std::fs::remove_dir(dir).is_err() {
                        break;
                    }
                    parent = dir.parent();
                }
            }
        }
    }
    Ok(stale.len())
}
