//! Long-lived watches: a gRPC server stream or a GraphQL subscription that
//! follows a resource as it changes. A watch checks its credential again
//! before every read, so a revoked or expired token ends it. Each gateway
//! holds at most [`MAX_WATCHES`] watches, [`MAX_WATCHES_PER_ORG`] of one
//! organization and [`MAX_WATCHES_PER_PRINCIPAL`] of one principal, across
//! surfaces and connections; once it is half full, an organization holding
//! [`CROWDED_SHARE`] or more gets no more, so a few tenants cannot take it
//! all. A watch holds its slot until it is dropped: each surface ends a
//! watch whose client stopped reading (see [`delivered`] and the GraphQL
//! WebSocket's lifetime), so none outlives [`MAX_WATCH`] by much.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::Stream;
use futures::future::BoxFuture;
use tokio::sync::broadcast;
use tokio::time::Instant;
use uuid::Uuid;

use crate::app::workloads::deployments::DeploymentPath;
use crate::app::{App, Error, RequestContext, ResourceRef, Result};
use crate::ids::OperationId;
use crate::model::{ClusterView, DeploymentView, OperationView};

/// The most watches one principal holds at once.
pub const MAX_WATCHES_PER_PRINCIPAL: usize = 32;

/// The most watches one organization's principals hold at once, so many
/// service accounts of one organization cannot take a gateway's share.
pub const MAX_WATCHES_PER_ORG: usize = 128;

/// The most watches one gateway holds at once.
pub const MAX_WATCHES: usize = 4096;

/// What one organization may hold once the gateway is half full.
pub const CROWDED_SHARE: usize = 32;

/// The longest a watch lasts; a client that wants more starts another.
pub const MAX_WATCH: Duration = Duration::from_secs(3600);

/// How often a watch reads again when no notification woke it.
pub const FALLBACK_TICK: Duration = Duration::from_secs(2);

/// The watches held now on this gateway.
#[derive(Default)]
pub struct WatchSlots {
    held: Mutex<Held>,
}

#[derive(Default)]
struct Held {
    next: u64,
    slots: HashMap<u64, HeldSlot>,
}

struct HeldSlot {
    principal: Uuid,
    org: Uuid,
}

impl WatchSlots {
    fn held(&self) -> std::sync::MutexGuard<'_, Held> {
        self.held.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Takes a slot for `principal` of `org`, or says which limit is reached.
    fn take(&self, principal: Uuid, org: Uuid) -> Result<u64> {
        let mut held = self.held();
        if held.slots.len() >= MAX_WATCHES {
            return Err(Error::Unavailable {
                detail: "this gateway follows as many watches as it can; try again shortly".into(),
                retry_after_seconds: 5,
            });
        }
        let mine = held.slots.values().filter(|slot| slot.principal == principal).count();
        let ours = held.slots.values().filter(|slot| slot.org == org).count();
        let org_limit = if held.slots.len() >= MAX_WATCHES / 2 { CROWDED_SHARE } else { MAX_WATCHES_PER_ORG };
        for (count, limit) in [(mine, MAX_WATCHES_PER_PRINCIPAL), (ours, org_limit)] {
            if count >= limit {
                return Err(Error::RateLimited { limit: limit as u32, window_seconds: 0, retry_after_seconds: 1 });
            }
        }
        held.next += 1;
        let id = held.next;
        held.slots.insert(id, HeldSlot { principal, org });
        Ok(id)
    }
}

/// One held watch slot, given back when dropped.
pub struct WatchSlot {
    app: Arc<App>,
    id: u64,
}

impl Drop for WatchSlot {
    fn drop(&mut self) {
        self.app.watch_slots().held().slots.remove(&self.id);
    }
}

/// A watch's caller, authenticated again by its bearer credential (and
/// counted against its rate limit) before every read, for at most
/// [`MAX_WATCH`].
pub struct Watcher {
    app: Arc<App>,
    bearer: String,
    ctx: RequestContext,
    until: Instant,
    _slot: WatchSlot,
}

impl Watcher {
    /// Starts a watch for `ctx`'s caller, whose credential is `bearer`,
    /// refused with 429 beyond the principal's share.
    pub fn start(app: &Arc<App>, bearer: String, ctx: RequestContext) -> Result<Watcher> {
        let until = Instant::now() + MAX_WATCH;
        let id = app.watch_slots().take(ctx.principal.id, ctx.principal.org_id)?;
        let slot = WatchSlot { app: app.clone(), id };
        Ok(Watcher { app: app.clone(), bearer, ctx, until, _slot: slot })
    }

