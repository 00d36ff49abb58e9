//! The `cluster_cas` table (each cluster's Vault PKI issuer, its control
//! plane's serving certificate request and certificate) and
//! `principal_credential_epochs` (the epoch below which a principal's
//! cluster certificates are refused).

use sqlx::PgConnection;
use uuid::Uuid;

use crate::app::Result;

/// Stores a new cluster's CA (in the cluster's own transaction).
pub(in crate::app) async fn insert(
    conn: &mut PgConnection,
    cluster: Uuid,
    org: Uuid,
    ca: &crate::vault::ClusterCa,
) -> Result<()> {
    sqlx::query!(
        "INSERT INTO cluster_cas (cluster_id, org_id, mount, issuer_id, key_id, certificate_pem)
         VALUES ($1, $2, $3, $4, $5, $6)",
        cluster,
        org,
        ca.mount,
        ca.issuer_id,
        ca.key_id,
        ca.certificate_pem,
    )
    .execute(conn)
    .await?;
    Ok(())
}

/// What issuing credentials for a cluster needs from its CA.
pub(in crate::app) struct IssuingCa {
    pub mount: String,
    pub issuer_id: String,
    pub certificate_pem: String,
    pub credentials_generation: i64,
    pub serving_certificate_pem: Option<String>,
    /// Why the serving certificate was set aside, once it used up its attempts.
    pub serving_error: Option<String>,
}

/// A live cluster's CA; `serving_error` shows only after `attempts` refusals.
pub(in crate::app) async fn issuing(
    conn: &mut PgConnection,
    cluster: Uuid,
    attempts: i32,
) -> Result<Option<IssuingCa>> {
    Ok(sqlx::query_as!(
        IssuingCa,
        "SELECT mount, issuer_id, certificate_pem, credentials_generation, serving_certificate_pem,
                CASE WHEN serving_attempts >= $2 THEN serving_error END AS serving_error
         FROM cluster_cas WHERE cluster_id = $1 AND destroyed_at IS NULL",
        cluster,
        attempts,
    )
    .fetch_optional(conn)
    .await?)
}

/// Moves the cluster's credentials generation on (certificates of older
/// generations are refused) and answers the new one.
pub(in crate::app) async fn next_credentials_generation(conn: &mut PgConnection, cluster: Uuid) -> Result<i64> {
    Ok(sqlx::query_scalar!(
        "UPDATE cluster_cas SET credentials_generation = credentials_generation + 1
         WHERE cluster_id = $1 RETURNING credentials_generation",
        cluster,
    )
    .fetch_one(conn)
    .await?)
}

/// Takes a control plane's certificate request for signing: the same
/// request again changes nothing, a new one (a new key) starts over, and
/// only the cluster's own `region` may ask.
pub(in crate::app) async fn accept_serving_request(
    conn: &mut PgConnection,
    cluster: Uuid,
    csr: &str,
    region: &str,
) -> Result<()> {
    sqlx::query!(
        "UPDATE cluster_cas a SET serving_csr = $2, serving_certificate_pem = NULL,
             serving_attempts = 0, serving_retry_at = NULL, serving_error = NULL
         FROM clusters c
         WHERE a.cluster_id = $1 AND a.destroyed_at IS NULL AND a.serving_csr IS DISTINCT FROM $2
           AND c.id = a.cluster_id AND c.region = $3",
        cluster,
        csr,
        region,
    )
    .execute(conn)
    .await?;
    Ok(())
}

/// A control plane's certificate request waiting to be signed, with its cluster.
pub(in crate::app) struct PendingServing {
    pub cluster_id: Uuid,
    pub org_id: Uuid,
    pub mount: String,
    pub issuer_id: String,
    pub certificate_pem: String,
    pub credentials_generation: i64,
    pub serving_csr: String,
    pub serving_attempts: i32,
    pub name: String,
    pub region: String,
    pub generation: i64,
    pub project_id: Uuid,
}

