//! The simulated hosted control plane's API endpoint: HTTPS with a serving
//! certificate from the cluster's own CA, client certificates required and
//! verified against that CA alone (another cluster's certificate fails the
//! TLS handshake); the Kubernetes API behind it is [`crate::kube`]'s. The
//! client certificate's CN is the user, its O entries the groups, its OU
//! the credentials generation (older generations are refused after a
//! revocation).

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};

use anyhow::{Context, Result};
use axum::extract::{Extension, State};
use axum::http::StatusCode;
use axum::response::Response;
use axum::routing::{any, get};
use axum::{Json, Router};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::Simulated;
use crate::kube::status;
use crate::sim::SimCluster;

/// Who a client certificate names.
#[derive(Debug, Clone)]
struct Identity {
    user: String,
    groups: Vec<String>,
    /// The cluster's credentials generation the certificate was issued in.
    generation: i64,
    /// The principal's credential epoch in the organization when it was issued.
    principal_epoch: i64,
}

fn identity(der: &[u8]) -> Option<Identity> {
    let (_, cert) = x509_parser::parse_x509_certificate(der).ok()?;
    let subject = cert.subject();
    let text = |v: &x509_parser::x509::AttributeTypeAndValue| v.as_str().ok().map(str::to_string);
    let user = subject.iter_common_name().next().and_then(text)?;
    let groups = subject.iter_organization().filter_map(text).collect();
    // `moke-credentials-<generation>.epoch-<principal epoch>` (older certificates: no epoch).
    let unit = subject.iter_organizational_unit().filter_map(text).find_map(|ou| {
        let rest = ou.strip_prefix("moke-credentials-")?.to_string();
        let (generation, epoch) = rest.split_once(".epoch-").unwrap_or((rest.as_str(), "0"));
        Some((generation.parse().ok()?, epoch.parse().ok()?))
    });
    let (generation, principal_epoch) = unit.unwrap_or((0, 0));
    Some(Identity { user, groups, generation, principal_epoch })
}

impl Served {
    /// Whether the cluster's firewall lets `address` connect (no list: any).
    /// A list that does not parse admits nobody rather than everybody.
    fn admits(&self, address: std::net::IpAddr) -> bool {
        let address = address.to_canonical();
        let provider = self.provider.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let Some(cluster) = provider.state.clusters.get(&self.cluster_id) else { return false };
        cluster.allowed_addresses.is_empty()
            || cluster
                .allowed_addresses
                .iter()
                .any(|net| net.parse::<ipnet::IpNet>().is_ok_and(|net| net.contains(&address)))
    }
}

#[derive(Clone)]
struct Served {
    cluster_id: String,
    provider: Arc<Mutex<Simulated>>,
    min_generation: Arc<AtomicI64>,
}

struct Running {
    endpoint: String,
    min_generation: Arc<AtomicI64>,
    stop: CancellationToken,
}

/// The control planes this agent serves, by cluster id.
#[derive(Default)]
pub struct ControlPlanes {
    running: Mutex<HashMap<String, Running>>,
}

impl Drop for ControlPlanes {
    fn drop(&mut self) {
        for (_, running) in self.running.lock().expect("control planes lock").drain() {
            running.stop.cancel();
        }
    }
}

impl ControlPlanes {
    /// Serves `cluster` (if it has its certificate) and returns its endpoint;
    /// an already served one only takes the new credentials generation.
    pub fn ensure(&self, cluster_id: &str, cluster: &SimCluster, provider: Arc<Mutex<Simulated>>) -> Result<String> {
        let mut running = self.running.lock().expect("control planes lock");
        if let Some(existing) = running.get(cluster_id) {
            existing.min_generation.fetch_max(cluster.pki.credentials_generation, Ordering::SeqCst);
            return Ok(existing.endpoint.clone());
        }
        let config = tls_config(cluster)?;
        // Keep the port across agent restarts when it is free.
        let previous =
            cluster.endpoint.as_deref().and_then(|e| e.strip_prefix("https://")).and_then(|a| a.parse().ok());
        let listener = previous
            .and_then(|addr: SocketAddr| std::net::TcpListener::bind(addr).ok())
            .map_or_else(|| std::net::TcpListener::bind("127.0.0.1:0"), Ok)?;
        listener.set_nonblocking(true)?;
        let endpoint = format!("https://{}", listener.local_addr()?);
        let min_generation = Arc::new(AtomicI64::new(cluster.pki.credentials_generation));
        let stop = CancellationToken::new();
        let served = Served { cluster_id: cluster_id.to_string(), provider, min_generation: min_generation.clone() };
        let listener = tokio::net::TcpListener::from_std(listener)?;
        tokio::spawn(serve(listener, tokio_rustls::TlsAcceptor::from(Arc::new(config)), served, stop.clone()));
        running.insert(cluster_id.to_string(), Running { endpoint: endpoint.clone(), min_generation, stop });
        Ok(endpoint)
    }

    /// Stops serving a deleted cluster.
    pub fn stop(&self, cluster_id: &str) {
        if let Some(running) = self.running.lock().expect("control planes lock").remove(cluster_id) {
            running.stop.cancel();
        }
    }
}

