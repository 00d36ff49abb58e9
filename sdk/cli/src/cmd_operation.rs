//! `moke operation wait ID`: follow an Operation to its end, with a
//! progress bar on stderr (its step and percentage); exits non-zero when
//! the Operation failed.

use std::process::ExitCode;
use std::time::Duration;

use anyhow::Result;
use indicatif::{ProgressBar, ProgressStyle};
use moke_sdk::types::{OperationStatus, OperationView};

use crate::config::resolve;
use crate::output::{Printer, describe_error};

/// Wait for an Operation to finish.
#[derive(Debug, clap::Args)]
pub struct Wait {
    /// The Operation's id (`op_…`).
    operation: String,
    /// Give up after this many seconds.
    #[arg(long, default_value_t = 1800)]
    timeout: u64,
}

impl Wait {
    pub async fn run(self, profile: Option<&str>, printer: &Printer) -> Result<ExitCode> {
        let profile = resolve(profile)?;
        let client = moke_sdk::Client::with_token(&profile.host, &profile.token)?;
        let operation = follow(&client, &self.operation, Duration::from_secs(self.timeout)).await?;
        printer.print(&operation);
        Ok(exit_code(&operation))
    }
}

/// Succeeded is 0; failed, or still running at the timeout, is not.
pub fn exit_code(operation: &OperationView) -> ExitCode {
    if operation.status == OperationStatus::Succeeded { ExitCode::SUCCESS } else { ExitCode::FAILURE }
}

/// Polls the Operation (the server holds each poll a few seconds) and shows
/// its progress until it has finished or `timeout` has passed.
pub async fn follow(client: &moke_sdk::Client, id: &str, timeout: Duration) -> Result<OperationView> {
    let bar = ProgressBar::new(100);
    bar.set_style(
        ProgressStyle::with_template("{spinner} {msg:40} [{bar:30}] {pos:>3}%")
            .expect("a valid template")
            .progress_chars("=> "),
    );
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        let operation = client
            .operation_view()
            .operation(id)
            .wait("5s")
            .send()
            .await
            .map_err(|e| anyhow::anyhow!(describe_error(&e)))?
            .into_inner();
        bar.set_position(operation.progress.clamp(0, 100) as u64);
        bar.set_message(format!("{}: {}", operation.kind, operation.step));
        let finished = matches!(operation.status, OperationStatus::Succeeded | OperationStatus::Failed);
        if finished || tokio::time::Instant::now() >= deadline {
            bar.finish_and_clear();
            if let Some(error) = &operation.error {
                eprintln!("operation {} failed: {}", operation.id.as_str(), error.message);
            }
            return Ok(operation);
        }
    }
}
