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
/// version, when its version is past its end of life or its channel is on
/// a newer one.
pub fn due(catalog: &Catalog, spec: &ClusterSpec, today: NaiveDate) -> Option<(String, AutomaticUpgradeReason)> {
    let offered = upgrades(catalog, &spec.kubernetes_version, today);
    let next = offered.available.first()?.version.clone();
    if offered.current.support == VersionSupport::EndOfLife {
        return Some((next, AutomaticUpgradeReason::EndOfLife));
    }
    let channel = channel_version(catalog, spec.release_channel, today)?;
    (minor(&channel) > minor(&spec.kubernetes_version)).then_some((next, AutomaticUpgradeReason::ReleaseChannel))
}

/// The start of the last occurrence of `window` at or before `at`.
fn last_window_start(window: &MaintenanceWindow, at: DateTime<Utc>) -> Option<DateTime<Utc>> {
    let day = WEEKDAYS.iter().position(|d| *d == window.day)? as i64;
    let time = NaiveTime::parse_from_str(&window.start_time, "%H:%M").ok()?;
    let monday = at.date_naive() - Duration::days(at.weekday().num_days_from_monday() as i64);
    let this_week = (monday + Duration::days(day)).and_time(time).and_utc();
    Some(if this_week <= at { this_week } else { this_week - Duration::weeks(1) })
}

/// The exclusion covering `at`'s day, if any.
fn exclusion_on(exclusions: &[MaintenanceExclusion], at: DateTime<Utc>) -> Option<&MaintenanceExclusion> {
    let day = at.date_naive();
    exclusions.iter().filter(|e| e.start_date <= day && day <= e.end_date).max_by_key(|e| e.end_date)
}

