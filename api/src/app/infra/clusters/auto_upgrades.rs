//! Automatic upgrades: a cluster on a release channel follows its
//! channel's version, and one on a version past its end of life is moved
//! on whatever its channel, a minor version at a time. The owners are told
//! first (`cluster.upgrade_available`, and mail), the upgrade starts no
//! sooner than `lifecycle.auto_upgrade_notice_hours` later, inside the
//! cluster's maintenance window (any time without one) and never on a day
//! of a maintenance exclusion, as a `cluster_upgrade` Operation like a
//! customer's (`cluster.auto_upgrade` in the audit log), and the owners are
//! told how it ended (`cluster.upgrade_finished` goes out for every upgrade).

use chrono::{DateTime, Datelike, Duration, NaiveDate, NaiveTime, Utc};
use serde_json::json;

use super::upgrades::{upgrade_running, upgrades};
use super::{SpecWrite, find_by_id};
use crate::app::infra::store::upgrade_notices as notices;
use crate::app::infra::store::{ClusterSpecStored, upgrade_notices::NoticeRow};
use crate::app::kernel::jsonb;
use crate::app::kernel::mail::{self, Mail};
use crate::app::region::command::ChangeKind;
use crate::app::validate::{WEEKDAYS, minor};
use crate::app::{App, Error, RequestContext, Result};
use crate::config::Catalog;
use crate::ids::{ClusterId, OperationId};
use crate::model::*;

/// The version `channel` is on `today`: for `rapid` the newest one not
/// past its end of life, for `regular` the default, for `stable` the one a
/// minor before the default (the default when there is none).
pub fn channel_version(catalog: &Catalog, channel: ReleaseChannel, today: NaiveDate) -> Option<String> {
    let supported = || catalog.kubernetes_versions.iter().filter(|v| v.end_of_life >= today);
    let default = catalog.default_kubernetes_version();
    let pick = match channel {
        ReleaseChannel::None => None,
        ReleaseChannel::Rapid => supported().max_by_key(|v| minor(&v.version)),
        ReleaseChannel::Regular => supported().find(|v| v.default),
        ReleaseChannel::Stable => {
            let before = minor(&default.version).map(|(major, minor)| (major, minor.saturating_sub(1)));
            supported().find(|v| minor(&v.version) == before).or_else(|| supported().find(|v| v.default))
        }
    };
    pick.map(|v| v.version.clone())
}

/// The upgrade `spec` gets on its own on `today`, if any: to the next minor
/// version, when its version is past its end of life (through versions
/// past theirs too, one minor at a time) or its channel is on a newer one.
pub fn due(catalog: &Catalog, spec: &ClusterSpec, today: NaiveDate) -> Option<(String, AutomaticUpgradeReason)> {
    let offered = upgrades(catalog, &spec.kubernetes_version, today);
    if offered.current.support == VersionSupport::EndOfLife {
        let next = minor(&spec.kubernetes_version).map(|(major, minor)| (major, minor + 1))?;
        let entry = catalog.kubernetes_versions.iter().find(|v| minor(&v.version) == Some(next))?;
        return Some((entry.version.clone(), AutomaticUpgradeReason::EndOfLife));
    }
    let next = offered.available.first()?.version.clone();
    let channel = channel_version(catalog, spec.release_channel, today)?;
    (minor(&channel) > minor(&spec.kubernetes_version)).then_some((next, AutomaticUpgradeReason::ReleaseChannel))
}

/// Days past a version's end of life during which maintenance exclusions
/// still hold its upgrade; after them only the window does, so no cluster
/// stays on an unsupported version for good.
pub const END_OF_LIFE_EXCLUSION_DAYS: i64 = 30;

/// Days a notice counts beyond the notice period: an upgrade held longer
/// (by exclusions, a silent region) is told of again before it starts.
pub const NOTICE_VALID_DAYS: i64 = 60;

/// The last day on which maintenance exclusions hold an upgrade for
/// `reason`: none for a channel's, 30 days past the version's end of life
/// for an end-of-life one (none at all for a version no longer in the catalog).
fn exclusions_until(catalog: &Catalog, spec: &ClusterSpec, reason: AutomaticUpgradeReason) -> Option<NaiveDate> {
    match reason {
        AutomaticUpgradeReason::ReleaseChannel => None,
        AutomaticUpgradeReason::EndOfLife => Some(
            catalog
                .kubernetes_version(&spec.kubernetes_version)
                .map_or(NaiveDate::MIN, |v| v.end_of_life + Duration::days(END_OF_LIFE_EXCLUSION_DAYS)),
        ),
    }
}

