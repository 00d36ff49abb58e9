//! Outgoing e-mail through a transactional outbox: a message is stored in
//! the transaction that causes it (sign-up, password reset, invitation) and
//! sent at least once by the mail relay through a [`MailSender`]. Each stored
//! message carries everything an SMTP sender needs (From, To, Subject,
//! Message-ID, Date, a text body).

use std::future::Future;
use std::time::Duration;

use serde_json::json;
use sqlx::PgConnection;

use super::{App, Result};

/// A message as stored and sent.
#[derive(Debug, Clone)]
pub struct MailMessage {
    pub id: i64,
    pub kind: String,
    pub to: String,
    pub from: String,
    pub subject: String,
    pub text_body: String,
    pub headers: serde_json::Value,
}

/// Something that sends mail. Sending must tolerate duplicates (the relay
/// delivers at least once); `Message-ID` lets receivers drop them.
pub trait MailSender: Send + Sync {
    fn send(&self, message: &MailMessage) -> impl Future<Output = anyhow::Result<()>> + Send;
}

/// Writes messages to the log: the development sender.
pub struct LogMailSender;

impl MailSender for LogMailSender {
    async fn send(&self, message: &MailMessage) -> anyhow::Result<()> {
        tracing::info!(
            kind = %message.kind, to = %message.to, from = %message.from, subject = %message.subject,
            message_id = %message.headers["Message-ID"].as_str().unwrap_or_default(),
            "mail (log sender):\n{}", message.text_body
        );
        Ok(())
    }
}

/// Stores a message in the caller's transaction.
pub async fn enqueue(tx: &mut PgConnection, app: &App, kind: &str, to: &str, subject: &str, body: &str) -> Result<()> {
    let message_id = format!("<{}@moke>", uuid::Uuid::now_v7());
    let headers = json!({
        "Message-ID": message_id,
        "Date": chrono::Utc::now().to_rfc2822(),
        "Content-Type": "text/plain; charset=utf-8",
        "Auto-Submitted": "auto-generated",
    });
    sqlx::query!(
        "INSERT INTO mail_outbox (kind, to_address, from_address, subject, text_body, headers)
         VALUES ($1, $2, $3, $4, $5, $6)",
        kind,
        to,
        app.config().mail.from,
        subject,
        body,
        headers,
    )
    .execute(tx)
    .await?;
    Ok(())
}

impl App {
    /// Sends up to `outbox.batch_size` due messages; failures are retried
    /// with exponential backoff. Returns how many were sent.
    pub async fn relay_mail_once(&self, sender: &impl MailSender) -> Result<usize> {
        let config = &self.config().outbox;
        let mut tx = self.db().begin().await?;
        let rows = sqlx::query!(
            "SELECT id, kind, to_address, from_address, subject, text_body, headers, attempts
             FROM mail_outbox WHERE sent_at IS NULL AND available_at <= now()
             ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED",
            i64::from(config.batch_size),
        )
        .fetch_all(&mut *tx)
        .await?;
        let mut sent = 0;
        for row in rows {
            let message = MailMessage {
                id: row.id,
                kind: row.kind,
                to: row.to_address,
                from: row.from_address,
                subject: row.subject,
                text_body: row.text_body,
                headers: row.headers,
            };
            match sender.send(&message).await {
                Ok(()) => {
                    sqlx::query!("UPDATE mail_outbox SET sent_at = now() WHERE id = $1", message.id)
                        .execute(&mut *tx)
                        .await?;
                    sent += 1;
                }
                Err(error) => {
                    let backoff =
                        super::outbox::retry_delay(row.attempts, config.retry_base_seconds, config.retry_max_seconds);
                    tracing::warn!(mail_id = message.id, error = %error, "sending mail failed; will retry");
                    sqlx::query!(
                        "UPDATE mail_outbox SET attempts = attempts + 1, last_error = $2,
                             available_at = now() + make_interval(secs => $3) WHERE id = $1",
                        message.id,
                        format!("{error:#}"),
                        backoff.as_secs_f64(),
                    )
                    .execute(&mut *tx)
                    .await?;
                }
            }
        }
        tx.commit().await?;
        Ok(sent)
    }
}

/// Runs the mail relay with the configured sender until shutdown.
pub async fn run_relay(app: std::sync::Arc<App>) {
    let sender = LogMailSender;
    loop {
        match app.relay_mail_once(&sender).await {
            Ok(n) if n > 0 => continue,
            Ok(_) => {}
            Err(error) => tracing::warn!(%error, "mail relay failed"),
        }
        tokio::select! {
            _ = app.shutdown_token().cancelled() => return,
            _ = tokio::time::sleep(Duration::from_secs(1)) => {}
        }
    }
}
