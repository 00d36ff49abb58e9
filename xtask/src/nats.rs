//! NATS with JetStream for the tests: `NATS_URL` when set and reachable,
//! else one on 127.0.0.1:4222, else a private `nats-server -js` under
//! `.moke/`, stopped when the command ends.

use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

pub struct Nats {
    url: String,
    child: Option<Child>,
}

impl Nats {
    pub fn url(&self) -> &str {
        &self.url
    }
}

impl Drop for Nats {
    fn drop(&mut self) {
        if let Some(child) = &mut self.child {
            let _ = child.kill();
            let _ = child.wait();
            println!("xtask: stopped the private NATS");
        }
    }
}

fn reachable(url: &str) -> Option<SocketAddr> {
    let host_port = url.strip_prefix("nats://").unwrap_or(url);
    let addr = host_port.to_socket_addrs().ok()?.next()?;
    TcpStream::connect_timeout(&addr, Duration::from_secs(2)).ok().map(|_| addr)
}

pub fn ensure() -> Result<Nats> {
    if let Ok(url) = std::env::var("NATS_URL") {
        if let Some(addr) = reachable(&url) {
            println!("xtask: using the NATS at NATS_URL ({addr})");
            return Ok(Nats { url, child: None });
        }
        println!("xtask: NATS_URL is set but not reachable");
    }
    let default = "nats://127.0.0.1:4222".to_string();
    if reachable(&default).is_some() {
        println!("xtask: using the NATS on 127.0.0.1:4222");
        return Ok(Nats { url: default, child: None });
    }
    let server = std::env::var_os("PATH")
        .and_then(|paths| std::env::split_paths(&paths).map(|p| p.join("nats-server")).find(|p| p.exists()))
        .context("no NATS server: install one (Debian: apt-get install nats-server) or set NATS_URL")?;
    let port = (4223..4243)
        .find(|p| TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], *p))).is_ok())
        .context("no free port for a private NATS")?;
    let store = crate::root().join(".moke/nats");
    std::fs::create_dir_all(&store)?;
    let child = Command::new(server)
        .args(["-a", "127.0.0.1", "-p", &port.to_string(), "-js", "-sd"])
        .arg(&store)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .context("could not start nats-server")?;
    let url = format!("nats://127.0.0.1:{port}");
    let nats = Nats { url, child: Some(child) };
    let deadline = Instant::now() + Duration::from_secs(10);
    while reachable(&nats.url).is_none() {
        if Instant::now() > deadline {
            bail!("the private nats-server did not start");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    println!("xtask: started a private NATS on {}", nats.url);
    Ok(nats)
}
