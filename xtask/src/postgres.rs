//! A private Postgres for development and tests, started from the machine's
//! own `initdb`/`pg_ctl` under `.moke/` when `DATABASE_URL` is unset or
//! unreachable.

use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{Context, Result, bail};

const PRIVATE_PORT: u16 = 54329;

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    Dev,
    Test,
    Bench,
}

/// A reachable Postgres server, and whether this command started it.
pub struct Postgres {
    /// `postgres://user@host:port` without a database.
    base_url: String,
    started: Option<PathBuf>,
    run_as_postgres: bool,
}

impl Postgres {
    pub fn url(&self, database: &str) -> String {
        format!("{}/{database}", self.base_url)
    }

    fn psql(&self, database: &str) -> Result<Command> {
        let mut command = Command::new(tool("psql")?);
        command.args(["-q", "-v", "ON_ERROR_STOP=1", "-d", &self.url(database)]);
        Ok(command)
    }

    pub fn create_database(&self, name: &str) -> Result<()> {
        let exists = self
            .psql("postgres")?
            .args(["-tA", "-c", &format!("SELECT 1 FROM pg_database WHERE datname = '{name}'")])
            .output()?;
        if String::from_utf8_lossy(&exists.stdout).trim() != "1" {
            check(self.psql("postgres")?.args(["-c", &format!("CREATE DATABASE {name}")]))?;
        }
        Ok(())
    }

    pub fn recreate_database(&self, name: &str) -> Result<()> {
        check(self.psql("postgres")?.args(["-c", &format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)")]))?;
        check(self.psql("postgres")?.args(["-c", &format!("CREATE DATABASE {name}")]))
    }

    pub fn apply_migrations(&self, database: &str, dir: &Path) -> Result<()> {
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir)?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "sql"))
            .collect();
        files.sort();
        for file in files {
            check(self.psql(database)?.arg("-f").arg(&file))?;
        }
        Ok(())
    }

    /// Stops the server if this command started it.
    fn stop_if_started(&self) {
        if let Some(data) = &self.started {
            let Ok(pg_ctl) = tool("pg_ctl") else { return };
            let mut command = self.as_owner(pg_ctl);
            command.args(["-D"]).arg(data).args(["-m", "fast", "-w", "stop"]);
            let _ = command.output();
            println!("xtask: stopped the private Postgres");
        }
    }

    fn as_owner(&self, program: PathBuf) -> Command {
        as_owner(self.run_as_postgres, program)
    }
}

impl Drop for Postgres {
    /// A server this command started stops with it, on success and failure alike.
    fn drop(&mut self) {
        self.stop_if_started();
    }
}

fn as_owner(run_as_postgres: bool, program: PathBuf) -> Command {
    if run_as_postgres {
        let mut command = Command::new("runuser");
        command.args(["-u", "postgres", "--"]).arg(program);
        command
    } else {
        Command::new(program)
    }
}

fn check(command: &mut Command) -> Result<()> {
    let output = command.output().with_context(|| format!("could not run {command:?}"))?;
    if !output.status.success() {
        bail!("{command:?} failed: {}", String::from_utf8_lossy(&output.stderr).trim());
    }
    Ok(())
}

/// Finds a Postgres program: the newest `/usr/lib/postgresql/*/bin`, then `PATH`.
pub fn tool(name: &str) -> Result<PathBuf> {
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok())
        .filter_map(|e| Some((e.file_name().to_str()?.parse().ok()?, e.path().join("bin").join(name))))
        .filter(|(_, path)| path.exists())
        .collect();
    versions.sort();
    if let Some((_, path)) = versions.pop() {
        return Ok(path);
    }
    let on_path =
        std::env::var_os("PATH").map(|paths| std::env::split_paths(&paths).map(|p| p.join(name)).find(|p| p.exists()));
    on_path.flatten().with_context(|| {
        format!("`{name}` was not found: install PostgreSQL (Debian: apt-get install postgresql postgresql-client)")
    })
}

/// Host and port of a `postgres://` URL, for a reachability check.
fn address_of(url: &str) -> Option<SocketAddr> {
    let rest = url.split_once("://")?.1;
    let authority = rest.split(['/', '?']).next()?;
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, hp)| hp);
    let with_port = if host_port.contains(':') { host_port.to_string() } else { format!("{host_port}:5432") };
    with_port.to_socket_addrs().ok()?.next()
}