    pub fn app(&self) -> &Arc<App> {
        &self.app
    }

    /// The caller as its credential stands now; an error once the watch
    /// has lasted [`MAX_WATCH`].
    pub async fn caller(&mut self) -> Result<&RequestContext> {
        if Instant::now() > self.until {
            return Err(Error::Unavailable {
                detail: "a watch lasts at most an hour; start another".into(),
                retry_after_seconds: 0,
            });
        }
        let principal = self.app.authenticate(&self.bearer, &self.ctx).await?;
        self.app.rate_limits().check_principal(principal.id)?;
        self.ctx.principal = principal;
        Ok(&self.ctx)
    }

    /// Waits for a change `is_mine` accepts on `changes`, the fallback tick,
    /// or shutdown (`false`: the watch should end).
    pub async fn next_change(&self, changes: &mut broadcast::Receiver<Uuid>, is_mine: impl Fn(Uuid) -> bool) -> bool {
        let tick = tokio::time::sleep(FALLBACK_TICK);
        tokio::pin!(tick);
        loop {
            tokio::select! {
                _ = self.app.shutdown_token().cancelled() => return false,
                _ = &mut tick => return true,
                changed = changes.recv() => match changed {
                    Ok(changed) if is_mine(changed) => return true,
                    Ok(_) => continue,
                    Err(broadcast::error::RecvError::Lagged(_)) => return true,
                    Err(broadcast::error::RecvError::Closed) => return false,
                },
            }
        }
    }
}

/// How long a watch waits for its client to take an update before ending.
pub const WATCH_SEND_TIMEOUT: Duration = Duration::from_secs(30);

/// A watch's stream, run in its own task a few items ahead of the client,
/// as every surface sends it. A client that stops taking items (a TCP or
/// HTTP/2 window it never opens, so the stream would never be polled again)
/// ends the watch after [`WATCH_SEND_TIMEOUT`], and one that hangs up ends
/// it at once: either way its [`Watcher`] and slot are dropped, and its
/// deadline holds whether or not the client reads again.
pub fn delivered<T: Send + 'static>(
    updates: impl Stream<Item = T> + Send + 'static,
) -> impl Stream<Item = T> + Send + 'static {
    use futures::StreamExt;
    let (sender, receiver) = tokio::sync::mpsc::channel::<T>(4);
    tokio::spawn(async move {
        let mut updates = Box::pin(updates);
        loop {
            let update = tokio::select! {
                () = sender.closed() => return,
                update = updates.next() => match update {
                    Some(update) => update,
                    None => return,
                },
            };
            if sender.send_timeout(update, WATCH_SEND_TIMEOUT).await.is_err() {
                return;
            }
        }
    });
    futures::stream::unfold(receiver, |mut receiver| async move { receiver.recv().await.map(|item| (item, receiver)) })
}

/// The operation now and after every change, ending once it is done, when
/// the caller's credential no longer holds (the error is the last item), or
/// at shutdown.
pub fn operation_updates(watcher: Watcher, id: OperationId) -> impl Stream<Item = Result<OperationView>> {
    struct State {
        watcher: Watcher,
        changes: broadcast::Receiver<Uuid>,
        first: bool,
        over: bool,
    }
    let changes = watcher.app().operation_watch().subscribe();
    let state = State { watcher, changes, first: true, over: false };
    futures::stream::unfold(state, move |mut state| async move {
        if state.over {
            return None;
        }
        if !std::mem::take(&mut state.first)
            && !state.watcher.next_change(&mut state.changes, |changed| changed == id.uuid()).await
        {
            return None;
        }
        let read = match state.watcher.caller().await {
            Ok(caller) => {
                let caller = caller.clone();
                state.watcher.app().operation_view(&caller, id, None).await
            }
            Err(e) => Err(e),
        };
        state.over = !matches!(&read, Ok(view) if !view.status.is_terminal());
        Some((read, state))
    })
}

/// How often a polled watch reads its resource: nothing broadcasts
/// deployment or cluster changes, so it is read again rather than woken.
pub const POLL: Duration = Duration::from_secs(1);

