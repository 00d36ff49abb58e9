//! Device sign-in: the OAuth 2.0 Device Authorization Grant (RFC 8628), how
//! `moke auth login` signs a person in without a browser beside it. The
//! device asks for a device code and a short user code; the person, signed
//! in elsewhere, confirms (or denies) the user code for one of their
//! organizations; the device's polling then receives, once, a new personal
//! API token acting as that person there, minted like any personal token
//! (the organization's credential policy, quotas, attenuation).
//!
//! User codes have about 34 bits: each person may try only a few per
//! window (counted in the database, so across gateways), and a code is
//! decided once. Device codes are 256 random bits, stored as SHA-256.
//! Expired sign-ins are forgotten by the hourly sweep of sign-in leftovers
//! ([`App::purge_sign_in_leftovers`]).

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chrono::Utc;
use moke_iam::token::plain_hash;
use moke_iam::{Action, Credential, PrincipalKind, Target};
use rand::Rng;
use serde_json::json;
use uuid::Uuid;

use crate::app::error::Validator;
use crate::app::iam::principals::session_principal;
use crate::app::iam::store;
use crate::app::iam::store::device_authorizations::{DeviceAuthorizationRow, NewDeviceAuthorization};
use crate::app::iam::tokens::{TokenLimits, TokenOwner, confer_token, insert_token};
use crate::app::kernel::audit::{self, AuditRecord};
use crate::app::{App, Error, RequestContext, Result, validate};
use crate::ids::{DeviceAuthorizationId, OrgId, UserId};
use crate::model::{
    DeviceAuthorizationCreate, DeviceAuthorizationCreated, DeviceAuthorizationView, DeviceConfirm, DeviceDeny,
    DeviceToken, DeviceTokenRequest,
};

/// The only `grant_type` of `POST /v1/device/token`.
pub const DEVICE_CODE_GRANT: &str = "urn:ietf:params:oauth:grant-type:device_code";
/// RFC 8628 §6.1: consonants only (no vowels, so no words), no look-alikes.
const USER_CODE_ALPHABET: &[u8; 20] = b"BCDFGHJKLMNPQRSTVWXZ";
const USER_CODE_LENGTH: usize = 8;
/// The longest user code as typed (the schema's `max_length`).
const USER_CODE_MAX_TYPED: usize = 32;
/// How long both codes live.
const EXPIRES_IN_SECONDS: i64 = 600;
/// How long a device waits between polls, and what each `slow_down` adds.
const INTERVAL_SECONDS: i32 = 5;
const SLOW_DOWN_SECONDS: i32 = 5;
/// A poll this much sooner than the interval still counts as on time (the
/// network delays one poll more than the next).
const POLL_SLACK_SECONDS: f64 = 1.0;
/// User codes a person may try (confirm or deny) per window; only wrong
/// ones stay counted.
const ATTEMPTS_PER_WINDOW: i32 = 10;
const ATTEMPT_WINDOW_SECONDS: i32 = 600;
/// The token's name when the device gave none.
const DEFAULT_CLIENT_NAME: &str = "moke CLI";
/// How long a token from a device sign-in lives at most (a lost laptop's
/// CLI stops working on its own).
const DEVICE_TOKEN_DAYS: i64 = 90;
/// Draws of a user code before giving up (a draw collides with a sign-in
/// still in the table about once in 25 billion per such sign-in).
const USER_CODE_DRAWS: usize = 5;

fn new_user_code() -> String {
    let mut rng = rand::rng();
    (0..USER_CODE_LENGTH)
        .map(|_| char::from(USER_CODE_ALPHABET[rng.random_range(0..USER_CODE_ALPHABET.len())]))
        .collect()
}

/// `XXXXXXXX` as people read it: `XXXX-XXXX`.
fn shown(code: &str) -> String {
    format!("{}-{}", &code[..4], &code[4..])
}