fn tls_config(cluster: &SimCluster) -> Result<rustls::ServerConfig> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut roots = rustls::RootCertStore::empty();
    for ca in CertificateDer::pem_slice_iter(cluster.pki.ca_pem.as_bytes()) {
        roots.add(ca.context("the cluster CA")?)?;
    }
    let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider.clone())
        .build()
        .context("client certificate verifier")?;
    let chain: Vec<CertificateDer<'static>> =
        CertificateDer::pem_slice_iter(cluster.pki.serving_certificate_pem.as_bytes()).collect::<Result<_, _>>()?;
    let key = PrivateKeyDer::from_pem_slice(cluster.pki.serving_key_pem.as_bytes()).context("the serving key")?;
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_client_cert_verifier(verifier)
        .with_single_cert(chain, key)?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(config)
}

async fn serve(
    listener: tokio::net::TcpListener,
    acceptor: tokio_rustls::TlsAcceptor,
    served: Served,
    stop: CancellationToken,
) {
    loop {
        let accepted = tokio::select! {
            _ = stop.cancelled() => return,
            accepted = listener.accept() => accepted,
        };
        let Ok((tcp, peer)) = accepted else { continue };
        if !served.admits(peer.ip()) {
            // The firewall: dropped before TLS, as a cloud firewall drops it.
            continue;
        }
        let (acceptor, served, stop) = (acceptor.clone(), served.clone(), stop.clone());
        tokio::spawn(async move {
            // A certificate from another CA, or none, ends here.
            let Ok(tls) = acceptor.accept(tcp).await else { return };
            let who = tls.get_ref().1.peer_certificates().and_then(|certs| certs.first()).and_then(|c| identity(c));
            let Some(who) = who else { return };
            let app = router(served).layer(Extension(who)).layer(Extension(Peer(peer.ip())));
            let service = hyper_util::service::TowerToHyperService::new(app);
            let builder = hyper_util::server::conn::auto::Builder::new(hyper_util::rt::TokioExecutor::new());
            let connection = builder.serve_connection(hyper_util::rt::TokioIo::new(tls), service);
            tokio::select! {
                _ = stop.cancelled() => {}
                _ = connection => {}
            }
        });
    }
}

fn router(served: Served) -> Router {
    Router::new()
        .route("/version", get(version))
        .route("/api", any(kube_api))
        .route("/api/{*rest}", any(kube_api))
        .route("/apis", any(kube_api))
        .route("/apis/{*rest}", any(kube_api))
        .route("/openapi/v3", any(kube_api))
        .route("/openapi/v3/{*rest}", any(kube_api))
        .fallback(|| async {
            status(StatusCode::NOT_FOUND, "NotFound", "the server could not find the requested resource")
        })
        .layer(axum::middleware::from_fn_with_state(served.clone(), check_access))
        .with_state(served)
}

/// Every Kubernetes API path: [`crate::kube`] serves them.
async fn kube_api(
    State(served): State<Served>,
    Extension(who): Extension<Identity>,
    Extension(Peer(peer)): Extension<Peer>,
    request: axum::extract::Request,
) -> Response {
    let (user, groups) = (who.user.clone(), who.groups.clone());
    let checked = served.clone();
    let still_allowed = Arc::new(move || refusal(&checked, &who, peer).is_none());
    let caller = crate::kube::Caller { user, groups, still_allowed };
    crate::kube::serve(served.provider.clone(), served.cluster_id.clone(), caller, request).await
}

/// The address a connection comes from.
#[derive(Debug, Clone, Copy)]
struct Peer(std::net::IpAddr);

/// Why a request on a connection is refused now, if it is: its address
/// is no longer admitted by the firewall (a connection opened before it
/// changed), or its client certificate was issued before the last
/// revocation.
fn refusal(served: &Served, who: &Identity, peer: std::net::IpAddr) -> Option<Response> {
    if !served.admits(peer) {
        return Some(status(StatusCode::FORBIDDEN, "Forbidden", "the cluster's firewall does not admit this address"));
    }
    if who.generation < served.min_generation.load(Ordering::SeqCst) {
        return Some(status(StatusCode::UNAUTHORIZED, "Unauthorized", "Unauthorized"));
    }
    let revoked_below = {
        let provider = served.provider.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        provider
            .state
            .clusters
            .get(&served.cluster_id)
            .and_then(|cluster| cluster.pki.principal_epochs.get(&who.user).copied())
            .unwrap_or(0)
    };
    (who.principal_epoch < revoked_below).then(|| status(StatusCode::UNAUTHORIZED, "Unauthorized", "Unauthorized"))
}

/// Refuses what [`refusal`] refuses, before anything else runs.
async fn check_access(
    State(served): State<Served>,
    Extension(who): Extension<Identity>,
    Extension(Peer(peer)): Extension<Peer>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    match refusal(&served, &who, peer) {
        Some(refused) => refused,
        None => next.run(request).await,
    }
}

fn cluster_version(served: &Served) -> String {
    let provider = served.provider.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    provider.state.clusters.get(&served.cluster_id).map(|c| c.kubernetes_version.clone()).unwrap_or_default()
}

async fn version(State(served): State<Served>) -> Json<Value> {
    let version = cluster_version(&served);
    let mut parts = version.split('.');
    let (major, minor) = (parts.next().unwrap_or("1").to_string(), parts.next().unwrap_or("31").to_string());
    Json(json!({
        "major": major, "minor": minor, "gitVersion": crate::kube::git_version(&version),
        "gitCommit": "moke-simulated", "gitTreeState": "clean", "buildDate": "2026-01-01T00:00:00Z",
        "goVersion": "go1.22", "compiler": "gc", "platform": "linux/amd64",
    }))
}