/// A resource a polled watch follows: read as the caller may see it now.
pub trait Polled: Send + 'static {
    type View: serde::Serialize + Send + 'static;
    fn read<'a>(&'a self, app: &'a App, caller: &'a RequestContext) -> BoxFuture<'a, Result<Self::View>>;
    /// Whether no later change is worth waiting for.
    fn finished(view: &Self::View) -> bool;
}

/// The deployment a rollout watch follows, by its path's ids or names; it
/// is finished once its rollout is complete (running at its current
/// generation) or failed.
pub struct DeploymentAt {
    pub project: String,
    pub cluster: String,
    pub namespace: String,
    pub deployment: String,
}

impl Polled for DeploymentAt {
    type View = DeploymentView;
    fn read<'a>(&'a self, app: &'a App, caller: &'a RequestContext) -> BoxFuture<'a, Result<DeploymentView>> {
        Box::pin(async move {
            let (project, cluster) = (ResourceRef::parse(&self.project), ResourceRef::parse(&self.cluster));
            let at = DeploymentPath { project: &project, cluster: &cluster, namespace: &self.namespace };
            app.deployment_view(caller, &at, &ResourceRef::parse(&self.deployment)).await
        })
    }
    fn finished(view: &DeploymentView) -> bool {
        view.rollout_done()
    }
}

/// A cluster whose status a watch follows, by its project's and its own id
/// or name, as long as it exists (a deleted one ends the watch, 404).
pub struct ClusterAt {
    pub project: String,
    pub cluster: String,
}

impl Polled for ClusterAt {
    type View = ClusterView;
    fn read<'a>(&'a self, app: &'a App, caller: &'a RequestContext) -> BoxFuture<'a, Result<ClusterView>> {
        Box::pin(async move {
            app.cluster_view(caller, &ResourceRef::parse(&self.project), &ResourceRef::parse(&self.cluster)).await
        })
    }
    fn finished(_: &ClusterView) -> bool {
        false
    }
}

/// The deployment's rollout: [`polled_updates`] of a [`DeploymentAt`].
pub fn deployment_rollout_updates(watcher: Watcher, at: DeploymentAt) -> impl Stream<Item = Result<DeploymentView>> {
    polled_updates(watcher, at)
}

/// The resource now and whenever it has changed (read every [`POLL`]),
/// ending once it is [`Polled::finished`], when the caller's credential no
/// longer holds or the resource is gone (the error is the last item), or at
/// shutdown.
pub fn polled_updates<P: Polled>(watcher: Watcher, target: P) -> impl Stream<Item = Result<P::View>> {
    struct State<P> {
        watcher: Watcher,
        target: P,
        /// What was sent last, so only changes are sent.
        last: Option<serde_json::Value>,
        over: bool,
    }
    let state = State { watcher, target, last: None, over: false };
    futures::stream::unfold(state, |mut state| async move {
        loop {
            if state.over {
                return None;
            }
            if state.last.is_some() {
                tokio::select! {
                    _ = state.watcher.app().shutdown_token().cancelled() => return None,
                    _ = tokio::time::sleep(POLL) => {}
                }
            }
            let read = match state.watcher.caller().await {
                Ok(caller) => {
                    let caller = caller.clone();
                    state.target.read(state.watcher.app(), &caller).await
                }
                Err(e) => Err(e),
            };
            let view = match read {
                Ok(view) => view,
                Err(e) => {
                    state.over = true;
                    return Some((Err(e), state));
                }
            };
            let seen = serde_json::to_value(&view).ok();
            if state.last.is_some() && seen == state.last {
                continue;
            }
            state.over = P::finished(&view);
            state.last = seen.or(Some(serde_json::Value::Null));
            return Some((Ok(view), state));
        }
    })
}