/// A user code as typed, normalized (upper case, without `-` and spaces):
/// exactly the schema's rule, 8 letters of the alphabet in either case
/// among `-` and spaces, at most 32 characters.
fn normalize_user_code(typed: &str) -> Option<String> {
    if typed.chars().count() > USER_CODE_MAX_TYPED {
        return None;
    }
    let code: String = typed.chars().filter(|c| !matches!(c, '-' | ' ')).map(|c| c.to_ascii_uppercase()).collect();
    (code.len() == USER_CODE_LENGTH && code.bytes().all(|b| USER_CODE_ALPHABET.contains(&b))).then_some(code)
}

fn user_code_input(typed: &str) -> Result<String> {
    normalize_user_code(typed).ok_or_else(|| {
        Error::invalid_field("user_code", "invalid", "must be 8 letters of BCDFGHJKLMNPQRSTVWXZ, like XXXX-XXXX")
    })
}

/// The session of the person calling: only a person signed in (not an API
/// token, not a service account) confirms or denies a device, so a leaked
/// token cannot mint more tokens through it.
fn signed_in_session(ctx: &RequestContext) -> Result<Uuid> {
    match ctx.principal.credential {
        Credential::Session { id, .. } if ctx.principal.kind == PrincipalKind::User => Ok(id),
        _ => Err(Error::refused(
            "session_required",
            "sign in to confirm or deny a device (an API token or a service account may not)",
        )),
    }
}

/// A token endpoint's refusal (RFC 8628 §3.5).
fn grant(code: &'static str, detail: impl Into<String>) -> Error {
    Error::Grant { code, detail: detail.into() }
}

/// The sign-in a typed code names, while it can still be decided.
fn decidable(row: Option<DeviceAuthorizationRow>, code: &str) -> Result<DeviceAuthorizationRow> {
    let unusable =
        |code: &'static str, gone: bool, detail: String| Error::CodeUnusable { field: "user_code", code, gone, detail };
    let Some(row) = row else {
        return Err(unusable("not_found", false, format!("no device is waiting for the code {}", shown(code))));
    };
    if row.status != "pending" {
        return Err(unusable("code_used", true, format!("the code {} was already confirmed or denied", shown(code))));
    }
    if row.expired {
        return Err(unusable(
            "code_expired",
            true,
            format!("the code {} has expired; start signing in on the device again", shown(code)),
        ));
    }
    Ok(row)
}

impl DeviceAuthorizationRow {
    fn into_view(self, status: &str, org: Option<Uuid>) -> DeviceAuthorizationView {
        DeviceAuthorizationView {
            id: DeviceAuthorizationId::from_uuid(self.id),
            user_code: shown(&self.user_code),
            client_name: self.client_name,
            status: status.to_string(),
            organization: org.map(OrgId::from_uuid),
            created_at: self.created_at,
            expires_at: self.expires_at,
        }
    }
}

/// Confirm or deny, as both are decided and audited.
#[derive(Clone, Copy)]
enum Decision {
    Confirm,
    Deny,
}

impl Decision {
    fn action(self) -> &'static str {
        match self {
            Decision::Confirm => "auth.device_authorization_confirm",
            Decision::Deny => "auth.device_authorization_deny",
        }
    }
}