/// When a cluster may be upgraded on its own: its weekly window, its
/// exclusions, and the last day those hold the upgrade.
pub struct Schedule<'a> {
    pub window: Option<&'a MaintenanceWindow>,
    pub exclusions: &'a [MaintenanceExclusion],
    pub exclusions_until: Option<NaiveDate>,
}

impl<'a> Schedule<'a> {
    fn of(catalog: &Catalog, spec: &'a ClusterSpec, reason: AutomaticUpgradeReason) -> Self {
        Schedule {
            window: spec.maintenance_window.as_ref(),
            exclusions: &spec.maintenance_exclusions,
            exclusions_until: exclusions_until(catalog, spec, reason),
        }
    }
}

/// The start of the last occurrence of `window` at or before `at`.
fn last_window_start(window: &MaintenanceWindow, at: DateTime<Utc>) -> Option<DateTime<Utc>> {
    let day = WEEKDAYS.iter().position(|d| *d == window.day)? as i64;
    let time = NaiveTime::parse_from_str(&window.start_time, "%H:%M").ok()?;
    let monday = at.date_naive() - Duration::days(at.weekday().num_days_from_monday() as i64);
    let this_week = (monday + Duration::days(day)).and_time(time).and_utc();
    Some(if this_week <= at { this_week } else { this_week - Duration::weeks(1) })
}

/// The last day of the exclusions holding `at`'s day, if any.
fn excluded_until(schedule: &Schedule<'_>, at: DateTime<Utc>) -> Option<NaiveDate> {
    let day = at.date_naive();
    if schedule.exclusions_until.is_some_and(|until| day > until) {
        return None;
    }
    let end =
        schedule.exclusions.iter().filter(|e| e.start_date <= day && day <= e.end_date).map(|e| e.end_date).max()?;
    Some(schedule.exclusions_until.map_or(end, |until| end.min(until)))
}

/// The first time at or after `from` that lies inside the maintenance
/// window (any time without one) and on no day of an exclusion that
/// holds; none within a year.
pub fn earliest_start(schedule: &Schedule<'_>, from: DateTime<Utc>) -> Option<DateTime<Utc>> {
    let horizon = from + Duration::days(366);
    let mut at = from;
    while at <= horizon {
        if let Some(window) = schedule.window {
            let start = last_window_start(window, at)?;
            if at >= start + Duration::hours(window.duration_hours) {
                at = start + Duration::weeks(1);
                continue;
            }
        }
        match excluded_until(schedule, at) {
            Some(end) => at = (end + Duration::days(1)).and_time(NaiveTime::MIN).and_utc(),
            None => return Some(at),
        }
    }
    None
}

/// Whether `at` lies outside the cluster's maintenance window or on a
/// day one of its exclusions covers (never, for a cluster with neither).
pub fn outside_window(spec: &ClusterSpec, at: DateTime<Utc>) -> bool {
    let schedule = Schedule {
        window: spec.maintenance_window.as_ref(),
        exclusions: &spec.maintenance_exclusions,
        exclusions_until: None,
    };
    earliest_start(&schedule, at) != Some(at)
}

/// What one round of [`App::run_automatic_upgrades`] did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct AutomaticUpgradeRound {
    /// Clusters whose owners were told of an upgrade.
    pub noticed: usize,
    /// Upgrades started.
    pub started: usize,
    /// Upgrades whose end the owners were told of.
    pub finished: usize,
}

impl App {
    /// The automatic upgrade `spec` is due, with when its owners were told
    /// and when it may start (`now` on).
    pub(in crate::app) async fn automatic_upgrade(
        &self,
        conn: &mut sqlx::PgConnection,
        cluster: uuid::Uuid,
        spec: &ClusterSpec,
        now: DateTime<Utc>,
    ) -> Result<Option<AutomaticUpgrade>> {
        let catalog = &self.config().catalog;
        let Some((version, reason)) = due(catalog, spec, now.date_naive()) else {
            return Ok(None);
        };
        let notice = notices::find(conn, cluster, &version).await?.filter(|n| self.notice_counts(n, reason, now));
        let schedule = Schedule::of(catalog, spec, reason);
        let earliest = notice
            .as_ref()
            .filter(|n| n.operation_id.is_none())
            .and_then(|n| earliest_start(&schedule, now.max(n.noticed_at + self.notice_period())));
        Ok(Some(AutomaticUpgrade {
            kubernetes_version: version,
            reason,
            noticed_at: notice.as_ref().map(|n| n.noticed_at),
            earliest_start: earliest,
            operation_id: notice.and_then(|n| n.operation_id).map(OperationId::from_uuid),
        }))
    }