/// Up to 20 requests due for signing (fewer than `attempts` refusals, past
/// their backoff), those never tried first.
pub(in crate::app) async fn pending_serving(conn: &mut PgConnection, attempts: i32) -> Result<Vec<PendingServing>> {
    Ok(sqlx::query_as!(
        PendingServing,
        r#"SELECT a.cluster_id, a.org_id, a.mount, a.issuer_id, a.certificate_pem, a.credentials_generation,
                  a.serving_csr AS "serving_csr!", a.serving_attempts, c.name, c.region, c.generation, c.project_id
           FROM cluster_cas a JOIN clusters c ON c.id = a.cluster_id
           WHERE a.serving_csr IS NOT NULL AND a.serving_certificate_pem IS NULL AND a.destroyed_at IS NULL
             AND a.serving_attempts < $1 AND (a.serving_retry_at IS NULL OR a.serving_retry_at <= now())
           ORDER BY a.serving_retry_at NULLS FIRST, a.cluster_id
           LIMIT 20"#,
        attempts,
    )
    .fetch_all(conn)
    .await?)
}

/// Keeps the certificate signed for `csr`; false if the cluster has sent
/// another request since, or it was already signed.
pub(in crate::app) async fn store_serving_certificate(
    conn: &mut PgConnection,
    cluster: Uuid,
    csr: &str,
    certificate_pem: &str,
) -> Result<bool> {
    let stored = sqlx::query_scalar!(
        "UPDATE cluster_cas SET serving_certificate_pem = $3
         WHERE cluster_id = $1 AND serving_csr = $2 AND serving_certificate_pem IS NULL RETURNING cluster_id",
        cluster,
        csr,
        certificate_pem,
    )
    .fetch_optional(conn)
    .await?;
    Ok(stored.is_some())
}

/// Records a failed signing of `csr` with its `code`, retried after
/// `retry_in_seconds`; a `refused` one counts as an attempt. Answers the
/// attempts so far, or nothing if the request was replaced meanwhile.
pub(in crate::app) async fn serving_failed(
    conn: &mut PgConnection,
    cluster: Uuid,
    csr: &str,
    code: &str,
    retry_in_seconds: f64,
    refused: bool,
) -> Result<Option<i32>> {
    Ok(sqlx::query_scalar!(
        "UPDATE cluster_cas SET serving_attempts = serving_attempts + CASE WHEN $5 THEN 1 ELSE 0 END,
             serving_error = $3, serving_retry_at = now() + make_interval(secs => $4)
         WHERE cluster_id = $1 AND serving_csr = $2 AND serving_certificate_pem IS NULL
         RETURNING serving_attempts",
        cluster,
        csr,
        code,
        retry_in_seconds,
        refused,
    )
    .fetch_optional(conn)
    .await?)
}

/// A CA in Vault whose cluster is gone.
pub(in crate::app) struct OrphanCa {
    pub cluster_id: Uuid,
    pub mount: String,
    pub issuer_id: String,
    pub key_id: String,
}

/// Up to 20 CAs not yet destroyed whose cluster no longer exists.
pub(in crate::app) async fn orphans(conn: &mut PgConnection) -> Result<Vec<OrphanCa>> {
    Ok(sqlx::query_as!(
        OrphanCa,
        "SELECT cluster_id, mount, issuer_id, key_id FROM cluster_cas a
         WHERE destroyed_at IS NULL AND NOT EXISTS (SELECT 1 FROM clusters c WHERE c.id = a.cluster_id)
         LIMIT 20",
    )
    .fetch_all(conn)
    .await?)
}

pub(in crate::app) async fn mark_destroyed(conn: &mut PgConnection, cluster: Uuid) -> Result<()> {
    sqlx::query!("UPDATE cluster_cas SET destroyed_at = now() WHERE cluster_id = $1", cluster).execute(conn).await?;
    Ok(())
}

