//! What an eviction of an account's maker reads and ends in the tables of
//! other domains (deploy hooks, event endpoints), and how far it reaches.
//! See `App::evict_everyone_but_the_owner`.

use sqlx::PgConnection;
use uuid::Uuid;

use crate::app::Result;

/// Every organization where `user` is a member or `makers` made something
/// an eviction ends, in lock order.
pub(in crate::app) async fn reached_orgs(conn: &mut PgConnection, user: Uuid, makers: &[Uuid]) -> Result<Vec<Uuid>> {
    Ok(sqlx::query_scalar!(
        r#"SELECT org_id AS "org_id!" FROM (
               SELECT org_id FROM memberships WHERE user_id = $1
               UNION SELECT org_id FROM service_accounts WHERE id = ANY($2)
               UNION SELECT org_id FROM deploy_hooks
                     WHERE created_by = ANY($2) OR secret_issued_to = ANY($2) OR previous_secret_issued_to = ANY($2)
               UNION SELECT org_id FROM webhook_endpoints
                     WHERE (created_by = ANY($2) OR url_set_by = ANY($2)) AND disabled_at IS NULL
               UNION SELECT org_id FROM invitations
                     WHERE invited_by = ANY($2) AND (accepted_by IS NOT NULL OR revoked_at IS NULL)
               UNION SELECT org_id FROM sso_providers WHERE updated_by = ANY($2)
               UNION SELECT org_id FROM org_domains WHERE verified_by = ANY($2)
           ) reached ORDER BY org_id"#,
        user,
        makers,
    )
    .fetch_all(conn)
    .await?)
}

/// The service accounts `user` made or gave a credential (a token, a trust
/// policy), and those such service accounts did the same for, with their
/// organizations.
pub(in crate::app) async fn made_by(conn: &mut PgConnection, user: Uuid) -> Result<Vec<(Uuid, Uuid)>> {
    Ok(sqlx::query!(
        r#"WITH RECURSIVE reached(id) AS (
               SELECT $1::uuid
               UNION
               SELECT next.id FROM reached r, LATERAL (
                   SELECT s.id FROM service_accounts s WHERE s.created_by = r.id
                   UNION ALL
                   SELECT t.service_account_id FROM api_tokens t
                   WHERE t.created_by = r.id AND t.service_account_id IS NOT NULL
                   UNION ALL
                   SELECT p.service_account_id FROM trust_policies p WHERE p.created_by = r.id
               ) next(id)
           )
           SELECT sa.id, sa.org_id FROM reached r JOIN service_accounts sa ON sa.id = r.id"#,
        user
    )
    .fetch_all(conn)
    .await?
    .into_iter()
    .map(|row| (row.id, row.org_id))
    .collect())
}

/// A row of another domain an eviction ended, and its organization.
pub(in crate::app) struct Ended {
    pub id: Uuid,
    pub org_id: Uuid,
}

/// Deletes the deploy hooks `makers` made or last received the secret of.
pub(in crate::app) async fn delete_hooks(conn: &mut PgConnection, makers: &[Uuid]) -> Result<Vec<Ended>> {
    Ok(sqlx::query_as!(
        Ended,
        "DELETE FROM deploy_hooks WHERE created_by = ANY($1) OR secret_issued_to = ANY($1) RETURNING id, org_id",
        makers
    )
    .fetch_all(conn)
    .await?)
}

/// Ends now, not when its grace period would have, a hook secret `makers`
/// held before someone else rotated it.
pub(in crate::app) async fn end_previous_hook_secrets(conn: &mut PgConnection, makers: &[Uuid]) -> Result<Vec<Ended>> {
    Ok(sqlx::query_as!(
        Ended,
        "UPDATE deploy_hooks SET previous_secret_enc = NULL, previous_secret_expires_at = NULL,
             previous_secret_issued_to = NULL
         WHERE previous_secret_issued_to = ANY($1) RETURNING id, org_id",
        makers
    )
    .fetch_all(conn)
    .await?)
}

/// An event endpoint an eviction disables.
pub(in crate::app) struct EndpointRow {
    pub id: Uuid,
    pub org_id: Uuid,
    pub url: String,
}

/// The enabled event endpoints `makers` made or pointed at a new URL.
pub(in crate::app) async fn endpoints(conn: &mut PgConnection, makers: &[Uuid]) -> Result<Vec<EndpointRow>> {
    Ok(sqlx::query_as!(
        EndpointRow,
        "SELECT id, org_id, url FROM webhook_endpoints
         WHERE (created_by = ANY($1) OR url_set_by = ANY($1)) AND disabled_at IS NULL",
        makers
    )
    .fetch_all(conn)
    .await?)
}