    fn notice_period(&self) -> Duration {
        Duration::hours(self.config().lifecycle.auto_upgrade_notice_hours.into())
    }

    /// Whether `notice` still tells of the upgrade due for `reason` at
    /// `now`: it was for that reason, and it started that upgrade (until it
    /// failed and was told of) or is recent enough.
    fn notice_counts(&self, notice: &NoticeRow, reason: AutomaticUpgradeReason, now: DateTime<Utc>) -> bool {
        match notice.operation_id {
            Some(_) => {
                notice.operation_status.as_deref() != Some(OperationStatus::Failed.as_str())
                    || notice.finish_told_at.is_none()
            }
            // A notice of a channel's upgrade does not tell of an end-of-life one
            // (the owners may have left the channel since); the other way it does.
            None => {
                (notice.reason == reason.as_str() || reason == AutomaticUpgradeReason::ReleaseChannel)
                    && now <= notice.noticed_at + self.notice_period() + Duration::days(NOTICE_VALID_DAYS)
            }
        }
    }

    /// One round of automatic upgrades as of `now` (the database's clock
    /// when `None`): owners told of upgrades newly due, upgrades whose time
    /// has come started, owners told of those that ended. One gateway at a
    /// time runs a round; each cluster in its own transaction, and one
    /// failing is logged and skipped.
    pub async fn run_automatic_upgrades(&self, now: Option<DateTime<Utc>>) -> Result<AutomaticUpgradeRound> {
        // The lock's transaction reads no table: it holds no lock a migration could queue behind.
        let mut round_lock = self.db().begin().await?;
        if !notices::claim_round(&mut round_lock).await? {
            return Ok(AutomaticUpgradeRound::default());
        }
        let mut conn = self.db().acquire().await?;
        let today = match now {
            Some(now) => now,
            None => notices::now(&mut conn).await?,
        }
        .date_naive();
        let catalog = &self.config().catalog;
        let supported: Vec<String> =
            catalog.kubernetes_versions.iter().filter(|v| v.end_of_life >= today).map(|v| v.version.clone()).collect();
        let fresh = self.config().outbox.region_stale_after_seconds.max(1) as f64;
        let candidates = notices::candidates(&mut conn, &supported, fresh).await?;
        drop(conn);
        let mut round = AutomaticUpgradeRound::default();
        for candidate in candidates {
            let stored: ClusterSpecStored = match jsonb::from_column("spec", &candidate.spec) {
                Ok(stored) => stored,
                Err(error) => {
                    tracing::warn!(cluster = %ClusterId::from_uuid(candidate.id), %error, "cluster spec unreadable");
                    continue;
                }
            };
            if due(catalog, &ClusterSpec::from(stored), today).is_none() {
                continue;
            }
            match self.advance_automatic_upgrade(candidate.id, now).await {
                Ok(Step::Noticed) => round.noticed += 1,
                Ok(Step::Started) => round.started += 1,
                Ok(Step::Waiting) => {}
                Err(error) => {
                    tracing::warn!(cluster = %ClusterId::from_uuid(candidate.id), %error, "automatic upgrade skipped")
                }
            }
        }
        round.finished = self.tell_ended_automatic_upgrades().await?;
        round_lock.commit().await?;
        Ok(round)
    }