/// Moves a principal's credential epoch in `org` on (from 1 the first
/// time) and answers the new one.
pub(in crate::app) async fn next_principal_epoch(conn: &mut PgConnection, org: Uuid, principal: Uuid) -> Result<i64> {
    Ok(sqlx::query_scalar!(
        "INSERT INTO principal_credential_epochs (org_id, principal_id, epoch) VALUES ($1, $2, 1)
         ON CONFLICT (org_id, principal_id) DO UPDATE
             SET epoch = principal_credential_epochs.epoch + 1, updated_at = now()
         RETURNING epoch",
        org,
        principal,
    )
    .fetch_one(conn)
    .await?)
}

/// A live cluster CA of an organization, with its cluster.
pub(in crate::app) struct OrgCa {
    pub cluster_id: Uuid,
    pub org_id: Uuid,
    pub mount: String,
    pub issuer_id: String,
    pub certificate_pem: String,
    pub credentials_generation: i64,
    pub serving_certificate_pem: Option<String>,
    pub name: String,
    pub region: String,
    pub generation: i64,
    pub project_id: Uuid,
}

/// The live CAs of `org`'s clusters, or of one project's.
pub(in crate::app) async fn of_org(conn: &mut PgConnection, org: Uuid, project: Option<Uuid>) -> Result<Vec<OrgCa>> {
    Ok(sqlx::query_as!(
        OrgCa,
        "SELECT a.cluster_id, a.org_id, a.mount, a.issuer_id, a.certificate_pem, a.credentials_generation,
                a.serving_certificate_pem, c.name, c.region, c.generation, c.project_id
         FROM cluster_cas a JOIN clusters c ON c.id = a.cluster_id
         WHERE a.org_id = $1 AND a.destroyed_at IS NULL AND ($2::uuid IS NULL OR c.project_id = $2)",
        org,
        project,
    )
    .fetch_all(conn)
    .await?)
}

/// What a caller holds in a cluster's organization, read in one snapshot:
/// its credential epoch (0 until first revoked), role, project role, and
/// whether its credential is still live.
pub(in crate::app) struct HeldNow {
    pub epoch: i64,
    pub role: Option<String>,
    pub project_role: Option<String>,
    pub credential_live: bool,
}

/// Who is asking, for [`held_now`].
pub(in crate::app) struct Holder {
    pub org: Uuid,
    pub principal: Uuid,
    pub is_user: bool,
    pub project: Uuid,
    /// The API token or session, if the caller holds one.
    pub credential: Option<Uuid>,
    /// The `jti` of an exchanged token, if the caller holds one.
    pub exchanged: Option<Uuid>,
}

pub(in crate::app) async fn held_now(conn: &mut PgConnection, holder: Holder) -> Result<HeldNow> {
    Ok(sqlx::query_as!(
        HeldNow,
        r#"SELECT
             COALESCE((SELECT epoch FROM principal_credential_epochs WHERE org_id = $1 AND principal_id = $2), 0)
                 AS "epoch!",
             CASE WHEN $3 THEN (SELECT role FROM memberships WHERE org_id = $1 AND user_id = $2)
                  ELSE (SELECT role FROM service_accounts WHERE org_id = $1 AND id = $2) END AS role,
             (SELECT role FROM project_members WHERE project_id = $4 AND principal_id = $2) AS project_role,
             ($5::uuid IS NULL
              OR EXISTS (SELECT 1 FROM api_tokens WHERE id = $5 AND revoked_at IS NULL
                             AND (expires_at IS NULL OR expires_at > now()))
              OR EXISTS (SELECT 1 FROM sessions WHERE id = $5 AND revoked_at IS NULL AND expires_at > now()))
             AND NOT EXISTS (SELECT 1 FROM exchanged_tokens WHERE issued_jti = $6 AND revoked_at IS NOT NULL)
                 AS "credential_live!""#,
        holder.org,
        holder.principal,
        holder.is_user,
        holder.project,
        holder.credential,
        holder.exchanged,
    )
    .fetch_one(conn)
    .await?)
}
