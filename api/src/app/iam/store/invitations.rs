//! The `invitations` table. Tokens are stored hashed.

use chrono::{DateTime, Utc};
use sqlx::PgConnection;
use uuid::Uuid;

use crate::app::{PageRequest, Result};

/// A stored invitation, as the organization sees it.
pub(in crate::app) struct InvitationRow {
    pub id: Uuid,
    pub email: String,
    pub role: String,
    pub created_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
    pub accepted_at: Option<DateTime<Utc>>,
    pub revoked_at: Option<DateTime<Utc>>,
}

/// A new invitation of `email` to `org` as `role`, sent by `invited_by`.
pub(in crate::app) struct NewInvitation<'a> {
    pub id: Uuid,
    pub org: Uuid,
    pub email: &'a str,
    pub role: &'a str,
    pub token_hash: &'a [u8],
    pub invited_by: Uuid,
    pub expires_at: DateTime<Utc>,
}

pub(in crate::app) async fn insert(conn: &mut PgConnection, new: NewInvitation<'_>) -> Result<InvitationRow> {
    Ok(sqlx::query_as!(
        InvitationRow,
        "INSERT INTO invitations (id, org_id, email, role, token_hash, invited_by, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7)
         RETURNING id, email, role, created_at, expires_at, accepted_at, revoked_at",
        new.id,
        new.org,
        new.email,
        new.role,
        new.token_hash,
        new.invited_by,
        new.expires_at,
    )
    .fetch_one(conn)
    .await?)
}

/// A page of `org`'s invitations in id order, whatever their state.
pub(in crate::app) async fn list(conn: &mut PgConnection, org: Uuid, page: &PageRequest) -> Result<Vec<InvitationRow>> {
    Ok(sqlx::query_as!(
        InvitationRow,
        "SELECT id, email, role, created_at, expires_at, accepted_at, revoked_at FROM invitations
         WHERE org_id = $1 AND ($2::uuid IS NULL OR id > $2) ORDER BY id LIMIT $3",
        org,
        page.after,
        page.fetch_limit(),
    )
    .fetch_all(conn)
    .await?)
}

/// Revokes an invitation not yet accepted (a revoked one keeps its first
/// revocation time); false if there is no such invitation.
pub(in crate::app) async fn revoke(conn: &mut PgConnection, org: Uuid, id: Uuid) -> Result<bool> {
    Ok(sqlx::query!(
        "UPDATE invitations SET revoked_at = COALESCE(revoked_at, now())
         WHERE org_id = $1 AND id = $2 AND accepted_at IS NULL RETURNING id",
        org,
        id,
    )
    .fetch_optional(conn)
    .await?
    .is_some())
}

/// An invitation being accepted, with its organization's name.
pub(in crate::app) struct PendingRow {
    pub id: Uuid,
    pub org_id: Uuid,
    pub email: String,
    pub role: String,
    pub org_name: String,
}

/// Locks the live (not accepted, revoked or expired) invitation of a
/// token (`FOR UPDATE OF i`), so two acceptances of it serialize.
pub(in crate::app) async fn lock_pending(conn: &mut PgConnection, token_hash: &[u8]) -> Result<Option<PendingRow>> {
    Ok(sqlx::query_as!(
        PendingRow,
        "SELECT i.id, i.org_id, i.email, i.role, o.name AS org_name
         FROM invitations i JOIN organizations o ON o.id = i.org_id
         WHERE i.token_hash = $1 AND i.accepted_at IS NULL AND i.revoked_at IS NULL AND i.expires_at > now()
         FOR UPDATE OF i",
        token_hash,
    )
    .fetch_optional(conn)
    .await?)
}

/// Marks an invitation accepted by `user` (an eviction of its sender
/// names who joined through it).
pub(in crate::app) async fn accept(conn: &mut PgConnection, id: Uuid, user: Uuid) -> Result<()> {
    sqlx::query!("UPDATE invitations SET accepted_at = now(), accepted_by = $2 WHERE id = $1", id, user)
        .execute(conn)
        .await?;
    Ok(())
}

/// Revokes the pending invitations `makers` sent; answers each one's
/// organization.
pub(in crate::app) async fn revoke_sent_by(conn: &mut PgConnection, makers: &[Uuid]) -> Result<Vec<Uuid>> {
    Ok(sqlx::query_scalar!(
        "UPDATE invitations SET revoked_at = now()
         WHERE invited_by = ANY($1) AND accepted_at IS NULL AND revoked_at IS NULL RETURNING org_id",
        makers
    )
    .fetch_all(conn)
    .await?)
}

/// Someone who joined an organization through an invitation.
pub(in crate::app) struct JoinedRow {
    pub org_id: Uuid,
    pub accepted_by: Option<Uuid>,
}

/// Who joined through the invitations `makers` sent, for owners to review.
pub(in crate::app) async fn joined_through(conn: &mut PgConnection, makers: &[Uuid]) -> Result<Vec<JoinedRow>> {
    Ok(sqlx::query_as!(
        JoinedRow,
        "SELECT org_id, accepted_by FROM invitations WHERE invited_by = ANY($1) AND accepted_by IS NOT NULL",
        makers
    )
    .fetch_all(conn)
    .await?)
}