    /// Tells the owners of an upgrade newly due, or starts one whose time
    /// has come, under the cluster's lock and as of `now` (the database's
    /// clock when `None`), from the cluster as it is then.
    async fn advance_automatic_upgrade(&self, cluster: uuid::Uuid, now: Option<DateTime<Utc>>) -> Result<Step> {
        let mut tx = self.db().begin().await?;
        let now = match now {
            Some(now) => now,
            None => notices::now(&mut tx).await?,
        };
        let row = find_by_id(&mut tx, cluster).await?;
        let spec = row.spec()?;
        let catalog = &self.config().catalog;
        let Some((version, reason)) = due(catalog, &spec, now.date_naive()) else {
            return Ok(Step::Waiting);
        };
        // Only a cluster that runs as asked: not being created, deleted,
        // restored or left behind by a failed change.
        let observed = super::observed(&row.status, row.observed_generation, row.observed_at, false)?;
        if row.deletion_requested_at.is_some()
            || observed.phase != "running"
            || row.observed_generation < row.generation
            || upgrade_running(&mut tx, cluster).await?
        {
            return Ok(Step::Waiting);
        }
        let notice = match notices::find(&mut tx, cluster, &version).await? {
            Some(notice) if self.notice_counts(&notice, reason, now) => Some(notice),
            Some(_) => {
                notices::delete(&mut tx, cluster, &version).await?;
                None
            }
            None => None,
        };
        let schedule = Schedule::of(catalog, &spec, reason);
        let Some(notice) = notice else {
            notices::insert(&mut tx, cluster, &version, reason.as_str(), now).await?;
            let starts = earliest_start(&schedule, now + self.notice_period());
            self.tell_upgrade_due(&mut tx, &row, &spec, (&version, reason), starts).await?;
            tx.commit().await?;
            return Ok(Step::Noticed);
        };
        let from = now.max(notice.noticed_at + self.notice_period());
        if notice.operation_id.is_some() || earliest_start(&schedule, from) != Some(now) {
            return Ok(Step::Waiting);
        }
        let mut next = spec.clone();
        next.kubernetes_version = version.clone();
        let change = SpecWrite {
            current: &spec,
            spec: next,
            labels: None,
            kind: ChangeKind::ClusterUpgrade,
            action: "cluster.auto_upgrade",
            details: json!({
                "kubernetes_version": version,
                "reason": reason.as_str(),
                "noticed_at": notice.noticed_at,
            }),
        };
        let op = self.write_cluster_spec(&mut tx, &RequestContext::system(row.org_id), &row, change).await?;
        if !notices::mark_started(&mut tx, cluster, &version, op.id.uuid()).await? {
            return Err(Error::conflict("already_started", "another round started this upgrade"));
        }
        tx.commit().await?;
        Ok(Step::Started)
    }

    /// The `cluster.upgrade_available` event and the owners' mail.
    async fn tell_upgrade_due(
        &self,
        tx: &mut sqlx::PgConnection,
        row: &super::ClusterRow,
        spec: &ClusterSpec,
        (version, reason): (&str, AutomaticUpgradeReason),
        starts: Option<DateTime<Utc>>,
    ) -> Result<()> {
        let event = json!({
            "cluster": { "id": ClusterId::from_uuid(row.id), "name": row.name,
                         "project_id": crate::ids::ProjectId::from_uuid(row.project_id) },
            "kubernetes_version": spec.kubernetes_version,
            "upgrade_to": version,
            "reason": reason.as_str(),
            "earliest_start": starts,
        });
        crate::app::integrations::store::webhooks::emit_event(&mut *tx, row.org_id, "cluster.upgrade_available", event)
            .await?;
        let subject = format!("Moke: cluster {} will be upgraded to Kubernetes {version}", row.name);
        let why = match reason {
            AutomaticUpgradeReason::ReleaseChannel => format!("its release channel is on {version}"),
            AutomaticUpgradeReason::EndOfLife => {
                format!("Kubernetes {} is past its end of life", spec.kubernetes_version)
            }
        };
        let when = match starts {
            Some(at) => format!("It will start no sooner than {} UTC", at.format("%Y-%m-%d %H:%M")),
            None => "It will start at the first maintenance window outside its exclusions".to_string(),
        };
        let body = format!(
            "The cluster {} runs Kubernetes {}, and {why}. {when}, inside its maintenance window (any time \
             without one) and never on a day of a maintenance exclusion. To choose the time, upgrade it \
             yourself before then, or change its maintenance window or exclusions.\n",
            row.name, spec.kubernetes_version
        );
        self.mail_owners(tx, row.org_id, &subject, &body).await
    }

