//! The dispatcher: leases due deliveries, sends them signed through the
//! guarded outbound client, records each attempt, retries on the schedule
//! and disables endpoints that keep failing.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use futures::StreamExt;
use serde_json::json;
use uuid::Uuid;

use crate::app::integrations::store::webhooks::{self as store, AttemptRecord, Due};
use crate::app::{App, Result, integrations::signing};
use crate::ids::EventId;

/// How long a dispatcher holds a delivery it is sending.
const LEASE_SECONDS: f64 = 120.0;
/// The delay before attempt `attempt` (1-based: the first retry is 1).
fn backoff(schedule: &[f64], attempt: usize, retry_after: Option<f64>) -> Option<f64> {
    let base = *schedule.get(attempt)?;
    let jitter = 1.0 + (rand::random::<f64>() - 0.5) * 0.4;
    Some((base * jitter).max(retry_after.unwrap_or(0.0)))
}

/// `Retry-After` in seconds (a number of seconds or an HTTP date).
fn retry_after(headers: &http::HeaderMap) -> Option<f64> {
    let value = headers.get(reqwest::header::RETRY_AFTER)?.to_str().ok()?;
    if let Ok(seconds) = value.trim().parse::<f64>() {
        return Some(seconds.max(0.0));
    }
    let at = chrono::DateTime::parse_from_rfc2822(value).ok()?;
    Some(((at.timestamp_millis() - chrono::Utc::now().timestamp_millis()) as f64 / 1000.0).max(0.0))
}

/// How an attempt ended.
struct Attempt {
    status_code: Option<i32>,
    error: Option<String>,
    latency_ms: i32,
    retry_after: Option<f64>,
}

impl App {
    /// Sends the deliveries that are due, up to `webhooks.concurrency` at a
    /// time; returns how many were attempted.
    pub async fn dispatch_webhooks_once(&self) -> Result<usize> {
        let limit = self.config().webhooks.concurrency as i64 * 4;
        let mut conn = self.db().acquire().await?;
        let due = store::lease_due(&mut conn, limit, LEASE_SECONDS).await?;
        drop(conn);
        let count = due.len();
        // An endpoint whose secret cannot be decrypted fails its deliveries
        // alone (a recorded attempt, so the schedule, giving up and
        // disabling apply); an unreachable Vault ends the round. A previous
        // secret still in its grace period signs too; if it alone cannot be
        // decrypted, the current one signs alone.
        let mut secrets: HashMap<Uuid, Option<Vec<String>>> = HashMap::new();
        let mut ready = Vec::with_capacity(due.len());
        let mut unsignable = Vec::new();
        for delivery in due {
            if let std::collections::hash_map::Entry::Vacant(entry) = secrets.entry(delivery.endpoint_id) {
                let secret = match self.vault().decrypt(delivery.org_id, &delivery.secret_enc).await {
                    Ok(secret) => Some(secret),
                    Err(error) if !self.vault().healthy().await => return Err(error.into()),
                    Err(error) => {
                        tracing::warn!(endpoint = %delivery.endpoint_id, %error,
                            "an endpoint secret could not be decrypted; its deliveries fail");
                        None
                    }
                };
                let previous = match (&secret, &delivery.previous_secret_enc) {
                    (Some(_), Some(ciphertext)) => match self.vault().decrypt(delivery.org_id, ciphertext).await {
                        Ok(previous) => Some(previous),
                        Err(error) if !self.vault().healthy().await => return Err(error.into()),
                        Err(error) => {
                            tracing::warn!(endpoint = %delivery.endpoint_id, %error,
                                "an endpoint's previous secret could not be decrypted; the current one signs alone");
                            None
                        }
                    },
                    _ => None,
                };
                entry.insert(secret.map(|current| std::iter::once(current).chain(previous).collect()));
            }
            match secrets.get(&delivery.endpoint_id) {
                Some(Some(signing)) => ready.push((delivery, signing.clone())),
                _ => unsignable.push(delivery),
            }
        }
        for delivery in unsignable {
            let attempt = Attempt {
                status_code: None,
                error: Some("signing_unavailable".into()),
                latency_ms: 0,
                retry_after: None,
            };
            self.record_attempt(&delivery, attempt).await?;
        }
        let results: Vec<Result<()>> = futures::stream::iter(ready)
            .map(|(delivery, secrets)| async move {
                let attempt = self.attempt(&delivery, &secrets).await;
                self.record_attempt(&delivery, attempt).await
            })
            .buffer_unordered(self.config().webhooks.concurrency)
            .collect()
            .await;
        results.into_iter().collect::<Result<Vec<()>>>()?;
        Ok(count)
    }