/// The first time at or after `from` that lies inside the maintenance
/// window (any time without one) and on no day of an exclusion; none
/// within a year.
pub fn earliest_start(
    window: Option<&MaintenanceWindow>,
    exclusions: &[MaintenanceExclusion],
    from: DateTime<Utc>,
) -> Option<DateTime<Utc>> {
    let horizon = from + Duration::days(366);
    let mut at = from;
    while at <= horizon {
        if let Some(window) = window {
            let start = last_window_start(window, at)?;
            if at >= start + Duration::hours(window.duration_hours) {
                at = start + Duration::weeks(1);
                continue;
            }
        }
        match exclusion_on(exclusions, at) {
            Some(exclusion) => at = (exclusion.end_date + Duration::days(1)).and_time(NaiveTime::MIN).and_utc(),
            None => return Some(at),
        }
    }
    None
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
        let Some((version, reason)) = due(&self.config().catalog, spec, now.date_naive()) else {
            return Ok(None);
        };
        let notice = notices::find(conn, cluster, &version).await?;
        let earliest = notice.as_ref().and_then(|n| {
            let from = now.max(n.noticed_at + self.notice_period());
            earliest_start(spec.maintenance_window.as_ref(), &spec.maintenance_exclusions, from)
        });
        Ok(Some(AutomaticUpgrade {
            kubernetes_version: version,
            reason,
            noticed_at: notice.as_ref().map(|n| n.noticed_at),
            earliest_start: earliest.filter(|_| notice.as_ref().is_some_and(|n| n.operation_id.is_none())),
            operation_id: notice.and_then(|n| n.operation_id).map(OperationId::from_uuid),
        }))
    }

    fn notice_period(&self) -> Duration {
        Duration::hours(self.config().lifecycle.auto_upgrade_notice_hours.into())
    }

    /// One round of automatic upgrades as of `now` (the database's clock
    /// when `None`): owners told of upgrades newly due, upgrades whose time
    /// has come started, owners told of those that ended. Each cluster in
    /// its own transaction; one failing is logged and skipped.
    pub async fn run_automatic_upgrades(&self, now: Option<DateTime<Utc>>) -> Result<AutomaticUpgradeRound> {
        let mut conn = self.db().acquire().await?;
        let now = match now {
            Some(now) => now,
            None => notices::now(&mut conn).await?,
        };
        let catalog = &self.config().catalog;
        let today = now.date_naive();
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
            let spec = ClusterSpec::from(stored);
            let Some((version, reason)) = due(catalog, &spec, today) else { continue };
            match self.advance_automatic_upgrade(candidate.id, candidate.org_id, &version, reason, now).await {
                Ok(Step::Noticed) => round.noticed += 1,
                Ok(Step::Started) => round.started += 1,
                Ok(Step::Waiting) => {}
                Err(error) => {
                    tracing::warn!(cluster = %ClusterId::from_uuid(candidate.id), %error, "automatic upgrade skipped")
                }
            }
        }
        round.finished = self.tell_ended_automatic_upgrades().await?;
        Ok(round)
    }

    /// Tells the owners of an upgrade newly due, or starts one whose time
    /// has come, under the cluster's lock.
    async fn advance_automatic_upgrade(
        &self,
        cluster: uuid::Uuid,
        org: uuid::Uuid,
        version: &str,
        reason: AutomaticUpgradeReason,
        now: DateTime<Utc>,
    ) -> Result<Step> {
        let mut tx = self.db().begin().await?;
        let row = find_by_id(&mut tx, cluster).await?;
        let spec = row.spec()?;
        // Read again under the lock: a PATCH or an upgrade may have come first.
        if row.deletion_requested_at.is_some() || due(&self.config().catalog, &spec, now.date_naive()).is_none() {
            return Ok(Step::Waiting);
        }
        let reason_text = match reason {
            AutomaticUpgradeReason::ReleaseChannel => "release_channel",
            AutomaticUpgradeReason::EndOfLife => "end_of_life",
        };
        let Some(NoticeRow { noticed_at, operation_id }) = notices::find(&mut tx, cluster, version).await? else {
            notices::insert(&mut tx, cluster, version, reason_text, now).await?;
            let starts = earliest_start(
                spec.maintenance_window.as_ref(),
                &spec.maintenance_exclusions,
                now + self.notice_period(),
            );
            let event = json!({
                "cluster": { "id": ClusterId::from_uuid(cluster), "name": row.name,
                             "project_id": crate::ids::ProjectId::from_uuid(row.project_id) },
                "kubernetes_version": spec.kubernetes_version,
                "upgrade_to": version,
                "reason": reason_text,
                "earliest_start": starts,
            });
            crate::app::integrations::store::webhooks::emit_event(&mut tx, org, "cluster.upgrade_available", event)
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
                "The cluster {} runs Kubernetes {}, and {why}. {when}, inside its maintenance window \
                 and never on a day of a maintenance exclusion. To choose the time, upgrade it yourself \
                 before then, or change its maintenance window or exclusions.\n",
                row.name, spec.kubernetes_version
            );
            for to in crate::app::iam::members::owner_contacts(&mut tx, org).await? {
                let mail = Mail { kind: "cluster_upgrade", to: &to, subject: &subject, body: &body, org: Some(org) };
                mail::enqueue(&mut tx, self, mail).await?;
            }
            tx.commit().await?;
            return Ok(Step::Noticed);
        };
        let window = spec.maintenance_window.as_ref();
        let start = earliest_start(window, &spec.maintenance_exclusions, now.max(noticed_at + self.notice_period()));
        if operation_id.is_some() || start != Some(now) || upgrade_running(&mut tx, cluster).await? {
            return Ok(Step::Waiting);
        }
        let mut next = spec.clone();
        next.kubernetes_version = version.to_string();
        let change = SpecWrite {
            current: &spec,
            spec: next,
            labels: None,
            kind: ChangeKind::ClusterUpgrade,
            action: "cluster.auto_upgrade",
            details: json!({ "kubernetes_version": version, "reason": reason_text, "noticed_at": noticed_at }),
        };
        let ctx = RequestContext::system(org);
        let op = self.write_cluster_spec(&mut tx, &ctx, &row, change).await?;
        if !notices::mark_started(&mut tx, cluster, version, op.id.uuid()).await? {
            return Err(Error::conflict("already_started", "another gateway started this upgrade"));
        }
        tx.commit().await?;
        Ok(Step::Started)
    }

    /// Mails the owners how automatic upgrades ended (the event went out
    /// with the Operation's end).
    async fn tell_ended_automatic_upgrades(&self) -> Result<usize> {
        let mut tx = self.db().begin().await?;
        let ended = notices::ended_untold(&mut tx).await?;
        for upgrade in &ended {
            let (subject, outcome) = if upgrade.status == "succeeded" {
                (
                    format!(
                        "Moke: cluster {} now runs Kubernetes {}",
                        upgrade.cluster_name, upgrade.kubernetes_version
                    ),
                    "finished".to_string(),
                )
            } else {
                (
                    format!("Moke: the upgrade of cluster {} failed", upgrade.cluster_name),
                    "failed; the cluster keeps its version until it is upgraded again".to_string(),
                )
            };
            let body = format!(
                "The automatic upgrade of cluster {} to Kubernetes {} {outcome}. Its Operation and steps are on \
                 the cluster's page.\n",
                upgrade.cluster_name, upgrade.kubernetes_version
            );
            for to in crate::app::iam::members::owner_contacts(&mut tx, upgrade.org_id).await? {
                let mail = Mail {
                    kind: "cluster_upgrade",
                    to: &to,
                    subject: &subject,
                    body: &body,
                    org: Some(upgrade.org_id),
                };
                mail::enqueue(&mut tx, self, mail).await?;
            }
            notices::mark_told(&mut tx, upgrade.cluster_id, &upgrade.kubernetes_version).await?;
        }
        tx.commit().await?;
        Ok(ended.len())
    }
}

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
    }

    #[test]
    fn upgrades_start_inside_the_window_and_outside_exclusions() {
        let window = MaintenanceWindow { day: "saturday".into(), start_time: "02:00".into(), duration_hours: 4 };
        // 2027-01-04 is a Monday: the next window is Saturday the 9th.
        let monday = at("2027-01-04T10:00:00Z");
        assert_eq!(earliest_start(Some(&window), &[], monday), Some(at("2027-01-09T02:00:00Z")));
        assert_eq!(earliest_start(Some(&window), &[], at("2027-01-09T03:30:00Z")), Some(at("2027-01-09T03:30:00Z")));
        assert_eq!(earliest_start(Some(&window), &[], at("2027-01-09T06:00:00Z")), Some(at("2027-01-16T02:00:00Z")));
        let peak =
            MaintenanceExclusion { name: "peak".into(), start_date: date("2027-01-08"), end_date: date("2027-01-10") };
        assert_eq!(
            earliest_start(Some(&window), std::slice::from_ref(&peak), monday),
            Some(at("2027-01-16T02:00:00Z")),
            "the window on an excluded day is skipped"
        );
        assert_eq!(earliest_start(None, std::slice::from_ref(&peak), monday), Some(monday), "no window: now");
        assert_eq!(
            earliest_start(None, std::slice::from_ref(&peak), at("2027-01-09T12:00:00Z")),
            Some(at("2027-01-11T00:00:00Z")),
            "the day after the exclusion"
        );
        // A window that runs past midnight into an excluded day stops there.
        let late = MaintenanceWindow { day: "friday".into(), start_time: "22:00".into(), duration_hours: 6 };
        assert_eq!(
            earliest_start(Some(&late), std::slice::from_ref(&peak), at("2027-01-07T23:00:00Z")),
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
        assert_eq!(earliest_start(None, &year, monday), None, "no time within a year");
    }
}
