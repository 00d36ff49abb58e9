//! `moke api METHOD PATH`: any API call, authenticated like every command,
//! for what has no command of its own (or for scripts that want raw JSON).

use std::process::ExitCode;

use anyhow::{Context, Result};

use crate::config::resolve;

/// Call any API path, e.g. `moke api GET /v1/me`.
#[derive(Debug, clap::Args)]
pub struct Api {
    /// GET, POST, PUT, PATCH or DELETE.
    method: String,
    /// The path, e.g. `/v1/orgs/org_…/projects`.
    path: String,
    /// A JSON body, or `@FILE` to read it from a file.
    #[arg(long)]
    body: Option<String>,
}

impl Api {
    pub async fn run(self, profile: Option<&str>) -> Result<ExitCode> {
        let profile = resolve(profile)?;
        let method: reqwest::Method = self.method.to_uppercase().parse().context("not an HTTP method")?;
        // Only a path on the profile's host: the credential goes nowhere else.
        if !self.path.starts_with('/') || self.path.starts_with("//") {
            anyhow::bail!("the path must start with a single `/`, e.g. /v1/me");
        }
        let base = reqwest::Url::parse(&profile.host).context("the profile's host is not a URL")?;
        let url = base.join(&self.path).context("not a path")?;
        if url.origin() != base.origin() {
            anyhow::bail!("the path must stay on {}", profile.host);
        }
        // The SDK's HTTP client: its bearer header, TLS setup and timeouts.
        let sdk = moke_sdk::Client::with_token(&profile.host, &profile.token)?;
        let mut request = sdk.raw_request(method, url);
        if let Some(body) = self.body {
            let text = match body.strip_prefix('@') {
                Some(file) => std::fs::read_to_string(file).with_context(|| format!("could not read {file}"))?,
                None => body,
            };
            let value: serde_json::Value = serde_json::from_str(&text).context("the body is not JSON")?;
            request = request.json(&value);
        }
        let answer = request.send().await?;
        let ok = answer.status().is_success();
        let status = answer.status();
        let text = answer.text().await?;
        match serde_json::from_str::<serde_json::Value>(&text) {
            Ok(json) => println!("{}", serde_json::to_string_pretty(&json)?),
            Err(_) if !text.is_empty() => println!("{text}"),
            Err(_) => {}
        }
        if !ok {
            eprintln!("error: {status}");
        }
        Ok(if ok { ExitCode::SUCCESS } else { ExitCode::FAILURE })
    }
}
