//! Outgoing e-mail through a transactional outbox: a message is stored in
//! the transaction that causes it (sign-up, password reset, invitation, an
//! SSO link) and sent at least once by the mail relay through the configured
//! [`MailSender`]. Bodies carry sign-in links and tokens, so a stored body is
//! Vault transit ciphertext until the message is sent, and nothing of it is
//! kept afterwards.
//!
//! Senders: SMTP (`lettre`, production), a folder of `.eml` files (dev), and
//! the log (dev only: it writes links to the log, and says so at start-up).

use std::future::Future;
use std::path::PathBuf;
use std::time::Duration;

use serde_json::json;
use sqlx::PgConnection;
use uuid::Uuid;

use crate::app::{App, Result};

/// A message as sent.
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

impl MailMessage {
    fn message_id(&self) -> &str {
        self.headers["Message-ID"].as_str().unwrap_or_default()
    }

    /// The message as RFC 5322 text (for the file sender).
    fn to_rfc5322(&self) -> String {
        let mut text = format!("From: {}\r\nTo: {}\r\nSubject: {}\r\n", self.from, self.to, self.subject);
        if let Some(headers) = self.headers.as_object() {
            for (name, value) in headers {
                if let Some(value) = value.as_str() {
                    text.push_str(&format!("{name}: {value}\r\n"));
                }
            }
        }
        text.push_str("\r\n");
        text.push_str(&self.text_body.replace('\n', "\r\n"));
        text
    }
}

/// Something that sends mail. Sending must tolerate duplicates (the relay
/// delivers at least once); `Message-ID` lets receivers drop them.
pub trait MailSender: Send + Sync {
    fn send(&self, message: &MailMessage) -> impl Future<Output = anyhow::Result<()>> + Send;
}

/// Writes messages to the log: for development only (links and tokens
/// reach the log).
pub struct LogMailSender;

impl MailSender for LogMailSender {
    async fn send(&self, message: &MailMessage) -> anyhow::Result<()> {
        tracing::info!(
            kind = %message.kind, to = %message.to, from = %message.from, subject = %message.subject,
            message_id = %message.message_id(),
            "mail (log sender, development only):\n{}", message.text_body
        );
        Ok(())
    }
}

/// Writes each message to its own file in a folder: for development and
/// for tests that read what was mailed.
pub struct FileMailSender {
    dir: PathBuf,
}

impl FileMailSender {
    pub fn new(dir: impl Into<PathBuf>) -> FileMailSender {
        FileMailSender { dir: dir.into() }
    }
}

impl MailSender for FileMailSender {
    async fn send(&self, message: &MailMessage) -> anyhow::Result<()> {
        tokio::fs::create_dir_all(&self.dir).await?;
        // One name per message: a duplicate send overwrites the same file.
        let path = self.dir.join(format!("{:012}-{}.eml", message.id, message.kind));
        let partial = path.with_extension("eml.partial");
        tokio::fs::write(&partial, message.to_rfc5322()).await?;
        tokio::fs::rename(&partial, &path).await?;
        tracing::info!(kind = %message.kind, to = %message.to, path = %path.display(), "mail written to a file");
        Ok(())
    }
}

/// Sends through an SMTP server.
pub struct SmtpMailSender {
    transport: lettre::AsyncSmtpTransport<lettre::Tokio1Executor>,
}

impl SmtpMailSender {
    /// From `mail.smtp_url`: `smtp://` (STARTTLS required unless
    /// `?tls=none`), or `smtps://` (TLS from the start).
    pub fn new(url: &str) -> anyhow::Result<SmtpMailSender> {
        let mut parsed = url::Url::parse(url)?;
        if parsed.scheme() == "smtp" {
            let tls = parsed.query_pairs().find(|(k, _)| k == "tls").map(|(_, v)| v.to_string());
            let others: Vec<(String, String)> =
                parsed.query_pairs().filter(|(k, _)| k != "tls").map(|(k, v)| (k.to_string(), v.to_string())).collect();
            parsed.set_query(None);
            let mut query = parsed.query_pairs_mut();
            query.extend_pairs(others);
            match tls.as_deref() {
                // Plain text only when the operator says so.
                Some("none") => {}
                Some(other) => {
                    query.append_pair("tls", other);
                }
                None => {
                    query.append_pair("tls", "required");
                }
            }
        }
        let url = parsed.as_str().trim_end_matches('?').to_string();
        let transport = lettre::AsyncSmtpTransport::<lettre::Tokio1Executor>::from_url(&url)?
            .timeout(Some(Duration::from_secs(30)))
            .build();
        Ok(SmtpMailSender { transport })
    }
}