    /// Mails the owners how automatic upgrades ended (the event went out
    /// with the Operation's end), each in its own transaction.
    async fn tell_ended_automatic_upgrades(&self) -> Result<usize> {
        let mut conn = self.db().acquire().await?;
        let ended = notices::ended_untold(&mut conn).await?;
        drop(conn);
        let mut told = 0;
        for upgrade in &ended {
            let mut tx = self.db().begin().await?;
            if !notices::mark_told(&mut tx, upgrade.cluster_id, &upgrade.kubernetes_version).await? {
                continue;
            }
            let (name, version) = (&upgrade.cluster_name, &upgrade.kubernetes_version);
            let (subject, outcome) = if upgrade.status == "succeeded" {
                (format!("Moke: cluster {name} now runs Kubernetes {version}"), "finished".to_string())
            } else {
                let why = upgrade.error.as_ref().and_then(|e| e["message"].as_str()).unwrap_or("no reason given");
                (
                    format!("Moke: the upgrade of cluster {name} failed"),
                    format!(
                        "failed ({why}). Once the cause is fixed, start the upgrade from the cluster's page; if it \
                         was cancelled, the owners are told again before another automatic try"
                    ),
                )
            };
            let body = format!(
                "The automatic upgrade of cluster {name} to Kubernetes {version} {outcome}. Its Operation and \
                 steps are on the cluster's page.\n"
            );
            self.mail_owners(&mut tx, upgrade.org_id, &subject, &body).await?;
            tx.commit().await?;
            told += 1;
        }
        Ok(told)
    }
}

impl App {
    /// Mails `org`'s owners about an automatic upgrade, while the
    /// organization is under [`UPGRADE_MAILS_PER_DAY`] (the events still go
    /// out): a catalog change makes many clusters due at once.
    async fn mail_owners(&self, tx: &mut sqlx::PgConnection, org: uuid::Uuid, subject: &str, body: &str) -> Result<()> {
        if mail::queued_today(&mut *tx, org, UPGRADE_MAIL).await? >= UPGRADE_MAILS_PER_DAY {
            return Ok(());
        }
        // The body names the organization: one person may own several.
        let org_name = mail::quoted(&crate::app::iam::members::org_display_name(&mut *tx, org).await?);
        let body = format!("Organization: {org_name}\n\n{body}");
        for to in crate::app::iam::members::owner_contacts(&mut *tx, org).await? {
            let mail = Mail { kind: UPGRADE_MAIL, to: &to, subject, body: &body, org: Some(org) };
            mail::enqueue(&mut *tx, self, mail).await?;
        }
        Ok(())
    }
}

/// The kind of the mails about automatic upgrades.
const UPGRADE_MAIL: &str = "cluster_upgrade";
/// Mails about automatic upgrades queued for an organization in a day
/// before no more are (the events are not capped).
pub const UPGRADE_MAILS_PER_DAY: i64 = 50;

