//! `moke auth login|status|logout`: profiles in the credentials file.
//!
//! Signing in with a password makes a personal API token (`moke_pat_…`)
//! for the CLI and keeps only that, so no password or refresh token is
//! stored; `logout` revokes it. CI passes a token with `--with-token` or
//! sets `MOKE_HOST` and `MOKE_TOKEN`.

use std::io::BufRead;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use moke_sdk::types;

use crate::config::{Credentials, Profile};
use crate::output::{Printer, describe_error};

/// Sign in to a Moke API and save the credential as a profile.
#[derive(Debug, clap::Args)]
pub struct Login {
    /// The API's address, e.g. `https://api.moke.example`.
    #[arg(long, env = "MOKE_HOST")]
    host: String,
    /// Read an API token from stdin (what CI does) instead of signing in.
    #[arg(long, conflicts_with = "email")]
    with_token: bool,
    /// Sign in with this e-mail address; the password is read from stdin
    /// (or `MOKE_PASSWORD`).
    #[arg(long)]
    email: Option<String>,
    /// The organization to sign in to (id or name), when you belong to several.
    #[arg(long)]
    org: Option<String>,
    /// Allow plain `http://` to a host other than this machine (credentials
    /// then cross the network unencrypted).
    #[arg(long)]
    allow_http: bool,
}

/// Whether credentials may be sent to `host`: HTTPS, or HTTP on loopback.
fn transport_is_safe(host: &str) -> bool {
    let Ok(url) = reqwest::Url::parse(host) else { return false };
    match url.scheme() {
        "https" => true,
        "http" => matches!(url.host_str(), Some("localhost" | "127.0.0.1" | "[::1]")),
        _ => false,
    }
}

impl Login {
    pub async fn run(self, profile: Option<&str>) -> Result<ExitCode> {
        let host = self.host.trim_end_matches('/').to_string();
        if reqwest::Url::parse(&host).is_err() {
            bail!("--host takes a URL, e.g. https://api.moke.example");
        }
        if !self.allow_http && !transport_is_safe(&host) {
            bail!("{host} is not HTTPS: credentials would cross the network in clear text (--allow-http to insist)");
        }
        let (token, token_id) = if self.with_token {
            (read_line("token")?, None)
        } else if let Some(email) = &self.email {
            let password = match std::env::var("MOKE_PASSWORD") {
                Ok(password) => password,
                Err(_) => read_line("password")?,
            };
            let anonymous = moke_sdk::Client::anonymous(&host)?;
            let body =
                types::LoginRequest::builder().email(email.as_str()).password(password).organization(self.org.clone());
            let session =
                anonymous.session_create().body(body).send().await.map_err(|e| anyhow::anyhow!(describe_error(&e)))?;
            let signed_in = moke_sdk::Client::with_token(&host, &session.access_token)?;
            let name = format!("moke CLI ({})", hostname());
            let made = signed_in
                .personal_token_create()
                .body(types::ScopedTokenCreate::builder().name(name))
                .send()
                .await
                .map_err(|e| anyhow::anyhow!(describe_error(&e)))?
                .into_inner();
            // The session did its job; end it rather than leave it to expire.
            let logout = types::LogoutRequest::builder().refresh_token(Some(session.refresh_token.clone()));
            let _ = signed_in.session_delete().body(logout).send().await;
            (made.token, Some(made.id.to_string()))
        } else {
            bail!("say how to sign in: `--email ADDRESS` (password on stdin) or `--with-token` (token on stdin)");
        };
        let client = moke_sdk::Client::with_token(&host, &token)?;
        let me = client.me_view().send().await.map_err(|e| anyhow::anyhow!(describe_error(&e)))?.into_inner();
        let user = me.user.as_ref().map(|u| u.email.clone()).unwrap_or_else(|| me.id.clone());
        let name = profile.unwrap_or("default").to_string();
        let mut credentials = Credentials::load()?;
        credentials.profiles.insert(
            name.clone(),
            Profile { host, token, org: Some(me.organization.to_string()), user: Some(user.clone()), token_id },
        );
        if credentials.default.is_none() || profile.is_none() {
            credentials.default = Some(name.clone());
        }
        credentials.save()?;
        eprintln!("signed in as {user} in {} (profile `{name}`)", me.organization.as_str());
        Ok(ExitCode::SUCCESS)
    }
}

/// Show who each command acts as, and whether the credential still works.
#[derive(Debug, clap::Args)]
pub struct Status {}

impl Status {
    pub async fn run(self, profile: Option<&str>, printer: &Printer) -> Result<ExitCode> {
        let profile = crate::config::resolve(profile)?;
        let client = moke_sdk::Client::with_token(&profile.host, &profile.token)?;
        let valid = client.me_view().send().await;
        printer.print(&serde_json::json!({
            "host": profile.host,
            "user": profile.user,
            "organization": profile.org,
            "credential": if valid.is_ok() { "valid" } else { "refused" },
        }));
        Ok(if valid.is_ok() { ExitCode::SUCCESS } else { ExitCode::FAILURE })
    }
}

/// Revoke the CLI's token and forget the profile.
#[derive(Debug, clap::Args)]
pub struct Logout {}

impl Logout {
    pub async fn run(self, profile: Option<&str>) -> Result<ExitCode> {
        let mut credentials = Credentials::load()?;
        let (name, chosen) = credentials.selected(profile)?;
        let chosen = chosen.clone();
        if let Some(id) = &chosen.token_id {
            let client = moke_sdk::Client::with_token(&chosen.host, &chosen.token)?;
            if let Err(error) = client.personal_token_delete().token(id.as_str()).send().await {
                eprintln!("could not revoke the token ({}); forgetting it anyway", describe_error(&error));
            }
        }
        credentials.profiles.remove(&name);
        if credentials.default.as_deref() == Some(name.as_str()) {
            credentials.default = None;
        }
        credentials.save()?;
        eprintln!("signed out of profile `{name}`");
        Ok(ExitCode::SUCCESS)
    }
}

/// One line of stdin, without its line break.
fn read_line(what: &str) -> Result<String> {
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line).with_context(|| format!("could not read the {what} from stdin"))?;
    let line = line.trim_end_matches(['\r', '\n']).to_string();
    if line.is_empty() {
        bail!("no {what} on stdin");
    }
    Ok(line)
}

fn hostname() -> String {
    std::fs::read_to_string("/etc/hostname").map(|h| h.trim().to_string()).unwrap_or_else(|_| "this machine".into())
}

#[cfg(test)]
mod tests {
    #[test]
    fn credentials_go_over_https_or_stay_on_this_machine() {
        assert!(super::transport_is_safe("https://api.moke.example"));
        assert!(super::transport_is_safe("http://127.0.0.1:8080"));
        assert!(super::transport_is_safe("http://localhost:8080"));
        assert!(!super::transport_is_safe("http://api.moke.example"));
        assert!(!super::transport_is_safe("ftp://api.moke.example"));
    }
}
