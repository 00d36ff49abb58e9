//! `moke kubeconfig save|token`: kubectl access to hosted clusters.
//!
//! `save` merges a cluster's kubeconfig into `~/.kube/config` (or
//! `$KUBECONFIG`, or `--file`) with one context per cluster. By default the
//! kubeconfig authenticates through `moke kubeconfig token`, kubectl's exec
//! credential plugin, which prints a short-lived client certificate as an
//! ExecCredential and caches it (mode 0600) until shortly before it expires.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

use crate::config::{config_dir, create_private_dir, resolve, write_private};
use crate::output::describe_error;

/// A cached credential is used until this long before it expires.
const REFRESH_BEFORE_SECONDS: i64 = 60;

/// Merge a cluster's kubeconfig into your kubectl configuration.
#[derive(Debug, clap::Args)]
pub struct Save {
    /// Project id or name.
    #[arg(long)]
    project: String,
    /// Cluster id or name.
    #[arg(long)]
    cluster: String,
    /// `admin`, `edit` or `view` (default: the most your role allows).
    #[arg(long)]
    access: Option<String>,
    /// `exec` (short-lived certificates through `moke kubeconfig token`,
    /// the default) or `certificate` (one embedded certificate).
    #[arg(long, default_value = "exec")]
    format: String,
    /// Write here instead of `$KUBECONFIG` or `~/.kube/config`.
    #[arg(long)]
    file: Option<PathBuf>,
    /// Leave the current context as it is.
    #[arg(long)]
    keep_context: bool,
}

impl Save {
    pub async fn run(self, profile: Option<&str>) -> Result<ExitCode> {
        let profile = resolve(profile)?;
        let client = moke_sdk::Client::with_token(&profile.host, &profile.token)?;
        let mut request = client
            .cluster_kubeconfig_view()
            .project(self.project.as_str())
            .cluster(self.cluster.as_str())
            .format(self.format.as_str());
        if let Some(access) = &self.access {
            request = request.access(access.as_str());
        }
        let view = request.send().await.map_err(|e| anyhow::anyhow!(describe_error(&e)))?.into_inner();
        let new: Value =
            serde_norway::from_str(&view.kubeconfig).context("the API sent a kubeconfig that is not YAML")?;
        let path = match self.file {
            Some(path) => path,
            None => default_kubeconfig()?,
        };
        let existing: Value = match std::fs::read_to_string(&path) {
            Ok(text) if !text.trim().is_empty() => {
                serde_norway::from_str(&text).with_context(|| format!("{} is not a kubeconfig", path.display()))?
            }
            Ok(_) => json!({}),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => json!({}),
            Err(error) => return Err(error).with_context(|| format!("could not read {}", path.display())),
        };
        let merged = merge(existing, &new, !self.keep_context)?;
        if let Some(dir) = path.parent() {
            create_private_dir(dir)?;
        }
        write_private(&path, serde_norway::to_string(&merged)?.as_bytes())?;
        let context = new["current-context"].as_str().unwrap_or_default();
        eprintln!("saved context `{context}` to {}", path.display());
        Ok(ExitCode::SUCCESS)
    }
}

/// `$KUBECONFIG` (its first file), else `~/.kube/config`.
fn default_kubeconfig() -> Result<PathBuf> {
    if let Some(first) = std::env::var_os("KUBECONFIG").and_then(|v| std::env::split_paths(&v).next()) {
        return Ok(first);
    }
    let home = std::env::var_os("HOME").context("HOME is not set; pass --file")?;
    Ok(PathBuf::from(home).join(".kube/config"))
}

/// `existing` with `new`'s clusters, users and contexts added, replacing
/// entries of the same name; other entries stay as they were.
pub fn merge(mut existing: Value, new: &Value, switch_context: bool) -> Result<Value> {
    if !existing.is_object() {
        bail!("the kubeconfig is not a mapping");
    }
    existing["apiVersion"] = json!("v1");
    existing["kind"] = json!("Config");
    for section in ["clusters", "users", "contexts"] {
        let mut entries: Vec<Value> = existing[section].as_array().cloned().unwrap_or_default();
        for entry in new[section].as_array().into_iter().flatten() {
            entries.retain(|e| e["name"] != entry["name"]);
            entries.push(entry.clone());
        }
        existing[section] = Value::Array(entries);
    }
    if switch_context || existing["current-context"].as_str().unwrap_or_default().is_empty() {
        existing["current-context"] = new["current-context"].clone();
    }
    Ok(existing)
}

