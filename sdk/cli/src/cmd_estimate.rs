//! `--estimate` on `moke cluster create`, `moke node-pool create` and
//! `moke node-pool update`: the same arguments, priced instead of applied.
//! Nothing is created or changed.

use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::ArgMatches;
use serde_json::{Value, json};

use crate::generated_cli::CliCommand;
use crate::output::{self, Printer};

/// Prices what `operation` with these arguments would do, and prints it.
pub async fn run(
    operation: CliCommand,
    client: &moke_sdk::Client,
    matches: &ArgMatches,
    printer: &Printer,
) -> Result<ExitCode> {
    let arg = |id: &str| matches.try_get_one::<String>(id).ok().flatten().cloned().unwrap_or_default();
    let mut body = json_body(matches)?;
    let answer = match operation {
        CliCommand::ClusterCreate => {
            if let Some(name) = matches.try_get_one::<moke_sdk::types::ClusterCreateName>("name")?.cloned() {
                body["name"] = json!(name.to_string());
            }
            if let Some(spec) = output::cluster_spec_from_flags(matches)? {
                body["spec"] = spec;
            }
            let pools = matches.get_many::<String>("node-pool").into_iter().flatten();
            let pools = pools.enumerate().map(|(i, pool)| node_pool(i, pool)).collect::<Result<Vec<_>>>()?;
            let request = json!({ "cluster": body, "node_pools": pools });
            let request: moke_sdk::types::ClusterEstimateRequest =
                serde_json::from_value(request).context("not a cluster to price")?;
            client.cluster_estimate().project(arg("project")).body(request).send().await.map(to_value)
        }
        CliCommand::NodePoolCreate => {
            if let Some(name) = matches.try_get_one::<moke_sdk::types::NodePoolCreateName>("name")?.cloned() {
                body["name"] = json!(name.to_string());
            }
            if let Some(spec) = output::node_pool_spec_from_flags(matches) {
                body["spec"] = spec;
            }
            let request: moke_sdk::types::NodePoolCreate =
                serde_json::from_value(body).context("not a node pool to price")?;
            let request = client.node_pool_estimate().project(arg("project")).cluster(arg("cluster")).body(request);
            request.send().await.map(to_value)
        }
        CliCommand::NodePoolUpdate => {
            let request: moke_sdk::types::NodePoolUpdate =
                serde_json::from_value(body).context("not a node pool change to price")?;
            let request = client
                .node_pool_update_estimate()
                .project(arg("project"))
                .cluster(arg("cluster"))
                .node_pool(arg("node-pool"))
                .body(request);
            request.send().await.map(to_value)
        }
        other => anyhow::bail!("`{}` has no --estimate", other.operation_id()),
    };
    match answer {
        Ok(estimate) => {
            printer.print(&estimate);
            Ok(ExitCode::SUCCESS)
        }
        Err(error) => {
            eprintln!("{}", output::describe_error(&error));
            Ok(ExitCode::FAILURE)
        }
    }
}

fn to_value<T: serde::Serialize>(answer: moke_sdk::ResponseValue<T>) -> Value {
    serde_json::to_value(answer.into_inner()).unwrap_or(Value::Null)
}

/// The `--json-body` file's JSON, or an empty object.
fn json_body(matches: &ArgMatches) -> Result<Value> {
    match matches.try_get_one::<std::path::PathBuf>("json-body").ok().flatten() {
        Some(path) => {
            let text = std::fs::read_to_string(path).with_context(|| format!("failed to read {}", path.display()))?;
            serde_json::from_str(&text).with_context(|| format!("failed to parse {}", path.display()))
        }
        None => Ok(json!({})),
    }
}

/// `--node-pool MACHINE_TYPE=COUNT` as the `i`th pool of an estimate.
fn node_pool(i: usize, text: &str) -> Result<Value> {
    let (machine_type, count) =
        text.split_once('=').with_context(|| format!("--node-pool {text}: expected MACHINE_TYPE=COUNT"))?;
    let count: i64 = count.parse().with_context(|| format!("--node-pool {text}: the count is not a number"))?;
    Ok(json!({ "name": format!("pool-{}", i + 1), "spec": { "machine_type": machine_type, "count": count } }))
}
