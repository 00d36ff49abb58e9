//! `moke deploy -f app.yaml`: roll out the Kubernetes Deployments in a YAML
//! file (one or several documents): each is created, or updated when it
//! exists. With `--wait`, waits for every rollout and exits non-zero if
//! one fails, which is what a CI step needs.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::cmd_operation::follow;
use crate::config::resolve;
use crate::output::{Printer, describe_error};

/// Create or update the Deployments in a Kubernetes YAML file.
#[derive(Debug, clap::Args)]
pub struct Deploy {
    /// The YAML file (`-` for stdin).
    #[arg(short = 'f', long)]
    file: PathBuf,
    /// Project id or name.
    #[arg(long)]
    project: String,
    /// Cluster id or name.
    #[arg(long)]
    cluster: String,
    /// The namespace, for documents that do not name one (default `default`).
    #[arg(long, short = 'n')]
    namespace: Option<String>,
    /// Wait for every rollout to finish; exit non-zero if one failed.
    #[arg(long)]
    wait: bool,
    /// Give up waiting after this many seconds.
    #[arg(long, default_value_t = 900)]
    timeout: u64,
}

/// The Deployments of a YAML stream, as JSON objects; anything else is refused.
pub fn deployments(yaml: &str) -> Result<Vec<Map<String, Value>>> {
    let mut found = Vec::new();
    for (index, document) in serde_norway::Deserializer::from_str(yaml).enumerate() {
        let value = Value::deserialize(document).with_context(|| format!("document {} is not YAML", index + 1))?;
        let Value::Object(object) = value else {
            if value.is_null() {
                continue;
            }
            bail!("document {} is not a Kubernetes object", index + 1);
        };
        match (object.get("apiVersion").and_then(Value::as_str), object.get("kind").and_then(Value::as_str)) {
            (Some("apps/v1"), Some("Deployment")) => found.push(object),
            (_, kind) => bail!(
                "document {} is a {}: `moke deploy` rolls out apps/v1 Deployments (Services: `moke service create`)",
                index + 1,
                kind.unwrap_or("document without a kind")
            ),
        }
    }
    if found.is_empty() {
        bail!("no Deployment in the file");
    }
    Ok(found)
}

impl Deploy {
    pub async fn run(self, profile: Option<&str>, printer: &Printer) -> Result<ExitCode> {
        let yaml = if self.file.as_os_str() == "-" {
            std::io::read_to_string(std::io::stdin())?
        } else {
            std::fs::read_to_string(&self.file).with_context(|| format!("could not read {}", self.file.display()))?
        };
        let manifests = deployments(&yaml)?;
        let profile = resolve(profile)?;
        let client = moke_sdk::Client::with_token(&profile.host, &profile.token)?;
        let mut operations = Vec::new();
        for manifest in manifests {
            let metadata = manifest.get("metadata").cloned().unwrap_or_default();
            let name = metadata["name"].as_str().context("a Deployment without metadata.name")?.to_string();
            let namespace = self
                .namespace
                .clone()
                .or_else(|| metadata["namespace"].as_str().map(str::to_string))
                .unwrap_or_else(|| "default".into());
            let exists = client
                .deployment_view()
                .project(self.project.as_str())
                .cluster(self.cluster.as_str())
                .namespace(namespace.as_str())
                .deployment(name.as_str())
                .send()
                .await
                .is_ok();
            let answer = if exists {
                client
                    .deployment_update()
                    .project(self.project.as_str())
                    .cluster(self.cluster.as_str())
                    .namespace(namespace.as_str())
                    .deployment(name.as_str())
                    .body_map(|body| body.manifest(Some(manifest.clone())))
                    .send()
                    .await
            } else {
                client
                    .deployment_create()
                    .project(self.project.as_str())
                    .cluster(self.cluster.as_str())
                    .namespace(namespace.as_str())
                    .body_map(|body| body.name(name.as_str()).manifest(Some(manifest.clone())))
                    .send()
                    .await
            };
            let operation =
                answer.map_err(|e| anyhow::anyhow!("{namespace}/{name}: {}", describe_error(&e)))?.into_inner();
            eprintln!(
                "{namespace}/{name}: {} ({})",
                if exists { "updating" } else { "creating" },
                operation.id.as_str()
            );
            operations.push(operation);
        }
        if !self.wait {
            printer.print(&operations);
            return Ok(ExitCode::SUCCESS);
        }
        let mut finished = Vec::new();
        for operation in operations {
            finished.push(follow(&client, operation.id.as_str(), Duration::from_secs(self.timeout)).await?);
        }
        printer.print(&finished);
        let failed = finished.iter().any(|op| op.status != moke_sdk::types::OperationStatus::Succeeded);
        Ok(if failed { ExitCode::FAILURE } else { ExitCode::SUCCESS })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_deployments_are_taken() {
        let two = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: a}\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: b}\n";
        assert_eq!(deployments(two).unwrap().len(), 2);
        let service = "apiVersion: v1\nkind: Service\nmetadata: {name: a}\n";
        assert!(deployments(service).unwrap_err().to_string().contains("Service"));
        assert!(deployments("").is_err());
    }
}