    /// One POST of a delivery, signed with each of `secrets` (the current
    /// one, then the previous one while it is in its grace period).
    async fn attempt(&self, delivery: &Due, secrets: &[String]) -> Attempt {
        let started = Instant::now();
        let message_id = EventId::from_uuid(delivery.event_id).to_string();
        let body = json!({
            "type": delivery.event_type,
            "timestamp": delivery.created_at,
            "data": delivery.payload,
        })
        .to_string();
        let timestamp = chrono::Utc::now().timestamp();
        let signature = signing::sign_with_each(secrets, &message_id, timestamp, body.as_bytes());
        let request = reqwest::Url::parse(&delivery.url).map_err(|e| e.to_string()).and_then(|url| {
            self.outbound()
                .request(reqwest::Method::POST, url)
                .timeout(Duration::from_secs(self.config().webhooks.timeout_seconds))
                .header("content-type", "application/json")
                .header("webhook-id", &message_id)
                .header("webhook-timestamp", timestamp.to_string())
                .header("webhook-signature", signature)
                .body(body)
                .build()
                .map_err(|e| e.to_string())
        });
        let response = match request {
            Ok(request) => self.outbound().execute(request).await,
            Err(error) => Err(crate::outbound::OutboundError::Build(error)),
        };
        let latency_ms = started.elapsed().as_millis().min(i32::MAX as u128) as i32;
        match response {
            Ok((status, headers, _)) => Attempt {
                status_code: Some(i32::from(status.as_u16())),
                error: None,
                latency_ms,
                retry_after: retry_after(&headers),
            },
            Err(error) => {
                // The detail goes to the log; the customer sees one of a few
                // fixed categories (no probe of what lies behind the URL).
                tracing::info!(delivery = %delivery.id, error = %format!("{error:#}"), "webhook attempt failed");
                let category = crate::outbound::failure_category(&error);
                Attempt { status_code: None, error: Some(category.to_string()), latency_ms, retry_after: None }
            }
        }
    }

    /// Records an attempt and decides what comes next, in one transaction.
    async fn record_attempt(&self, delivery: &Due, attempt: Attempt) -> Result<()> {
        let config = &self.config().webhooks;
        let number = delivery.attempts + 1;
        let succeeded = attempt.status_code.is_some_and(|code| (200..300).contains(&code));
        let gone = attempt.status_code == Some(410);
        let next = if succeeded || gone {
            None
        } else {
            backoff(&config.retry_schedule_seconds, number as usize, attempt.retry_after)
        };
        let status = match (succeeded, next) {
            (true, _) => "succeeded",
            (false, Some(_)) => "pending",
            (false, None) => "failed",
        };
        if status == "failed" && !gone {
            let item = format!("webhook delivery {} to endpoint {}", delivery.id, delivery.endpoint_id);
            crate::background::dead_lettered("webhooks", &item, attempt.error.as_deref().unwrap_or("refused"));
        }
        let mut tx = self.db().begin().await?;
        let record = AttemptRecord {
            delivery: delivery.id,
            number,
            status_code: attempt.status_code,
            error: attempt.error.as_deref(),
            latency_ms: attempt.latency_ms,
            status,
            retry_in_seconds: next.unwrap_or(0.0),
        };
        store::record_attempt(&mut tx, record).await?;
        if succeeded {
            store::clear_failing(&mut tx, delivery.endpoint_id).await?;
        } else {
            let failing_since = store::mark_failing(&mut tx, delivery.endpoint_id).await?;
            let too_long = failing_since
                .is_some_and(|since| (chrono::Utc::now() - since).num_hours() >= config.disable_after_failing_hours);
            let reason = if gone {
                Some("the endpoint answered 410 Gone".to_string())
            } else if too_long {
                Some(format!("deliveries failed for {} hours", config.disable_after_failing_hours))
            } else {
                None
            };
            if let Some(reason) = reason {
                self.disable_endpoint(&mut tx, delivery.org_id, delivery.endpoint_id, &delivery.url, &reason).await?;
            }
        }
        tx.commit().await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_follows_the_schedule_with_jitter_and_retry_after() {
        let schedule = [0.0, 5.0, 300.0];
        for _ in 0..100 {
            let delay = backoff(&schedule, 1, None).unwrap();
            assert!((4.0..=6.0).contains(&delay), "{delay}");
        }
        assert_eq!(backoff(&schedule, 1, Some(60.0)), Some(60.0));
        assert_eq!(backoff(&schedule, 3, None), None, "past the schedule: give up");
    }
}
