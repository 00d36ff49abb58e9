//! `moke billing download` (and `billing invoice pdf|csv`): an invoice's PDF
//! or CSV written to a file, named after its number, or to stdout.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use futures::TryStreamExt;

use crate::config::resolve;
use crate::output::describe_error;

/// The API's refusal, as `main` prints errors (it adds the `error:`).
fn refused<T: serde::Serialize + std::fmt::Debug>(error: moke_sdk::Error<T>) -> anyhow::Error {
    anyhow::anyhow!(describe_error(&error).trim_start_matches("error: ").to_string())
}

/// Download an invoice as PDF or CSV.
#[derive(Debug, clap::Args)]
pub struct Download {
    /// Invoice id (`bill_…`), as `moke billing invoices` lists them.
    #[arg(long)]
    invoice: String,
    /// `pdf` or `csv`.
    #[arg(long, default_value = "pdf", value_parser = ["pdf", "csv"])]
    format: String,
    /// The file to write (`-` for stdout); default: the name the API gives
    /// it (the invoice's number, or its month for a draft), here.
    #[arg(long, short = 'f')]
    file: Option<PathBuf>,
    /// Organization id or name (default: the profile's).
    #[arg(long)]
    org: Option<String>,
}

impl Download {
    /// As `billing invoice pdf|csv`: the format is the command's.
    pub fn in_format(mut self, format: &str) -> Download {
        self.format = format.to_string();
        self
    }

    pub async fn run(self, profile: Option<&str>) -> Result<ExitCode> {
        let profile = resolve(profile)?;
        let Some(org) = self.org.clone().or(profile.org.clone()) else {
            bail!("no organization: pass --org or sign in to one");
        };
        let client = moke_sdk::Client::with_token(&profile.host, &profile.token)?;
        let invoice = client
            .invoice_view()
            .org(org.as_str())
            .invoice(self.invoice.as_str())
            .send()
            .await
            .map_err(refused)?
            .into_inner();
        let answer = match self.format.as_str() {
            "csv" => client.invoice_csv_view().org(org.as_str()).invoice(self.invoice.as_str()).send().await,
            _ => client.invoice_pdf_view().org(org.as_str()).invoice(self.invoice.as_str()).send().await,
        }
        .map_err(refused)?;
        // The name the API gives the file (as a browser would save it), made safe for a path.
        let offered = answer
            .headers()
            .get(reqwest::header::CONTENT_DISPOSITION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split("filename=").nth(1))
            .map(|name| name.trim_matches('"').chars().filter(|c| c.is_ascii_alphanumeric() || "._-".contains(*c)))
            .map(String::from_iter)
            .filter(|name| !name.is_empty() && !name.starts_with('.'));
        let bytes: Vec<u8> = answer
            .into_inner()
            .into_inner()
            .map_ok(|chunk| chunk.to_vec())
            .try_concat()
            .await
            .context("the download broke off")?;
        let name = invoice.number.as_ref().map_or_else(|| invoice.id.to_string(), |number| number.to_string());
        let path = self
            .file
            .or(offered.map(PathBuf::from))
            .unwrap_or_else(|| PathBuf::from(format!("{name}.{}", self.format)));
        if path.as_os_str() == "-" {
            use std::io::Write;
            std::io::stdout().write_all(&bytes)?;
        } else {
            std::fs::write(&path, &bytes).with_context(|| format!("could not write {}", path.display()))?;
            eprintln!("saved invoice {name} to {} ({} bytes)", path.display(), bytes.len());
        }
        Ok(ExitCode::SUCCESS)
    }
}