impl MailSender for SmtpMailSender {
    async fn send(&self, message: &MailMessage) -> anyhow::Result<()> {
        use lettre::AsyncTransport;
        let mut builder = lettre::Message::builder()
            .from(message.from.parse()?)
            .to(message.to.parse()?)
            .subject(&message.subject)
            .message_id(Some(message.message_id().to_string()))
            .header(lettre::message::header::ContentType::TEXT_PLAIN);
        if let Some(date) = message.headers["Date"].as_str().and_then(|d| chrono::DateTime::parse_from_rfc2822(d).ok())
        {
            builder = builder.date(date.into());
        }
        let email = builder.body(message.text_body.clone())?;
        self.transport.send(email).await?;
        Ok(())
    }
}

/// A message to store.
pub struct Mail<'a> {
    pub kind: &'a str,
    pub to: &'a str,
    pub subject: &'a str,
    pub body: &'a str,
    /// The organization it is sent for, when there is one (invitation mail is counted per organization).
    pub org: Option<Uuid>,
}

/// How many mails of `kind` were queued for `org` in the last day (for
/// the kinds an organization's own activity sends, which each cap).
pub async fn queued_today(conn: &mut PgConnection, org: Uuid, kind: &str) -> Result<i64> {
    Ok(sqlx::query_scalar!(
        r#"SELECT count(*) AS "n!" FROM mail_outbox
           WHERE org_id = $1 AND kind = $2 AND created_at > now() - interval '1 day'"#,
        org,
        kind
    )
    .fetch_one(conn)
    .await?)
}

/// A name customers chose (an organization's), as a mail may quote it:
/// in quotes, with what could forge lines or hide text taken out (line and
/// paragraph separators, bidirectional overrides, zero-width and other
/// invisible format characters, controls).
pub fn quoted(name: &str) -> String {
    let hidden = |c: char| {
        c.is_control()
            || matches!(c,
                '\u{00AD}' | '\u{061C}' | '\u{180E}' | '\u{200B}'..='\u{200F}' | '\u{2028}'..='\u{202E}'
                | '\u{2060}'..='\u{2064}' | '\u{2066}'..='\u{206F}' | '\u{FEFF}' | '\u{FFF9}'..='\u{FFFB}')
    };
    let shown: String = name.chars().filter(|c| !hidden(*c)).collect();
    format!("\"{}\"", shown.trim())
}

/// Stores a message in the caller's transaction, its body encrypted by Vault.
pub async fn enqueue(tx: &mut PgConnection, app: &App, mail: Mail<'_>) -> Result<()> {
    let message_id = format!("<{}@moke>", Uuid::now_v7());
    let headers = json!({
        "Message-ID": message_id,
        "Date": chrono::Utc::now().to_rfc2822(),
        "Content-Type": "text/plain; charset=utf-8",
        "Auto-Submitted": "auto-generated",
    });
    let body_enc = app.vault().encrypt(Uuid::nil(), mail.body).await?;
    sqlx::query!(
        "INSERT INTO mail_outbox (kind, to_address, from_address, subject, text_body_enc, headers, org_id)
         VALUES ($1, $2, $3, $4, $5, $6, $7)",
        mail.kind,
        mail.to,
        app.config().mail.from,
        mail.subject,
        body_enc,
        headers,
        mail.org,
    )
    .execute(tx)
    .await?;
    Ok(())
}

/// How long a message keeps being retried through failures that are not
/// about it (a mail server or Vault outage, a spent sending quota) before it
/// is dead-lettered: longer than any outage worth waiting out.
const MAIL_GIVE_UP_HOURS: i64 = 72;

/// How a send failed.
#[derive(Debug, PartialEq, Eq)]
enum Failure {
    /// Refused for good for this message alone: an address that does not
    /// parse, or a permanent SMTP refusal whose enhanced code names the
    /// recipient (5.1.x), the size (5.3.4) or the content (5.6.x).
    Message,
    /// Anything else (the server down, its authentication refused, a
    /// quota spent, a timeout): the same would happen to every message.
    Outage,
}

fn classify(error: &anyhow::Error) -> Failure {
    let refused_recipient = error.chain().any(|cause| {
        cause.downcast_ref::<lettre::address::AddressError>().is_some()
            || cause.downcast_ref::<lettre::transport::smtp::Error>().is_some_and(|e| {
                let text = e.to_string();
                e.is_permanent() && [" 5.1.", " 5.3.4", " 5.6."].iter().any(|code| text.contains(code))
            })
    });
    if refused_recipient { Failure::Message } else { Failure::Outage }
}

