//! The single sign-on tables: `sso_providers` (an organization's identity
//! provider), `sso_logins` (sign-ins under way), `sso_identities` (who an
//! identity signs in as) and `sso_link_requests` (links waiting for an
//! account's owner to confirm).

use chrono::{DateTime, Utc};
use sqlx::PgConnection;
use uuid::Uuid;

use crate::app::Result;

/// An organization's identity provider; the client secret is Vault transit
/// ciphertext.
pub(in crate::app) struct ProviderRow {
    pub org_id: Uuid,
    pub issuer: String,
    pub client_id: String,
    pub client_secret_enc: String,
    pub allowed_domains: Vec<String>,
    pub default_role: String,
    pub version: i64,
    pub updated_at: DateTime<Utc>,
}

/// `sqlx::query_as!` over `sso_providers p` with `ProviderRow`'s columns
/// and the rest of the statement given.
macro_rules! select {
    ($rest:tt $(, $arg:expr)* $(,)?) => {
        sqlx::query_as!(
            ProviderRow,
            "SELECT p.org_id, p.issuer, p.client_id, p.client_secret_enc, p.allowed_domains, p.default_role, p.version,
                    p.updated_at
             FROM sso_providers p " + $rest
            $(, $arg)*
        )
    };
}

pub(in crate::app) async fn find(conn: &mut PgConnection, org: Uuid) -> Result<Option<ProviderRow>> {
    Ok(select!("WHERE p.org_id = $1", org).fetch_optional(conn).await?)
}

/// The identity provider of the organization a reference names (by id or
/// name), for sign-ins that start before anyone is known.
pub(in crate::app) async fn find_by_org_ref(
    conn: &mut PgConnection,
    ref_id: Option<Uuid>,
    ref_name: Option<&str>,
) -> Result<Option<ProviderRow>> {
    Ok(select!(
        "JOIN organizations o ON o.id = p.org_id
         WHERE ($1::uuid IS NULL OR o.id = $1) AND ($2::text IS NULL OR o.name = $2)",
        ref_id,
        ref_name,
    )
    .fetch_optional(conn)
    .await?)
}

/// An organization's identity provider as set by `updated_by`.
pub(in crate::app) struct NewProvider<'a> {
    pub org: Uuid,
    pub issuer: &'a str,
    pub client_id: &'a str,
    pub client_secret_enc: &'a str,
    pub allowed_domains: &'a [String],
    pub default_role: &'a str,
    /// Whoever set it: an eviction of them deletes it.
    pub updated_by: Uuid,
}

/// Sets (or replaces) an organization's identity provider; the version
/// moves, so link requests and sign-ins judged by the old settings fail.
pub(in crate::app) async fn upsert(conn: &mut PgConnection, new: NewProvider<'_>) -> Result<ProviderRow> {
    Ok(sqlx::query_as!(
        ProviderRow,
        "INSERT INTO sso_providers (org_id, issuer, client_id, client_secret_enc, allowed_domains, default_role,
                                    updated_by)
         VALUES ($1, $2, $3, $4, $5, $6, $7)
         ON CONFLICT (org_id) DO UPDATE SET issuer = EXCLUDED.issuer, client_id = EXCLUDED.client_id,
             client_secret_enc = EXCLUDED.client_secret_enc, allowed_domains = EXCLUDED.allowed_domains,
             default_role = EXCLUDED.default_role, updated_by = EXCLUDED.updated_by,
             version = sso_providers.version + 1, updated_at = now()
         RETURNING org_id, issuer, client_id, client_secret_enc, allowed_domains, default_role, version, updated_at",
        new.org,
        new.issuer,
        new.client_id,
        new.client_secret_enc,
        new.allowed_domains,
        new.default_role,
        new.updated_by,
    )
    .fetch_one(conn)
    .await?)
}