fn reachable(addr: SocketAddr) -> bool {
    TcpStream::connect_timeout(&addr, Duration::from_secs(2)).is_ok()
}

fn is_root() -> bool {
    Command::new("id").arg("-u").output().is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// Uses `DATABASE_URL` when it is set and reachable, else a private server.
pub fn ensure(purpose: Purpose) -> Result<Postgres> {
    if let Ok(url) = std::env::var("DATABASE_URL") {
        match address_of(&url) {
            Some(addr) if reachable(addr) => {
                // Strip the database: callers pick their own.
                let base = match url.split_once("://") {
                    Some((scheme, rest)) => format!("{scheme}://{}", rest.split(['/', '?']).next().unwrap_or(rest)),
                    None => url.clone(),
                };
                println!("xtask: using the Postgres at DATABASE_URL ({})", addr);
                return Ok(Postgres { base_url: base, started: None, run_as_postgres: false });
            }
            _ => println!("xtask: DATABASE_URL is set but not reachable; starting a private Postgres"),
        }
    }
    start_private(purpose)
}

fn start_private(purpose: Purpose) -> Result<Postgres> {
    let initdb = tool("initdb")?;
    let pg_ctl = tool("pg_ctl")?;
    let run_as_postgres = is_root();
    let state = crate::root().join(".moke");
    let data = state.join("postgres");
    let sockets = state.join("run");
    std::fs::create_dir_all(&sockets)?;

    if run_as_postgres {
        // initdb refuses to run as root: the server runs as the postgres user,
        // which must be able to reach the data folder.
        check(Command::new("chown").args(["-R", "postgres:postgres"]).arg(&state))?;
        let traversable = Command::new("runuser")
            .args(["-u", "postgres", "--", "test", "-w"])
            .arg(&state)
            .status()
            .is_ok_and(|s| s.success());
        if !traversable {
            bail!(
                "the postgres user cannot reach {}; make its parent folders traversable (chmod o+x) or set DATABASE_URL",
                state.display()
            );
        }
    }
    if !data.join("PG_VERSION").exists() {
        println!("xtask: creating a private Postgres in {}", data.display());
        let mut command = as_owner(run_as_postgres, initdb);
        command.args(["-D"]).arg(&data).args(["-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8"]);
        check(&mut command)?;
    }
    let running = as_owner(run_as_postgres, pg_ctl.clone())
        .args(["-D"])
        .arg(&data)
        .arg("status")
        .output()
        .is_ok_and(|o| o.status.success());
    if running {
        // Line 4 of postmaster.pid is the port the server listens on.
        let port = std::fs::read_to_string(data.join("postmaster.pid"))
            .ok()
            .and_then(|pid| pid.lines().nth(3).and_then(|p| p.trim().parse::<u16>().ok()));
        if let Some(port) = port.filter(|p| reachable(([127, 0, 0, 1], *p).into())) {
            println!("xtask: using the private Postgres already running on 127.0.0.1:{port}");
            let base_url = format!("postgres://postgres@127.0.0.1:{port}");
            return Ok(Postgres { base_url, started: None, run_as_postgres });
        }
    }
    let port = (PRIVATE_PORT..PRIVATE_PORT + 20)
        .find(|p| TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], *p))).is_ok())
        .context("no free port for the private Postgres near 54329; set DATABASE_URL")?;
    let base_url = format!("postgres://postgres@127.0.0.1:{port}");
    // Test databases are disposable: trade durability for speed. Benchmarks
    // keep production's durability so commit costs are real.
    let durability = match purpose {
        Purpose::Dev | Purpose::Bench => "",
        Purpose::Test => " -c fsync=off -c synchronous_commit=off -c full_page_writes=off",
    };
    let options =
        format!("-p {port} -k {} -c listen_addresses=127.0.0.1 -c max_connections=300{durability}", sockets.display());
    let mut command = as_owner(run_as_postgres, pg_ctl);
    command
        .args(["-D"])
        .arg(&data)
        .args(["-l"])
        .arg(state.join("postgres.log"))
        .args(["-w", "-t", "60", "-o", &options, "start"]);
    check(&mut command).context("could not start the private Postgres (see .moke/postgres.log)")?;
    println!("xtask: started a private Postgres on 127.0.0.1:{port}");
    Ok(Postgres { base_url, started: Some(data), run_as_postgres })
}