/// What [`App::advance_automatic_upgrade`] did for one cluster.
enum Step {
    Noticed,
    Started,
    Waiting,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(text).unwrap().to_utc()
    }

    fn date(text: &str) -> NaiveDate {
        text.parse().unwrap()
    }

    /// A schedule whose exclusions always hold.
    fn plain<'a>(window: Option<&'a MaintenanceWindow>, exclusions: &'a [MaintenanceExclusion]) -> Schedule<'a> {
        Schedule { window, exclusions, exclusions_until: None }
    }

    #[test]
    fn channels_pick_their_versions() {
        let mut catalog = crate::config::Config::defaults().catalog;
        let today = date("2026-12-05");
        assert_eq!(channel_version(&catalog, ReleaseChannel::Regular, today).as_deref(), Some("1.33"));
        assert_eq!(channel_version(&catalog, ReleaseChannel::Stable, today).as_deref(), Some("1.32"));
        assert_eq!(channel_version(&catalog, ReleaseChannel::Rapid, today).as_deref(), Some("1.33"));
        assert_eq!(channel_version(&catalog, ReleaseChannel::None, today), None);
        catalog.kubernetes_versions.push(crate::config::KubernetesVersionEntry {
            version: "1.34".into(),
            default: false,
            end_of_life: date("2028-02-28"),
        });
        assert_eq!(channel_version(&catalog, ReleaseChannel::Rapid, today).as_deref(), Some("1.34"));
        // Once 1.32 is past its end of life, stable moves to the default.
        assert_eq!(channel_version(&catalog, ReleaseChannel::Stable, date("2027-03-01")).as_deref(), Some("1.33"));
    }

    #[test]
    fn what_is_due_and_why() {
        let catalog = crate::config::Config::defaults().catalog;
        let spec = |version: &str, channel| ClusterSpec {
            kubernetes_version: version.into(),
            release_channel: channel,
            ..crate::app::validate::cluster_create(
                &catalog,
                &serde_json::from_value(json!({ "name": "c", "spec": { "region": "eu-central-1" } })).unwrap(),
            )
            .unwrap()
        };
        let today = date("2026-12-05");
        assert_eq!(due(&catalog, &spec("1.32", ReleaseChannel::None), today), None, "manual");
        assert_eq!(
            due(&catalog, &spec("1.32", ReleaseChannel::Regular), today),
            Some(("1.33".into(), AutomaticUpgradeReason::ReleaseChannel))
        );
        assert_eq!(due(&catalog, &spec("1.32", ReleaseChannel::Stable), today), None, "stable is on 1.32");
        assert_eq!(
            due(&catalog, &spec("1.31", ReleaseChannel::None), today),
            Some(("1.32".into(), AutomaticUpgradeReason::EndOfLife)),
            "past its end of life, whatever the channel"
        );
        assert_eq!(due(&catalog, &spec("1.33", ReleaseChannel::Rapid), today), None, "nothing newer");
        // Two minors behind, both past their end of life: still a step at a time.
        let later = date("2027-03-15");
        assert_eq!(
            due(&catalog, &spec("1.31", ReleaseChannel::None), later),
            Some(("1.32".into(), AutomaticUpgradeReason::EndOfLife))
        );
        // Exclusions hold an end-of-life upgrade only until 30 days after the end of life.
        let mut held = spec("1.31", ReleaseChannel::None);
        held.maintenance_exclusions = vec![MaintenanceExclusion {
            name: "x".into(),
            start_date: date("2026-11-01"),
            end_date: date("2027-01-29"),
        }];
        let eol = Schedule::of(&catalog, &held, AutomaticUpgradeReason::EndOfLife);
        assert_eq!(
            earliest_start(&eol, at("2026-11-20T10:00:00Z")),
            Some(at("2026-11-28T00:00:00Z")),
            "1.31 ended 10-28"
        );
        let channel = Schedule::of(&catalog, &held, AutomaticUpgradeReason::ReleaseChannel);
        assert_eq!(earliest_start(&channel, at("2026-11-20T10:00:00Z")), Some(at("2027-01-30T00:00:00Z")));
    }

    #[test]
    fn upgrades_start_inside_the_window_and_outside_exclusions() {
        let window = MaintenanceWindow { day: "saturday".into(), start_time: "02:00".into(), duration_hours: 4 };
        // 2027-01-04 is a Monday: the next window is Saturday the 9th.
        let monday = at("2027-01-04T10:00:00Z");
        assert_eq!(earliest_start(&plain(Some(&window), &[]), monday), Some(at("2027-01-09T02:00:00Z")));
        assert_eq!(
            earliest_start(&plain(Some(&window), &[]), at("2027-01-09T03:30:00Z")),
            Some(at("2027-01-09T03:30:00Z"))
        );
        assert_eq!(
            earliest_start(&plain(Some(&window), &[]), at("2027-01-09T06:00:00Z")),
            Some(at("2027-01-16T02:00:00Z"))
        );
        let peak =
            MaintenanceExclusion { name: "peak".into(), start_date: date("2027-01-08"), end_date: date("2027-01-10") };
        assert_eq!(
            earliest_start(&plain(Some(&window), std::slice::from_ref(&peak)), monday),
            Some(at("2027-01-16T02:00:00Z")),
            "the window on an excluded day is skipped"
        );
        assert_eq!(earliest_start(&plain(None, std::slice::from_ref(&peak)), monday), Some(monday), "no window: now");
        assert_eq!(
            earliest_start(&plain(None, std::slice::from_ref(&peak)), at("2027-01-09T12:00:00Z")),
            Some(at("2027-01-11T00:00:00Z")),
            "the day after the exclusion"
        );
        // A window that runs past midnight into an excluded day stops there.
        let late = MaintenanceWindow { day: "friday".into(), start_time: "22:00".into(), duration_hours: 6 };
        assert_eq!(
            earliest_start(&plain(Some(&late), std::slice::from_ref(&peak)), at("2027-01-07T23:00:00Z")),
            Some(at("2027-01-15T22:00:00Z"))
        );
        let mut year = Vec::new();
        for i in 0..5 {
            let start = date("2027-01-01") + Duration::days(90 * i);
            year.push(MaintenanceExclusion {
                name: format!("x{i}"),
                start_date: start,
                end_date: start + Duration::days(89),
            });
        }
        assert_eq!(earliest_start(&plain(None, &year), monday), None, "no time within a year");
    }
}