/// The settings' version, if any, locked `FOR UPDATE` until the transaction
/// ends: they are about to be replaced.
pub(in crate::app) async fn lock_version(conn: &mut PgConnection, org: Uuid) -> Result<Option<i64>> {
    Ok(sqlx::query_scalar!("SELECT version FROM sso_providers WHERE org_id = $1 FOR UPDATE", org)
        .fetch_optional(conn)
        .await?)
}

/// Turns an organization's single sign-on off; false if it was not on.
pub(in crate::app) async fn delete(conn: &mut PgConnection, org: Uuid) -> Result<bool> {
    Ok(sqlx::query!("DELETE FROM sso_providers WHERE org_id = $1 RETURNING org_id", org)
        .fetch_optional(conn)
        .await?
        .is_some())
}

/// The settings' version, held `FOR SHARE` until the sign-in judged by it
/// is recorded: an edit or deletion meanwhile waits, or wins and is seen.
pub(in crate::app) async fn share_version(conn: &mut PgConnection, org: Uuid) -> Result<Option<i64>> {
    Ok(sqlx::query_scalar!("SELECT version FROM sso_providers WHERE org_id = $1 FOR SHARE", org)
        .fetch_optional(conn)
        .await?)
}

/// The same, only while the provider is still `issuer` (a link confirmed
/// must be to the provider that asked for it).
pub(in crate::app) async fn share_version_of(conn: &mut PgConnection, org: Uuid, issuer: &str) -> Result<Option<i64>> {
    Ok(sqlx::query_scalar!(
        "SELECT version FROM sso_providers WHERE org_id = $1 AND issuer = $2 FOR SHARE",
        org,
        issuer
    )
    .fetch_optional(conn)
    .await?)
}

/// Who may join an organization through its identity provider, and as what.
pub(in crate::app) struct JoinPolicy {
    pub allowed_domains: Vec<String>,
    pub default_role: String,
}

pub(in crate::app) async fn join_policy(conn: &mut PgConnection, org: Uuid) -> Result<Option<JoinPolicy>> {
    Ok(sqlx::query_as!(JoinPolicy, "SELECT allowed_domains, default_role FROM sso_providers WHERE org_id = $1", org)
        .fetch_optional(conn)
        .await?)
}

/// An identity provider an eviction deleted.
pub(in crate::app) struct DeletedProvider {
    pub org_id: Uuid,
    pub issuer: String,
}

/// Deletes the identity providers `makers` set up.
pub(in crate::app) async fn delete_made_by(conn: &mut PgConnection, makers: &[Uuid]) -> Result<Vec<DeletedProvider>> {
    Ok(sqlx::query_as!(
        DeletedProvider,
        "DELETE FROM sso_providers WHERE updated_by = ANY($1) RETURNING org_id, issuer",
        makers
    )
    .fetch_all(conn)
    .await?)
}

/// A sign-in under way; state and browser binding are stored hashed.
pub(in crate::app) struct NewLogin<'a> {
    pub state_hash: &'a [u8],
    pub org: Uuid,
    pub nonce: &'a str,
    pub pkce_verifier: &'a str,
    pub expires_at: DateTime<Utc>,
    pub browser_binding_hash: &'a [u8],
}

pub(in crate::app) async fn insert_login(conn: &mut PgConnection, new: NewLogin<'_>) -> Result<()> {
    sqlx::query!(
        "INSERT INTO sso_logins (state_hash, org_id, nonce, pkce_verifier, expires_at, browser_binding_hash)
         VALUES ($1, $2, $3, $4, $5, $6)",
        new.state_hash,
        new.org,
        new.nonce,
        new.pkce_verifier,
        new.expires_at,
        new.browser_binding_hash,
    )
    .execute(conn)
    .await?;
    Ok(())
}

/// A sign-in claimed by its callback.
pub(in crate::app) struct LoginRow {
    pub org_id: Uuid,
    pub nonce: String,
    pub pkce_verifier: String,
    pub browser_binding_hash: Option<Vec<u8>>,
}