impl App {
    /// `device_authorization_create`: a device asks to be signed in. Anyone
    /// may ask (limited per address like sign-in); nothing happens until a
    /// signed-in person confirms the user code.
    pub async fn device_authorization_create(
        &self,
        ctx: &RequestContext,
        input: DeviceAuthorizationCreate,
    ) -> Result<DeviceAuthorizationCreated> {
        self.rate_limits().check_login(ctx.source_ip.as_deref())?;
        let mut v = Validator::new();
        if let Some(name) = &input.client_name {
            validate::display_name(&mut v, "client_name", name);
        }
        v.finish()?;
        let client_name = input.client_name.as_deref().map(str::trim);
        let device_code = URL_SAFE_NO_PAD.encode(rand::random::<[u8; 32]>());
        let id = DeviceAuthorizationId::generate();
        let mut tx = self.db().begin().await?;
        let mut user_code = None;
        for _ in 0..USER_CODE_DRAWS {
            let code = new_user_code();
            let new = NewDeviceAuthorization {
                id: id.uuid(),
                device_code_hash: &plain_hash(&device_code)[..],
                user_code: &code,
                client_name,
                interval_seconds: INTERVAL_SECONDS,
                expires_at: Utc::now() + chrono::Duration::seconds(EXPIRES_IN_SECONDS),
                source_ip: ctx.source_ip.as_deref(),
                user_agent: ctx.user_agent.as_deref(),
            };
            if store::device_authorizations::insert(&mut tx, new).await? {
                user_code = Some(code);
                break;
            }
        }
        let user_code = user_code.ok_or_else(|| Error::Internal(anyhow::anyhow!("no free device user code")))?;
        audit::insert(
            &mut tx,
            ctx,
            None,
            "success",
            AuditRecord {
                action: "auth.device_authorization_request",
                resource_type: "device_authorization",
                resource_id: Some(id.to_string()),
                details: json!({ "client_name": client_name }),
            },
        )
        .await?;
        self.commit(ctx, tx).await?;
        let base = self.config().http.public_url.trim_end_matches('/');
        let user_code = shown(&user_code);
        Ok(DeviceAuthorizationCreated {
            device_code,
            verification_uri: format!("{base}/device"),
            verification_uri_complete: format!("{base}/device?user_code={user_code}"),
            user_code,
            expires_in: EXPIRES_IN_SECONDS,
            interval: i64::from(INTERVAL_SECONDS),
        })
    }

    /// `device_authorization_confirm`: the signed-in person approves the
    /// device showing `user_code`, to act as them in `organization` (one
    /// they belong to; their current one by default) through the session
    /// they confirm with.
    pub async fn device_authorization_confirm(
        &self,
        ctx: &RequestContext,
        input: DeviceConfirm,
    ) -> Result<DeviceAuthorizationView> {
        let session = signed_in_session(ctx)?;
        let code = user_code_input(&input.user_code)?;
        let org = input.organization.map_or(ctx.principal.org_id, |org| org.uuid());
        // The person as the device's token will act: in that organization,
        // through this session (its sign-in method and binding count there).
        let mut conn = self.db().acquire().await?;
        let approver = session_principal(&mut conn, ctx.principal.id, org, session).await?;
        drop(conn);
        let approver = approver.ok_or_else(|| Error::not_found("organization", OrgId::from_uuid(org).to_string()))?;
        // What a personal token needs (`personal_token_create`).
        moke_iam::authorize(&approver, Action::Read, Target::org(org))?;
        let actor = RequestContext { principal: approver, ..ctx.clone() };
        let (actor, code) = (&actor, &code);
        self.idempotent(ctx, "device_authorization_confirm", &input, |claim| async move {
            self.count_code_attempt(actor).await?;
            let mut tx = claim.begin(self.db()).await?;
            let row = store::device_authorizations::lock_by_user_code(&mut tx, code).await?;
            let row = match decidable(row, code) {
                Ok(row) => row,
                Err(refused) => {
                    drop(tx);
                    return Err(self.wrong_code(actor, Decision::Confirm, refused).await);
                }
            };
            let user = actor.principal.id;
            if !store::device_authorizations::approve(&mut tx, row.id, user, org, session).await? {
                return Err(Error::Internal(anyhow::anyhow!("a locked pending device sign-in was not pending")));
            }
            store::device_authorizations::refund_attempt(&mut tx, user).await?;
            audit::record(
                &mut tx,
                actor,
                AuditRecord {
                    action: Decision::Confirm.action(),
                    resource_type: "device_authorization",
                    resource_id: Some(DeviceAuthorizationId::from_uuid(row.id).to_string()),
                    details: json!({ "client_name": row.client_name }),
                },
            )
            .await?;
            let view = row.into_view("approved", Some(org));
            claim.complete(&mut tx, 200, &view).await?;
            self.commit(ctx, tx).await?;
            Ok(view)
        })
        .await
    }