impl App {
    /// Sends up to `outbox.batch_size` due messages. A message refused for
    /// good (its recipient) is dead-lettered at once: kept without its
    /// body, with its last error. Any other failure is an outage: the
    /// message waits on its backoff and the rest of the round waits with
    /// it (the same would happen to each), until the message has failed
    /// for `MAIL_GIVE_UP_HOURS`. A sent message keeps no body. Returns how
    /// many were sent.
    pub async fn relay_mail_once(&self, sender: &impl MailSender) -> Result<usize> {
        let config = &self.config().outbox;
        let mut tx = self.db().begin().await?;
        let rows = sqlx::query!(
            r#"SELECT id, kind, to_address, from_address, subject, text_body, text_body_enc, headers, attempts,
                      created_at < now() - make_interval(hours => $2) AS "too_old!"
               FROM mail_outbox WHERE sent_at IS NULL AND dead_at IS NULL AND available_at <= now()
               ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED"#,
            i64::from(config.batch_size),
            MAIL_GIVE_UP_HOURS as i32,
        )
        .fetch_all(&mut *tx)
        .await?;
        let mut sent = 0;
        for row in rows {
            let body = match (&row.text_body_enc, &row.text_body) {
                (Some(ciphertext), _) => self.vault().decrypt(Uuid::nil(), ciphertext).await,
                (None, Some(plain)) => Ok(plain.clone()),
                (None, None) => Ok(String::new()),
            };
            let outcome = match body {
                Ok(body) => {
                    let message = MailMessage {
                        id: row.id,
                        kind: row.kind.clone(),
                        to: row.to_address,
                        from: row.from_address,
                        subject: row.subject,
                        text_body: body,
                        headers: row.headers,
                    };
                    sender.send(&message).await.map_err(|error| (classify(&error), error))
                }
                Err(error) => {
                    Err((Failure::Outage, anyhow::Error::from(error).context("the body could not be decrypted")))
                }
            };
            let (failure, error) = match outcome {
                Ok(()) => {
                    sqlx::query!(
                        "UPDATE mail_outbox SET sent_at = now(), text_body = NULL, text_body_enc = NULL WHERE id = $1",
                        row.id
                    )
                    .execute(&mut *tx)
                    .await?;
                    sent += 1;
                    continue;
                }
                Err(failed) => failed,
            };
            let reason = format!("{error:#}");
            if failure == Failure::Message || row.too_old {
                crate::background::dead_lettered("mail", &format!("mail {} ({})", row.id, row.kind), &reason);
                sqlx::query!(
                    "UPDATE mail_outbox SET attempts = attempts + 1, last_error = $2, dead_at = now(),
                         text_body = NULL, text_body_enc = NULL WHERE id = $1",
                    row.id,
                    reason,
                )
                .execute(&mut *tx)
                .await?;
                continue;
            }
            let backoff = crate::app::region::outbox::retry_delay(
                row.attempts,
                config.retry_base_seconds,
                config.retry_max_seconds,
            );
            tracing::warn!(mail_id = row.id, attempts = row.attempts + 1, error = %reason,
                "sending mail failed; it and the rest of this round will retry");
            sqlx::query!(
                "UPDATE mail_outbox SET attempts = attempts + 1, last_error = $2,
                     available_at = now() + make_interval(secs => $3) WHERE id = $1",
                row.id,
                reason,
                backoff.as_secs_f64(),
            )
            .execute(&mut *tx)
            .await?;
            break;
        }
        tx.commit().await?;
        Ok(sent)
    }
}

/// Warns at start-up about a sender that is for development only.
pub fn warn_if_development_sender(config: &crate::config::MailConfig) {
    match config.sender.as_str() {
        "log" => tracing::warn!(
            "mail.sender = \"log\": every message, sign-in links and tokens included, is written to the log. \
             For development only; set mail.sender = \"smtp\" and mail.smtp_url in production"
        ),
        "file" => tracing::warn!(
            dir = %config.file_dir,
            "mail.sender = \"file\": messages are written to files, not sent. For development only"
        ),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_name_cannot_forge_lines_or_hide_text() {
        let forged = "Acme\u{2028}\u{2028}Action required: https://evil.example\u{202E}moc.emka";
        assert_eq!(super::quoted(forged), "\"AcmeAction required: https://evil.examplemoc.emka\"");
        assert_eq!(super::quoted("Acme GmbH"), "\"Acme GmbH\"");
    }

    use super::{Failure, classify};

    #[test]
    fn only_a_refused_recipient_is_refused_for_good() {
        let bad_address = anyhow::Error::from("not an address".parse::<lettre::Address>().unwrap_err());
        assert_eq!(classify(&bad_address), Failure::Message);
        let timeout = anyhow::anyhow!("connection timed out");
        assert_eq!(classify(&timeout), Failure::Outage);
    }
}