/// Claims an unused, unexpired sign-in by its state: single use, whatever
/// the callback does next.
pub(in crate::app) async fn claim_login(conn: &mut PgConnection, state_hash: &[u8]) -> Result<Option<LoginRow>> {
    Ok(sqlx::query_as!(
        LoginRow,
        "UPDATE sso_logins SET used_at = now()
         WHERE state_hash = $1 AND used_at IS NULL AND expires_at > now()
         RETURNING org_id, nonce, pkce_verifier, browser_binding_hash",
        state_hash,
    )
    .fetch_optional(conn)
    .await?)
}

/// Forgets sign-ins a day after they expired; answers how many.
pub(in crate::app) async fn purge_expired_logins(conn: &mut PgConnection) -> Result<u64> {
    Ok(sqlx::query!("DELETE FROM sso_logins WHERE expires_at < now() - interval '1 day'")
        .execute(conn)
        .await?
        .rows_affected())
}

/// The account an identity is linked to, if any.
pub(in crate::app) async fn identity_user(
    conn: &mut PgConnection,
    org: Uuid,
    issuer: &str,
    subject: &str,
) -> Result<Option<Uuid>> {
    Ok(sqlx::query_scalar!(
        "SELECT user_id FROM sso_identities WHERE org_id = $1 AND issuer = $2 AND subject = $3",
        org,
        issuer,
        subject,
    )
    .fetch_optional(conn)
    .await?)
}

/// Records a sign-in through a linked identity; its account, or `None` if
/// the link is gone (an eviction ended it meanwhile).
pub(in crate::app) async fn touch_identity(
    conn: &mut PgConnection,
    org: Uuid,
    issuer: &str,
    subject: &str,
) -> Result<Option<Uuid>> {
    Ok(sqlx::query_scalar!(
        "UPDATE sso_identities SET last_login_at = now()
         WHERE org_id = $1 AND issuer = $2 AND subject = $3 RETURNING user_id",
        org,
        issuer,
        subject,
    )
    .fetch_optional(conn)
    .await?)
}

/// Links an identity to `user`; an identity linked already keeps its link.
pub(in crate::app) async fn link_identity(
    conn: &mut PgConnection,
    org: Uuid,
    issuer: &str,
    subject: &str,
    user: Uuid,
    email: &str,
) -> Result<()> {
    sqlx::query!(
        "INSERT INTO sso_identities (org_id, issuer, subject, user_id, email, last_login_at)
         VALUES ($1, $2, $3, $4, $5, now()) ON CONFLICT (org_id, issuer, subject) DO NOTHING",
        org,
        issuer,
        subject,
        user,
        email,
    )
    .execute(conn)
    .await?;
    Ok(())
}

/// Ends every link through the identity provider `(org, issuer)`; answers
/// the accounts that were linked.
pub(in crate::app) async fn delete_identities_of(
    conn: &mut PgConnection,
    org: Uuid,
    issuer: &str,
) -> Result<Vec<Uuid>> {
    Ok(sqlx::query_scalar!(
        "DELETE FROM sso_identities WHERE org_id = $1 AND issuer = $2 RETURNING user_id",
        org,
        issuer
    )
    .fetch_all(conn)
    .await?)
}

/// Ends every link to `user`'s account.
pub(in crate::app) async fn delete_identities_of_user(conn: &mut PgConnection, user: Uuid) -> Result<()> {
    sqlx::query!("DELETE FROM sso_identities WHERE user_id = $1", user).execute(conn).await?;
    Ok(())
}

/// A link of an identity to an existing account, waiting for its owner;
/// both tokens are stored hashed.
pub(in crate::app) struct NewLinkRequest<'a> {
    pub token_hash: &'a [u8],
    pub mail_token_hash: &'a [u8],
    pub org: Uuid,
    pub issuer: &'a str,
    pub subject: &'a str,
    pub user: Uuid,
    pub email: &'a str,
    pub expires_at: DateTime<Utc>,
    /// The settings' version it was asked under: confirmed only while current.
    pub provider_version: i64,
}