    /// `device_authorization_deny`: the signed-in person refuses the device
    /// showing `user_code`; its polling answers `access_denied`.
    pub async fn device_authorization_deny(
        &self,
        ctx: &RequestContext,
        input: DeviceDeny,
    ) -> Result<DeviceAuthorizationView> {
        signed_in_session(ctx)?;
        let code = user_code_input(&input.user_code)?;
        let code = &code;
        self.idempotent(ctx, "device_authorization_deny", &input, |claim| async move {
            self.count_code_attempt(ctx).await?;
            let mut tx = claim.begin(self.db()).await?;
            let row = store::device_authorizations::lock_by_user_code(&mut tx, code).await?;
            let row = match decidable(row, code) {
                Ok(row) => row,
                Err(refused) => {
                    drop(tx);
                    return Err(self.wrong_code(ctx, Decision::Deny, refused).await);
                }
            };
            if !store::device_authorizations::deny(&mut tx, row.id, ctx.principal.id).await? {
                return Err(Error::Internal(anyhow::anyhow!("a locked pending device sign-in was not pending")));
            }
            store::device_authorizations::refund_attempt(&mut tx, ctx.principal.id).await?;
            audit::record(
                &mut tx,
                ctx,
                AuditRecord {
                    action: Decision::Deny.action(),
                    resource_type: "device_authorization",
                    resource_id: Some(DeviceAuthorizationId::from_uuid(row.id).to_string()),
                    details: json!({ "client_name": row.client_name }),
                },
            )
            .await?;
            let view = row.into_view("denied", None);
            claim.complete(&mut tx, 200, &view).await?;
            self.commit(ctx, tx).await?;
            Ok(view)
        })
        .await
    }

    /// Counts a user code the caller tries; past the limit of the window, 429.
    async fn count_code_attempt(&self, ctx: &RequestContext) -> Result<()> {
        let mut conn = self.db().acquire().await?;
        let (attempts, left) =
            store::device_authorizations::count_attempt(&mut conn, ctx.principal.id, ATTEMPT_WINDOW_SECONDS).await?;
        if attempts > ATTEMPTS_PER_WINDOW {
            return Err(Error::RateLimited {
                limit: ATTEMPTS_PER_WINDOW as u32,
                window_seconds: ATTEMPT_WINDOW_SECONDS as u64,
                retry_after_seconds: left.ceil().max(1.0) as u64,
            });
        }
        Ok(())
    }

    /// Records a wrong code in the person's security events (it stays
    /// counted against them) and answers the refusal.
    async fn wrong_code(&self, ctx: &RequestContext, decision: Decision, refused: Error) -> Error {
        let record = AuditRecord {
            action: decision.action(),
            resource_type: "device_authorization",
            resource_id: None,
            details: json!({ "reason": refused.code() }),
        };
        let recorded = async {
            let mut conn = self.db().acquire().await?;
            audit::insert(&mut conn, ctx, ctx.principal.org_id, "failure", record).await
        };
        match recorded.await {
            Ok(()) => refused,
            Err(error) => error,
        }
    }

