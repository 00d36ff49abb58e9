//! The agent's admin endpoint, for tests and demos: inspect the simulated
//! region and inject faults.
//!
//! | route | effect |
//! |---|---|
//! | `GET /state` | the simulated region as JSON (private keys left out) |
//! | `POST /faults/nodes/{node}/fail` | the node stops; its pods are lost and rescheduled; its pool replaces it |
//! | `POST /faults/zones/{zone}/fail`, `.../restore` | every node of the zone stops (nothing is replaced there) or comes back |
//! | `POST /faults/provider/stall?seconds=N` | the provider takes no command and time stands still for N s (0 resumes) |
//! | `POST /faults/link/drop?seconds=N` | the agent neither takes commands nor reports for N s (0 restores) |
//!
//! It listens where `AgentConfig::admin_addr` says: loopback only, unless
//! `admin_allow_remote` is set. Every request needs `Authorization: Bearer
//! <AgentConfig::admin_token>`; the agent refuses to serve it without one.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;

use crate::Simulated;

/// Faults of the agent itself (region faults live in the simulated state).
#[derive(Debug, Default)]
pub struct Switches {
    provider_stalled_until: Mutex<Option<Instant>>,
    link_down_until: Mutex<Option<Instant>>,
}

fn active(until: &Mutex<Option<Instant>>) -> bool {
    until.lock().expect("switch lock").is_some_and(|at| Instant::now() < at)
}

fn set(until: &Mutex<Option<Instant>>, duration: Duration) {
    *until.lock().expect("switch lock") = (!duration.is_zero()).then(|| Instant::now() + duration);
}

impl Switches {
    /// True while the provider is stalled.
    pub fn stalled(&self) -> bool {
        active(&self.provider_stalled_until)
    }

    /// True while the link to the queue is down.
    pub fn link_down(&self) -> bool {
        active(&self.link_down_until)
    }

    /// Stalls the provider for `duration` (zero resumes it).
    pub fn stall_provider(&self, duration: Duration) {
        set(&self.provider_stalled_until, duration);
    }

    /// Drops the link to the queue for `duration` (zero restores it).
    pub fn drop_link(&self, duration: Duration) {
        set(&self.link_down_until, duration);
    }
}

#[derive(Clone)]
struct AdminState {
    provider: Arc<Mutex<Simulated>>,
    switches: Arc<Switches>,
}

/// Refuses requests without the admin token (compared in constant time).
async fn require_token(
    State(token): State<Arc<str>>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    let presented = request
        .headers()
        .get(axum::http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .unwrap_or_default();
    let equal = presented.len() == token.len()
        && presented.bytes().zip(token.bytes()).fold(0u8, |acc, (a, b)| acc | (a ^ b)) == 0;
    if equal { next.run(request).await } else { StatusCode::UNAUTHORIZED.into_response() }
}

#[derive(Deserialize)]
struct ForSeconds {
    seconds: u64,
}

/// The admin routes over an agent's provider and switches, behind `token`.
pub fn router(provider: Arc<Mutex<Simulated>>, switches: Arc<Switches>, token: &str) -> Router {
    let token: Arc<str> = Arc::from(token);
    Router::new()
        .route("/state", get(state))
        .route("/faults/nodes/{node}/fail", post(fail_node))
        .route("/faults/zones/{zone}/fail", post(fail_zone))
        .route("/faults/zones/{zone}/restore", post(restore_zone))
        .route("/faults/provider/stall", post(stall_provider))
        .route("/faults/link/drop", post(drop_link))
        .with_state(AdminState { provider, switches })
        .layer(axum::middleware::from_fn_with_state(token, require_token))
}

/// The simulated region, without the control planes' private keys or the clusters' Secrets.
async fn state(State(admin): State<AdminState>) -> Json<crate::SimState> {
    let mut state = admin.provider.lock().unwrap_or_else(std::sync::PoisonError::into_inner).state.clone();
    for cluster in state.clusters.values_mut() {
        cluster.pki.serving_key_pem.clear();
    }
    for store in state.kube.values_mut() {
        for secret in store.objects.iter_mut().filter(|(key, _)| key.starts_with("/secrets/")).map(|(_, o)| o) {
            if let Some(fields) = secret.as_object_mut() {
                fields.remove("data");
            }
            if let Some(metadata) = secret["metadata"].as_object_mut() {
                metadata.remove("annotations");
            }
        }
    }
    Json(state)
}

async fn fail_node(State(admin): State<AdminState>, Path(node): Path<String>) -> StatusCode {
    if admin.provider.lock().unwrap_or_else(std::sync::PoisonError::into_inner).state.fail_node(&node) {
        StatusCode::NO_CONTENT
    } else {
        StatusCode::NOT_FOUND
    }
}

async fn set_zone(admin: &AdminState, zone: &str, failed: bool) -> StatusCode {
    let mut provider = admin.provider.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if !provider.layout.zones.iter().any(|z| z == zone) {
        return StatusCode::NOT_FOUND;
    }
    provider.state.set_zone_failed(zone, failed);
    StatusCode::NO_CONTENT
}

async fn fail_zone(State(admin): State<AdminState>, Path(zone): Path<String>) -> StatusCode {
    set_zone(&admin, &zone, true).await
}

async fn restore_zone(State(admin): State<AdminState>, Path(zone): Path<String>) -> StatusCode {
    set_zone(&admin, &zone, false).await
}

async fn stall_provider(State(admin): State<AdminState>, Query(q): Query<ForSeconds>) -> StatusCode {
    admin.switches.stall_provider(Duration::from_secs(q.seconds));
    StatusCode::NO_CONTENT
}

async fn drop_link(State(admin): State<AdminState>, Query(q): Query<ForSeconds>) -> StatusCode {
    admin.switches.drop_link(Duration::from_secs(q.seconds));
    StatusCode::NO_CONTENT
}