/// kubectl's credential plugin: print a short-lived client certificate as
/// an ExecCredential (what exec-format kubeconfigs call).
#[derive(Debug, clap::Args)]
pub struct Token {
    /// Project id.
    #[arg(long)]
    project: String,
    /// Cluster id.
    #[arg(long)]
    cluster: String,
    /// `admin`, `edit` or `view`.
    #[arg(long)]
    access: Option<String>,
}

impl Token {
    pub async fn run(self, profile: Option<&str>) -> Result<ExitCode> {
        let profile = resolve(profile)?;
        let name = format!(
            "exec-{}-{}-{}-{}.json",
            identity(&profile),
            self.project,
            self.cluster,
            self.access.as_deref().unwrap_or("default")
        );
        // The names come from the command line: nothing but a plain file name.
        if !name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')) || name.contains("..") {
            bail!("--project, --cluster and --access take ids and names (letters, digits, `-`, `_`)");
        }
        let cache = config_dir()?.join("cache").join(name);
        if let Some(cached) = std::fs::read_to_string(&cache).ok().filter(|text| still_fresh(text)) {
            println!("{cached}");
            return Ok(ExitCode::SUCCESS);
        }
        let client = moke_sdk::Client::with_token(&profile.host, &profile.token)?;
        let mut request =
            client.cluster_credentials_create().project(self.project.as_str()).cluster(self.cluster.as_str());
        if let Some(access) = &self.access {
            request = request.access(access.as_str());
        }
        let credential = request.send().await.map_err(|e| anyhow::anyhow!(describe_error(&e)))?.into_inner();
        let text = serde_json::to_string(&credential)?;
        if let Some(dir) = cache.parent() {
            create_private_dir(dir)?;
        }
        // The cache is an optimization: a failure to write it is not the caller's problem.
        let _ = write_private(&cache, text.as_bytes());
        println!("{text}");
        Ok(ExitCode::SUCCESS)
    }
}

/// Who a cached credential belongs to: the host and credential that asked
/// for it (hashed), so another identity never gets it.
fn identity(profile: &crate::config::Profile) -> String {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(format!("{}\n{}", profile.host, profile.token));
    digest[..8].iter().map(|b| format!("{b:02x}")).collect()
}

/// Deletes the cached cluster credentials of `profile` (at sign-out).
pub fn forget_cached_credentials(profile: &crate::config::Profile) {
    let prefix = format!("exec-{}-", identity(profile));
    let Ok(dir) = config_dir().map(|d| d.join("cache")) else { return };
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        if entry.file_name().to_string_lossy().starts_with(&prefix) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// Whether a cached ExecCredential has more than a minute left.
fn still_fresh(text: &str) -> bool {
    let Ok(value) = serde_json::from_str::<Value>(text) else { return false };
    let Some(expiry) = value["status"]["expirationTimestamp"].as_str() else { return false };
    chrono::DateTime::parse_from_rfc3339(expiry)
        .is_ok_and(|at| (at.with_timezone(&chrono::Utc) - chrono::Utc::now()).num_seconds() > REFRESH_BEFORE_SECONDS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merging_replaces_same_names_and_keeps_the_rest() {
        let existing = json!({
            "clusters": [{ "name": "other", "cluster": {} }, { "name": "moke-prod", "cluster": { "server": "old" } }],
            "users": [{ "name": "other", "user": {} }],
            "contexts": [{ "name": "other", "context": {} }],
            "current-context": "other",
        });
        let new = json!({
            "clusters": [{ "name": "moke-prod", "cluster": { "server": "new" } }],
            "users": [{ "name": "moke-prod", "user": {} }],
            "contexts": [{ "name": "moke-prod", "context": {} }],
            "current-context": "moke-prod",
        });
        let merged = merge(existing.clone(), &new, true).unwrap();
        assert_eq!(merged["clusters"].as_array().unwrap().len(), 2);
        assert_eq!(merged["clusters"][1]["cluster"]["server"], "new");
        assert_eq!(merged["current-context"], "moke-prod");
        assert_eq!(merge(existing, &new, false).unwrap()["current-context"], "other");
    }

    #[test]
    fn a_credential_about_to_expire_is_not_reused() {
        let at = |seconds: i64| {
            let when = chrono::Utc::now() + chrono::Duration::seconds(seconds);
            json!({ "status": { "expirationTimestamp": when.to_rfc3339() } }).to_string()
        };
        assert!(still_fresh(&at(600)));
        assert!(!still_fresh(&at(30)));
        assert!(!still_fresh("not json"));
    }
}