pub(in crate::app) async fn insert_link_request(conn: &mut PgConnection, new: NewLinkRequest<'_>) -> Result<()> {
    sqlx::query!(
        "INSERT INTO sso_link_requests (token_hash, mail_token_hash, org_id, issuer, subject, user_id, email,
             expires_at, provider_version) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
        new.token_hash,
        new.mail_token_hash,
        new.org,
        new.issuer,
        new.subject,
        new.user,
        new.email,
        new.expires_at,
        new.provider_version,
    )
    .execute(conn)
    .await?;
    Ok(())
}

/// A link request spent by its owner.
pub(in crate::app) struct LinkRequestRow {
    pub org_id: Uuid,
    pub issuer: String,
    pub subject: String,
    pub user_id: Uuid,
    pub email: String,
    pub provider_version: Option<i64>,
}

/// Spends a live link request by its browser token, or by its mailed one
/// when `mailed`; only `signed_in_as`'s if given (a signed-in owner confirms
/// only links to their own account).
pub(in crate::app) async fn spend_link_request(
    conn: &mut PgConnection,
    token_hash: &[u8],
    mailed: bool,
    signed_in_as: Option<Uuid>,
) -> Result<Option<LinkRequestRow>> {
    Ok(sqlx::query_as!(
        LinkRequestRow,
        "UPDATE sso_link_requests SET used_at = now()
         WHERE (CASE WHEN $2 THEN mail_token_hash ELSE token_hash END) = $1
           AND used_at IS NULL AND expires_at > now()
           AND ($3::uuid IS NULL OR user_id = $3)
         RETURNING org_id, issuer, subject, user_id, email, provider_version",
        token_hash,
        mailed,
        signed_in_as,
    )
    .fetch_optional(conn)
    .await?)
}

/// Deletes the pending link requests of the identity providers `makers`
/// set up (before the providers, in the order a confirmation takes them).
pub(in crate::app) async fn delete_link_requests_made_by(conn: &mut PgConnection, makers: &[Uuid]) -> Result<()> {
    sqlx::query!(
        "DELETE FROM sso_link_requests r USING sso_providers p
         WHERE p.updated_by = ANY($1) AND r.org_id = p.org_id AND r.issuer = p.issuer",
        makers
    )
    .execute(conn)
    .await?;
    Ok(())
}

/// Forgets link requests a day after they expired; answers how many.
pub(in crate::app) async fn purge_expired_link_requests(conn: &mut PgConnection) -> Result<u64> {
    Ok(sqlx::query!("DELETE FROM sso_link_requests WHERE expires_at < now() - interval '1 day'")
        .execute(conn)
        .await?
        .rows_affected())
}

/// Link messages sent to `email` in the last hour.
pub(in crate::app) async fn link_mails_this_hour(conn: &mut PgConnection, email: &str) -> Result<i64> {
    Ok(sqlx::query_scalar!(
        r#"SELECT count(*) AS "n!" FROM mail_outbox WHERE to_address = $1 AND kind = 'sso_link'
           AND created_at > now() - interval '1 hour'"#,
        email
    )
    .fetch_one(conn)
    .await?)
}

/// Takes `domain` out of the domains `org`'s identity provider lets join;
/// the settings' version moves, so pending links judged by them fail.
pub(in crate::app) async fn disallow_domain(conn: &mut PgConnection, org: Uuid, domain: &str) -> Result<()> {
    sqlx::query!(
        "UPDATE sso_providers SET allowed_domains = array_remove(allowed_domains, $2), version = version + 1
         WHERE org_id = $1",
        org,
        domain
    )
    .execute(conn)
    .await?;
    Ok(())
}

/// Whether the organization has an identity provider set.
pub(in crate::app) async fn is_configured(conn: &mut PgConnection, org: Uuid) -> Result<bool> {
    Ok(sqlx::query_scalar!("SELECT org_id FROM sso_providers WHERE org_id = $1", org)
        .fetch_optional(conn)
        .await?
        .is_some())
}
