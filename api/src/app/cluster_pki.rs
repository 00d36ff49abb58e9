//! Each hosted cluster's certificate authority and the credentials it
//! issues: the CA is a Vault PKI issuer made when the cluster is made and
//! destroyed after it; the region's control plane sends a certificate
//! request for its serving key (which never leaves the region) and gets the
//! signed certificate back as a command; people and service accounts get
//! kubeconfigs whose client certificate names them (CN) and their groups
//! (O), derived from their roles.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use chrono::{DateTime, Utc};
use moke_iam::{Action, Target};
use serde_json::json;
use sqlx::PgConnection;
use uuid::Uuid;

use super::audit::{self, AuditRecord};
use super::changes::RegionalChange;
use super::{App, Error, RequestContext, ResourceRef, Result};
use crate::ids::{ClusterId, ClusterKind, OrgId, ProjectId, ProjectKind};
use crate::model::{ClusterAccess, ExecCredential, KubeconfigFormat, KubeconfigView, OperationView};

/// Kubeconfig lifetimes: default 7 days, at least 10 minutes, at most 30 days.
pub const DEFAULT_KUBECONFIG_SECONDS: i64 = 7 * 24 * 3600;
pub const MIN_KUBECONFIG_SECONDS: i64 = 600;
pub const MAX_KUBECONFIG_SECONDS: i64 = 30 * 24 * 3600;
/// Exec-plugin credentials are short-lived.
pub const EXEC_CREDENTIAL_SECONDS: i64 = 3600;
/// Control-plane serving certificates.
const SERVING_SECONDS: i64 = 365 * 24 * 3600;

/// Stores a new cluster's CA in the caller's transaction.
pub(super) async fn store_ca(
    tx: &mut PgConnection,
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
    .execute(tx)
    .await?;
    Ok(())
}

/// The Kubernetes groups of an access level.
fn groups(access: ClusterAccess) -> Vec<String> {
    let group = match access {
        ClusterAccess::Admin => "moke:cluster-admins",
        ClusterAccess::Edit => "moke:editors",
        ClusterAccess::View => "moke:viewers",
    };
    vec![group.to_string()]
}

/// The permission an access level needs.
fn needed(access: ClusterAccess) -> Action {
    match access {
        ClusterAccess::Admin => Action::AdministerClusters,
        ClusterAccess::Edit => Action::ManageResources,
        ClusterAccess::View => Action::Read,
    }
}

struct ClusterCredentialsTarget {
    org_id: Uuid,
    project_id: Uuid,
    cluster_id: Uuid,
    name: String,
    region: String,
    generation: i64,
    endpoint: Option<String>,
    mount: String,
    issuer_id: String,
    ca_pem: String,
    credentials_generation: i64,
    serving_certificate_pem: Option<String>,
}

impl App {
    async fn credentials_target(
        &self,
        ctx: &RequestContext,
        project: &ResourceRef<ProjectKind>,
        cluster: &ResourceRef<ClusterKind>,
    ) -> Result<ClusterCredentialsTarget> {
        let mut conn = self.db().acquire().await?;
        let row = super::clusters::find(&mut conn, ctx, project, cluster, false).await?;
        moke_iam::authorize(&ctx.principal, Action::Read, Target::project(row.org_id, row.project_id))?;
        let ca = sqlx::query!(
            "SELECT mount, issuer_id, certificate_pem, credentials_generation, serving_certificate_pem
             FROM cluster_cas WHERE cluster_id = $1 AND destroyed_at IS NULL",
            row.id,
        )
        .fetch_optional(&mut *conn)
        .await?
        .ok_or_else(|| Error::conflict("no_certificate_authority", "this cluster has no certificate authority"))?;
        let endpoint = row.status["endpoint"].as_str().filter(|e| !e.is_empty()).map(str::to_string);
        Ok(ClusterCredentialsTarget {
            org_id: row.org_id,
            project_id: row.project_id,
            cluster_id: row.id,
            name: row.name.clone(),
            region: row.spec()?.region,
            generation: row.generation,
            endpoint,
            mount: ca.mount,
            issuer_id: ca.issuer_id,
            ca_pem: ca.certificate_pem,
            credentials_generation: ca.credentials_generation,
            serving_certificate_pem: ca.serving_certificate_pem,
        })
    }

