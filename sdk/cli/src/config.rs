//! Profiles: which API host, which credential and which organization each
//! command uses. They live in `credentials.toml` under the config directory
//! (`$MOKE_CONFIG_DIR`, else `$XDG_CONFIG_HOME/moke`, else `~/.config/moke`),
//! written with mode 0600. `MOKE_HOST` + `MOKE_TOKEN` (what CI sets) win
//! over any profile.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};

/// One signed-in identity.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Profile {
    pub host: String,
    pub token: String,
    /// The organization commands act in when `--org` is not given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub org: Option<String>,
    /// Who signed in, for `moke auth status`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    /// The personal token's id, so `moke auth logout` can revoke it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_id: Option<String>,
}

/// The whole credentials file.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Credentials {
    /// The profile used when neither `--profile` nor `MOKE_PROFILE` names one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
    #[serde(default)]
    pub profiles: BTreeMap<String, Profile>,
}

pub fn config_dir() -> Result<PathBuf> {
    if let Some(dir) = std::env::var_os("MOKE_CONFIG_DIR") {
        return Ok(PathBuf::from(dir));
    }
    if let Some(dir) = std::env::var_os("XDG_CONFIG_HOME") {
        return Ok(PathBuf::from(dir).join("moke"));
    }
    let home = std::env::var_os("HOME").context("HOME is not set; set MOKE_CONFIG_DIR")?;
    Ok(PathBuf::from(home).join(".config/moke"))
}

impl Credentials {
    pub fn path() -> Result<PathBuf> {
        Ok(config_dir()?.join("credentials.toml"))
    }

    pub fn load() -> Result<Credentials> {
        let path = Self::path()?;
        match std::fs::read_to_string(&path) {
            Ok(text) => toml::from_str(&text).with_context(|| format!("{} is not a credentials file", path.display())),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(Credentials::default()),
            Err(error) => Err(error).with_context(|| format!("could not read {}", path.display())),
        }
    }

    /// Writes the file readable by its owner only (created that way, never
    /// widened for a moment).
    pub fn save(&self) -> Result<()> {
        let path = Self::path()?;
        create_private_dir(path.parent().expect("a file in a directory"))?;
        let text = toml::to_string_pretty(self)?;
        write_private(&path, text.as_bytes())
    }

    /// The profile a command uses: `--profile`, else `MOKE_PROFILE`, else the default.
    pub fn selected(&self, asked: Option<&str>) -> Result<(String, &Profile)> {
        let name = match asked.map(str::to_string).or_else(|| std::env::var("MOKE_PROFILE").ok()) {
            Some(name) => name,
            None => match &self.default {
                Some(name) => name.clone(),
                None => bail!("not signed in: run `moke auth login --host URL` (or set MOKE_HOST and MOKE_TOKEN)"),
            },
        };
        let profile = self
            .profiles
            .get(&name)
            .with_context(|| format!("no profile `{name}`: run `moke auth login --profile {name}`"))?;
        Ok((name, profile))
    }
}

/// The host, token and organization a command uses.
pub fn resolve(asked_profile: Option<&str>) -> Result<Profile> {
    if let (Ok(host), Ok(token)) = (std::env::var("MOKE_HOST"), std::env::var("MOKE_TOKEN")) {
        if asked_profile.is_some() {
            eprintln!("warning: MOKE_HOST and MOKE_TOKEN are set and win over --profile");
        }
        if !transport_is_safe(&host) && std::env::var_os("MOKE_ALLOW_HTTP").is_none() {
            bail!(
                "MOKE_HOST {host} is not HTTPS: the token would cross the network in clear text (MOKE_ALLOW_HTTP=1 to insist)"
            );
        }
        return Ok(Profile { host, token, org: std::env::var("MOKE_ORG").ok(), user: None, token_id: None });
    }
    let credentials = Credentials::load()?;
    let (_, profile) = credentials.selected(asked_profile)?;
    Ok(profile.clone())
}

/// Writes `contents` to `path` with mode 0600 (through a new file renamed
/// into place, so a reader never sees half of it).
pub fn write_private(path: &std::path::Path, contents: &[u8]) -> Result<()> {
    let temporary = path.with_extension(format!("tmp{}", std::process::id()));
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(&temporary).with_context(|| format!("could not create {}", temporary.display()))?;
    let written = file
        .write_all(contents)
        .and_then(|()| file.sync_all())
        .and_then(|()| std::fs::rename(&temporary, path))
        .with_context(|| format!("could not write {}", path.display()));
    if written.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    written
}

/// Whether credentials may be sent to `host`: HTTPS, or HTTP on loopback.
pub fn transport_is_safe(host: &str) -> bool {
    let Ok(url) = reqwest::Url::parse(host) else { return false };
    match url.scheme() {
        "https" => true,
        "http" => matches!(url.host_str(), Some("localhost" | "127.0.0.1" | "[::1]")),
        _ => false,
    }
}

/// Creates `dir` (and its parents) if missing; a directory made here is
/// readable by its owner only.
pub fn create_private_dir(dir: &std::path::Path) -> Result<()> {
    if dir.is_dir() {
        return Ok(());
    }
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir).with_context(|| format!("could not create {}", dir.display()))
}