    /// `device_token_create`: a device polls for its credential (RFC 8628
    /// §3.4, §3.5). Pending: `authorization_pending`, or `slow_down` (and a
    /// longer interval) when it polls too soon; denied: `access_denied`;
    /// expired or already collected: `expired_token`; unknown:
    /// `invalid_grant`. Approved: a new personal token, exactly once.
    pub async fn device_token_create(&self, ctx: &RequestContext, input: DeviceTokenRequest) -> Result<DeviceToken> {
        if input.grant_type != DEVICE_CODE_GRANT {
            return Err(grant("unsupported_grant_type", format!("grant_type must be {DEVICE_CODE_GRANT}")));
        }
        let mut tx = self.db().begin().await?;
        let row = store::device_authorizations::lock_by_device_code(&mut tx, &plain_hash(&input.device_code)[..])
            .await?
            .ok_or_else(|| grant("invalid_grant", "no device sign-in has this device code"))?;
        match row.status.as_str() {
            "denied" => return Err(grant("access_denied", "the person denied this sign-in")),
            "issued" => return Err(grant("expired_token", "this device code was already used; sign in again")),
            _ if row.expired => return Err(grant("expired_token", "the device code expired; sign in again")),
            "pending" => {
                let interval = row.interval_seconds;
                let soon = row.since_last_poll.is_some_and(|s| s < f64::from(interval) - POLL_SLACK_SECONDS);
                let interval = if soon { interval + SLOW_DOWN_SECONDS } else { interval };
                store::device_authorizations::polled(&mut tx, row.id, interval).await?;
                self.commit(ctx, tx).await?;
                return Err(if soon {
                    grant("slow_down", format!("poll at most every {interval} seconds"))
                } else {
                    grant("authorization_pending", "waiting for the person to confirm the code")
                });
            }
            _ => {}
        }
        let (Some(user), Some(org), Some(session)) = (row.decided_by, row.org_id, row.session_id) else {
            return Err(Error::Internal(anyhow::anyhow!("an approved device sign-in without its approver")));
        };
        // The person as they approved, now: still a member, the session
        // still live, the organization's policy still admitting it.
        let approver = match session_principal(&mut tx, user, org, session).await {
            Ok(Some(approver)) => approver,
            Ok(None) => {
                return Err(grant(
                    "access_denied",
                    "the session that approved this sign-in ended, or its person left the organization",
                ));
            }
            Err(Error::Refused { detail, .. }) => return Err(grant("access_denied", detail)),
            Err(other) => return Err(other),
        };
        let actor = RequestContext { principal: approver, ..ctx.clone() };
        let owner = TokenOwner::User { id: user, role: actor.principal.role };
        let mut limits = TokenLimits::default();
        confer_token(self, &actor, owner, actor.principal.project_roles.clone(), &mut limits).await?;
        // Never a token for ever: at most DEVICE_TOKEN_DAYS, less if the policy says so.
        let longest = chrono::Utc::now() + chrono::Duration::days(DEVICE_TOKEN_DAYS);
        limits.expires_at = Some(limits.expires_at.map_or(longest, |at| at.min(longest)));
        // The requester chose the client name; the prefix says where the token came from.
        let name = format!("device sign-in: {}", row.client_name.as_deref().unwrap_or(DEFAULT_CLIENT_NAME));
        let created = insert_token(&mut tx, self, &actor, owner, &name, &limits).await?;
        if !store::device_authorizations::issue(&mut tx, row.id, created.view.id.uuid()).await? {
            return Err(Error::Internal(anyhow::anyhow!("a locked approved device sign-in was not approved")));
        }
        audit::record(
            &mut tx,
            &actor,
            AuditRecord {
                action: "auth.device_token_issue",
                resource_type: "device_authorization",
                resource_id: Some(DeviceAuthorizationId::from_uuid(row.id).to_string()),
                details: json!({ "token": created.view.id, "client_name": row.client_name }),
            },
        )
        .await?;
        self.commit(ctx, tx).await?;
        Ok(DeviceToken {
            access_token: created.token,
            token_type: "Bearer".to_string(),
            token_id: created.view.id,
            organization: OrgId::from_uuid(org),
            user: UserId::from_uuid(user),
            expires_at: created.view.expires_at,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_codes_are_read_as_the_schema_says() {
        assert_eq!(normalize_user_code("bcdf-ghjk").as_deref(), Some("BCDFGHJK"));
        assert_eq!(normalize_user_code(" BCDF GHJK- ").as_deref(), Some("BCDFGHJK"));
        assert_eq!(normalize_user_code("BCDFGHJK").as_deref(), Some("BCDFGHJK"));
        assert!(normalize_user_code("BCDF-GHJA").is_none(), "a vowel");
        assert!(normalize_user_code("BCDF-GHJ").is_none(), "too short");
        assert!(normalize_user_code("BCDF-GHJKL").is_none(), "too long");
        assert!(normalize_user_code("BCDF_GHJK").is_none(), "another separator");
        assert!(normalize_user_code(&format!("{}BCDFGHJK", " ".repeat(25))).is_none(), "over 32 characters");
    }

    #[test]
    fn drawn_user_codes_are_valid() {
        for _ in 0..100 {
            let code = new_user_code();
            assert_eq!(normalize_user_code(&shown(&code)), Some(code));
        }
    }
}
