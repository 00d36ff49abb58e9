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

use crate::config::{Credentials, Profile, transport_is_safe};
use crate::output::{Printer, describe_error};

/// How long a token from a password sign-in lives unless asked otherwise.
const DEFAULT_EXPIRY_DAYS: u32 = 90;

/// Sign in to a Moke API and save the credential as a profile: by default
/// with a code a signed-in person approves (the device flow).
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
    /// How long the CLI's personal token lives (days; your organization's
    /// credential policy may demand less).
    #[arg(long, default_value_t = DEFAULT_EXPIRY_DAYS, value_parser = clap::value_parser!(u32).range(1..=365))]
    expires_in_days: u32,
    /// Allow plain `http://` to a host other than this machine (credentials
    /// then cross the network unencrypted).
    #[arg(long)]
    allow_http: bool,
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
                .body(
                    types::ScopedTokenCreate::builder()
                        .name(name)
                        .expires_in_seconds(Some(i64::from(self.expires_in_days) * 86_400)),
                )
                .send()
                .await
                .map_err(|e| anyhow::anyhow!(describe_error(&e)))?
                .into_inner();
            // The session did its job; end it rather than leave it to expire.
            let logout = types::LogoutRequest::builder().refresh_token(Some(session.refresh_token.clone()));
            let _ = signed_in.session_delete().body(logout).send().await;
            (made.token, Some(made.id.to_string()))
        } else {
            // The approver chooses the organization, and the server the lifetime.
            if self.org.is_some() || self.expires_in_days != DEFAULT_EXPIRY_DAYS {
                bail!("--org and --expires-in-days go with --email; a device sign-in takes both from its approval");
            }
            let token = device_sign_in(&host).await?;
            (token.access_token, Some(token.token_id.to_string()))
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

/// The device authorization flow (RFC 8628): show a code, and wait while a
/// signed-in person approves it (in the console, or with `moke auth device
/// approve` where they are signed in).
async fn device_sign_in(host: &str) -> Result<types::DeviceToken> {
    let anonymous = moke_sdk::Client::anonymous(host)?;
    let name: String = format!("moke CLI ({})", hostname()).chars().filter(|c| !c.is_control()).take(100).collect();
    let request: types::DeviceAuthorizationCreate = serde_json::from_value(serde_json::json!({ "client_name": name }))?;
    let started = anonymous
        .device_authorization_create()
        .body(request)
        .send()
        .await
        .map_err(|e| anyhow::anyhow!(describe_error(&e)))?
        .into_inner();
    eprintln!("To sign in, open {} and confirm the code {}", started.verification_uri_complete, started.user_code);
    eprintln!("(or, where you are signed in: moke auth device approve --user-code {})", started.user_code);
    let mut interval = std::time::Duration::from_secs(started.interval.max(1) as u64);
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(started.expires_in.max(1) as u64);
    loop {
        tokio::time::sleep(interval).await;
        let body = types::DeviceTokenRequest::builder()
            .device_code(started.device_code.clone())
            .grant_type("urn:ietf:params:oauth:grant-type:device_code");
        match anonymous.device_token_create().body(body).send().await {
            Ok(token) => return Ok(token.into_inner()),
            Err(moke_sdk::Error::ErrorResponse(problem)) => match problem.code.as_str() {
                "authorization_pending" => {}
                "slow_down" => interval += std::time::Duration::from_secs(5),
                "access_denied" => bail!("the sign-in was denied"),
                "expired_token" => bail!("the code expired before anyone approved it; run `moke auth login` again"),
                _ => bail!("{}", describe_error(&moke_sdk::Error::ErrorResponse(problem))),
            },
            Err(other) => bail!("{}", describe_error(&other)),
        }
        if tokio::time::Instant::now() >= deadline {
            bail!("the code expired before anyone approved it; run `moke auth login` again");
        }
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
        crate::cmd_kubeconfig::forget_cached_credentials(&chosen);
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
        assert!(crate::config::transport_is_safe("https://api.moke.example"));
        assert!(crate::config::transport_is_safe("http://127.0.0.1:8080"));
        assert!(crate::config::transport_is_safe("http://localhost:8080"));
        assert!(!crate::config::transport_is_safe("http://api.moke.example"));
        assert!(!crate::config::transport_is_safe("ftp://api.moke.example"));
    }
}