    /// The highest access the caller has to a cluster, or the one asked for
    /// if the caller holds it (the one authorization function decides).
    fn cluster_access(
        &self,
        ctx: &RequestContext,
        target: &ClusterCredentialsTarget,
        asked: Option<ClusterAccess>,
    ) -> Result<ClusterAccess> {
        let on = Target::project(target.org_id, target.project_id);
        if let Some(asked) = asked {
            moke_iam::authorize(&ctx.principal, needed(asked), on)?;
            return Ok(asked);
        }
        Ok([ClusterAccess::Admin, ClusterAccess::Edit, ClusterAccess::View]
            .into_iter()
            .find(|access| moke_iam::authorize(&ctx.principal, needed(*access), on).is_ok())
            .unwrap_or(ClusterAccess::View))
    }

    /// Issues a client certificate for the caller from the cluster's CA and audits it.
    async fn issue_client_certificate(
        &self,
        ctx: &RequestContext,
        target: &ClusterCredentialsTarget,
        access: ClusterAccess,
        lifetime: i64,
        purpose: &str,
    ) -> Result<(String, String, DateTime<Utc>)> {
        let user = super::principal_ref(&ctx.principal);
        let groups = groups(access);
        let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256)
            .map_err(|e| Error::Internal(anyhow::anyhow!("key generation: {e}")))?;
        let mut params = rcgen::CertificateParams::default();
        params.distinguished_name.push(rcgen::DnType::CommonName, user.as_str());
        for group in &groups {
            params.distinguished_name.push(rcgen::DnType::OrganizationName, group.as_str());
        }
        params
            .distinguished_name
            .push(rcgen::DnType::OrganizationalUnitName, format!("moke-credentials-{}", target.credentials_generation));
        let csr = params
            .serialize_request(&key)
            .and_then(|csr| csr.pem())
            .map_err(|e| Error::Internal(anyhow::anyhow!("certificate request: {e}")))?;
        let signed =
            self.vault().sign_verbatim(&target.mount, &target.issuer_id, "kube-client", &csr, lifetime).await?;
        let expires_at = DateTime::from_timestamp(signed.expiration, 0).unwrap_or_else(Utc::now);
        let mut conn = self.db().acquire().await?;
        audit::record(
            &mut conn,
            ctx,
            AuditRecord {
                action: "cluster.credentials_issue",
                resource_type: "cluster",
                resource_id: Some(ClusterId::from_uuid(target.cluster_id).to_string()),
                details: json!({
                    "serial_number": signed.serial_number, "user": user, "groups": groups,
                    "expires_at": expires_at, "purpose": purpose,
                    "credentials_generation": target.credentials_generation,
                }),
            },
        )
        .await?;
        Ok((signed.certificate_pem, key.serialize_pem(), expires_at))
    }

    /// `cluster_kubeconfig`: a kubeconfig for the caller. With a client
    /// certificate (default), or calling `moke kubeconfig token` (exec).
    pub async fn cluster_kubeconfig(
        &self,
        ctx: &RequestContext,
        project: &ResourceRef<ProjectKind>,
        cluster: &ResourceRef<ClusterKind>,
        expiry_seconds: Option<i64>,
        access: Option<ClusterAccess>,
        format: KubeconfigFormat,
    ) -> Result<KubeconfigView> {
        let lifetime = expiry_seconds.unwrap_or(DEFAULT_KUBECONFIG_SECONDS);
        if !(MIN_KUBECONFIG_SECONDS..=MAX_KUBECONFIG_SECONDS).contains(&lifetime) {
            return Err(Error::invalid_field(
                "expiry_seconds",
                "out_of_range",
                format!("must be between {MIN_KUBECONFIG_SECONDS} and {MAX_KUBECONFIG_SECONDS}"),
            ));
        }
        let target = self.credentials_target(ctx, project, cluster).await?;
        let access = self.cluster_access(ctx, &target, access)?;
        let endpoint = target.endpoint.clone().ok_or_else(|| {
            Error::conflict("not_ready", "the cluster's control plane is not serving yet; retry when it is running")
        })?;
        let context = format!("{}-{}", target.name, ClusterId::from_uuid(target.cluster_id));
        let user = format!("{}@{context}", super::principal_ref(&ctx.principal));
        let (user_entry, expires_at) = match format {
            KubeconfigFormat::Certificate => {
                let (certificate, key, expires_at) =
                    self.issue_client_certificate(ctx, &target, access, lifetime, "kubeconfig").await?;
                (
                    format!(
                        "    client-certificate-data: {}\n    client-key-data: {}\n",
                        STANDARD.encode(certificate),
                        STANDARD.encode(key)
                    ),
                    Some(expires_at),
                )
            }
            KubeconfigFormat::Exec => (
                format!(
                    "    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: moke\n      args:\n      \
                     - kubeconfig\n      - token\n      - --project\n      - {}\n      - --cluster\n      - {}\n      \
                     - --access\n      - {}\n      interactiveMode: Never\n      provideClusterInfo: false\n",
                    ProjectId::from_uuid(target.project_id),
                    ClusterId::from_uuid(target.cluster_id),
                    access.as_str()
                ),
                None,
            ),
        };
        let kubeconfig = format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: {context}\n  cluster:\n    server: {endpoint}\n    \
             certificate-authority-data: {}\nusers:\n- name: {user}\n  user:\n{user_entry}contexts:\n- name: {context}\n  \
             context:\n    cluster: {context}\n    user: {user}\ncurrent-context: {context}\npreferences: {{}}\n",
            STANDARD.encode(&target.ca_pem)
        );
        Ok(KubeconfigView { kubeconfig, expires_at, groups: groups(access) })
    }

    /// `cluster_credentials_create`: an ExecCredential (client.authentication.k8s.io/v1)
    /// with a short-lived client certificate: what `moke kubeconfig token` prints.
    pub async fn cluster_credentials_create(
        &self,
        ctx: &RequestContext,
        project: &ResourceRef<ProjectKind>,
        cluster: &ResourceRef<ClusterKind>,
        access: Option<ClusterAccess>,
    ) -> Result<ExecCredential> {
        let target = self.credentials_target(ctx, project, cluster).await?;
        let access = self.cluster_access(ctx, &target, access)?;
        let (certificate, key, expires_at) =
            self.issue_client_certificate(ctx, &target, access, EXEC_CREDENTIAL_SECONDS, "exec").await?;
        Ok(ExecCredential::new(certificate, key, expires_at))
    }

    /// `cluster_credentials_revoke`: every credential issued so far stops
    /// working (the control plane refuses older credential generations).
    pub async fn cluster_credentials_revoke(
        &self,
        ctx: &RequestContext,
        project: &ResourceRef<ProjectKind>,
        cluster: &ResourceRef<ClusterKind>,
    ) -> Result<OperationView> {
        let target = self.credentials_target(ctx, project, cluster).await?;
        moke_iam::authorize(
            &ctx.principal,
            Action::AdministerClusters,
            Target::project(target.org_id, target.project_id),
        )?;
        let mut tx = self.db().begin().await?;
        let generation = sqlx::query_scalar!(
            "UPDATE cluster_cas SET credentials_generation = credentials_generation + 1
             WHERE cluster_id = $1 RETURNING credentials_generation",
            target.cluster_id,
        )
        .fetch_one(&mut *tx)
        .await?;
        let op = self
            .record_change(
                &mut tx,
                ctx,
                RegionalChange {
                    kind: "cluster_certificate",
                    action: "cluster.credentials_revoke",
                    target_type: "cluster",
                    target_id: target.cluster_id,
                    target_ref: ClusterId::from_uuid(target.cluster_id).to_string(),
                    target_name: &target.name,
                    generation: target.generation,
                    region: &target.region,
                    needs_region: true,
                    details: json!({ "credentials_generation": generation }),
                },
                |op| {
                    certificate_command(
                        op,
                        &target,
                        target.serving_certificate_pem.as_deref().unwrap_or_default(),
                        generation,
                    )
                },
            )
            .await?;
        tx.commit().await?;
        Ok(op)
    }

    /// Signs the control planes' pending certificate requests and sends the
    /// certificates to their regions. Returns how many were signed.
    pub async fn sign_serving_certificates_once(&self) -> Result<usize> {
        let pending = sqlx::query!(
            r#"SELECT a.cluster_id, a.org_id, a.mount, a.issuer_id, a.certificate_pem, a.credentials_generation,
                      a.serving_csr AS "serving_csr!", c.name, c.region, c.generation, c.project_id
               FROM cluster_cas a JOIN clusters c ON c.id = a.cluster_id
               WHERE a.serving_csr IS NOT NULL AND a.serving_certificate_pem IS NULL AND a.destroyed_at IS NULL
               LIMIT 20"#,
        )
        .fetch_all(self.db())
        .await?;
        let mut signed = 0;
        for row in pending {
            let certificate = self
                .vault()
                .sign_verbatim(&row.mount, &row.issuer_id, "kube-serving", &row.serving_csr, SERVING_SECONDS)
                .await?;
            let target = ClusterCredentialsTarget {
                org_id: row.org_id,
                project_id: row.project_id,
                cluster_id: row.cluster_id,
                name: row.name.clone(),
                region: row.region.clone(),
                generation: row.generation,
                endpoint: None,
                mount: row.mount.clone(),
                issuer_id: row.issuer_id.clone(),
                ca_pem: row.certificate_pem.clone(),
                credentials_generation: row.credentials_generation,
                serving_certificate_pem: Some(certificate.certificate_pem.clone()),
            };
            let mut tx = self.db().begin().await?;
            let stored = sqlx::query!(
                "UPDATE cluster_cas SET serving_certificate_pem = $3
                 WHERE cluster_id = $1 AND serving_csr = $2 AND serving_certificate_pem IS NULL RETURNING cluster_id",
                row.cluster_id,
                row.serving_csr,
                certificate.certificate_pem,
            )
            .fetch_optional(&mut *tx)
            .await?;
            if stored.is_none() {
                continue;
            }
            let system = RequestContext::system(row.org_id);
            self.record_change(
                &mut tx,
                &system,
                RegionalChange {
                    kind: "cluster_certificate",
                    action: "cluster.serving_certificate_issue",
                    target_type: "cluster",
                    target_id: row.cluster_id,
                    target_ref: ClusterId::from_uuid(row.cluster_id).to_string(),
                    target_name: &row.name,
                    generation: row.generation,
                    region: &row.region,
                    needs_region: true,
                    details: json!({ "serial_number": certificate.serial_number }),
                },
                |op| certificate_command(op, &target, &certificate.certificate_pem, row.credentials_generation),
            )
            .await?;
            tx.commit().await?;
            signed += 1;
        }
        Ok(signed)
    }

    /// Destroys in Vault the CAs of clusters that no longer exist.
    pub async fn destroy_orphaned_cluster_cas_once(&self) -> Result<usize> {
        let orphans = sqlx::query!(
            "SELECT cluster_id, mount, issuer_id, key_id FROM cluster_cas a
             WHERE destroyed_at IS NULL AND NOT EXISTS (SELECT 1 FROM clusters c WHERE c.id = a.cluster_id)
             LIMIT 20",
        )
        .fetch_all(self.db())
        .await?;
        let count = orphans.len();
        for orphan in orphans {
            self.vault().delete_cluster_ca(&orphan.mount, &orphan.issuer_id, &orphan.key_id).await?;
            sqlx::query!("UPDATE cluster_cas SET destroyed_at = now() WHERE cluster_id = $1", orphan.cluster_id)
                .execute(self.db())
                .await?;
        }
        Ok(count)
    }
}

fn certificate_command(
    op: &OperationView,
    target: &ClusterCredentialsTarget,
    serving_certificate_pem: &str,
    credentials_generation: i64,
) -> serde_json::Value {
    json!({
        "kind": "cluster_certificate",
        "operation_id": op.id,
        "org_id": OrgId::from_uuid(target.org_id),
        "project_id": ProjectId::from_uuid(target.project_id),
        "cluster_id": ClusterId::from_uuid(target.cluster_id),
        "name": target.name,
        "generation": target.generation,
        "ca_pem": target.ca_pem,
        "serving_certificate_pem": serving_certificate_pem,
        "credentials_generation": credentials_generation,
    })
}