/// `audit_event_export`: the organization's audit events that `filter`
/// selects, up to now, oldest first, in batches of
/// [`audit::EXPORT_BATCH`](crate::app::kernel::audit::EXPORT_BATCH), each
/// read as the caller stands then, so a credential revoked or a member
/// removed ends the export before anything read afterwards goes out. The
/// first batch is read here (authorization and filter errors are the call's
/// own); a later failure is the stream's last item, never a quietly short
/// export: past `MAX_EXPORT_EVENTS` events (`export_too_large`) or
/// `EXPORT_SECONDS` (`export_too_slow`).
pub async fn audit_event_export(
    mut watcher: Watcher,
    org: crate::ids::OrgId,
    filter: crate::app::kernel::audit::AuditFilter,
) -> Result<impl Stream<Item = Result<Vec<crate::model::AuditEventView>>> + use<>> {
    use crate::app::kernel::audit::{EXPORT_BATCH, EXPORT_SECONDS, MAX_EXPORT_EVENTS};
    struct Export {
        watcher: Watcher,
        filter: crate::app::kernel::audit::AuditFilter,
        first: Option<Vec<crate::model::AuditEventView>>,
        after: Option<Uuid>,
        sent: usize,
        done: bool,
        deadline: tokio::time::Instant,
    }
    let mut filter = filter;
    // Events up to now only: an export held open later learns nothing newer.
    let now = chrono::Utc::now();
    if filter.since.is_none_or(|since| since < now) {
        filter.until = Some(filter.until.map_or(now, |until| until.min(now)));
    }
    let caller = watcher.caller().await?.clone();
    let first = watcher.app().audit_event_export_batch(&caller, org, &filter, None).await?;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(EXPORT_SECONDS);
    let start = Export { watcher, filter, first: Some(first), after: None, sent: 0, done: false, deadline };
    let batch_size = usize::try_from(EXPORT_BATCH).unwrap_or(usize::MAX);
    let most = usize::try_from(MAX_EXPORT_EVENTS).unwrap_or(usize::MAX);
    Ok(futures::stream::unfold(start, move |mut export| async move {
        if export.done {
            return None;
        }
        let events = match export.first.take() {
            Some(events) => Ok(events),
            None if tokio::time::Instant::now() > export.deadline => {
                Err(Error::conflict("export_too_slow", "the export took too long; narrow it with since and until"))
            }
            None => match export.watcher.caller().await {
                Ok(caller) => {
                    let caller = caller.clone();
                    export.watcher.app().audit_event_export_batch(&caller, org, &export.filter, export.after).await
                }
                Err(e) => Err(e),
            },
        };
        let events = match events {
            Ok(events) if events.is_empty() => return None,
            Ok(_) if export.sent >= most => Err(Error::conflict(
                "export_too_large",
                format!("the export holds at most {MAX_EXPORT_EVENTS} events; narrow it with since and until"),
            )),
            other => other,
        };
        match events {
            Ok(events) => {
                export.sent += events.len();
                export.after = events.last().map(|e| e.id.uuid());
                export.done = events.len() < batch_size;
                Some((Ok(events), export))
            }
            Err(e) => {
                tracing::warn!(error = %e, "audit export stopped");
                export.done = true;
                Some((Err(e), export))
            }
        }
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn watches_are_capped_per_principal_organization_and_gateway() {
        let slots = WatchSlots::default();
        let (org, other_org) = (Uuid::new_v4(), Uuid::new_v4());
        let principals: Vec<Uuid> = (0..5).map(|_| Uuid::new_v4()).collect();
        for _ in 0..MAX_WATCHES_PER_PRINCIPAL {
            slots.take(principals[0], org).unwrap();
        }
        let refused = slots.take(principals[0], org).unwrap_err();
        assert!(matches!(refused, Error::RateLimited { limit: 32, .. }), "{refused:?}");
        for principal in &principals[1..4] {
            for _ in 0..MAX_WATCHES_PER_PRINCIPAL {
                slots.take(*principal, org).unwrap();
            }
        }
        // 4 × 32 = 128: the organization's share is taken, whoever asks next.
        let refused = slots.take(principals[4], org).unwrap_err();
        assert!(matches!(refused, Error::RateLimited { limit: 128, .. }), "{refused:?}");
        slots.take(principals[4], other_org).expect("another organization has its own share");

        // Half full, an organization that holds its crowded share gets no more.
        let crowded = WatchSlots::default();
        for _ in 0..MAX_WATCHES / 2 {
            crowded.take(Uuid::new_v4(), Uuid::new_v4()).unwrap();
        }
        for _ in 0..CROWDED_SHARE {
            crowded.take(Uuid::new_v4(), org).unwrap();
        }
        let refused = crowded.take(Uuid::new_v4(), org).unwrap_err();
        assert!(matches!(refused, Error::RateLimited { limit: 32, .. }), "{refused:?}");
        crowded.take(Uuid::new_v4(), other_org).expect("a small tenant still gets one");
    }
}
