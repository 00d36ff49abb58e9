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

use crate::app::authz::Lock;
use crate::app::infra::store::cluster_cas::{self as store, Holder};
use crate::app::kernel::audit::{self, AuditRecord};
use crate::app::kernel::changes::RegionalChange;
use crate::app::kernel::jsonb;
use crate::app::region::command::{self, ChangeKind, CommandHeader};
use crate::app::region::observations::OperationProgress;
use crate::app::region::observed::ObservedStored;
use crate::app::region::outbox;
use crate::app::{App, Error, RequestContext, ResourceRef, Result};
use crate::ids::{ClusterId, ClusterKind, ProjectId, ProjectKind};
use crate::model::{
    ClusterAccess, ExecCredential, KubeconfigFormat, KubeconfigView, OperationError, OperationStatus, OperationView,
    PlannedChange,
};
use moke_proto::region as pb;
use prost::Message;

/// The shortest kubeconfig lifetime (default and longest are configured:
/// `auth.kubeconfig_default_seconds`, `auth.kubeconfig_max_seconds`).
pub const MIN_KUBECONFIG_SECONDS: i64 = 600;
/// Exec-plugin credentials are short-lived.
pub const EXEC_CREDENTIAL_SECONDS: i64 = 3600;
/// Control-plane serving certificates.
const SERVING_SECONDS: i64 = 365 * 24 * 3600;

/// Stores a new cluster's CA in the caller's transaction.
pub(in crate::app) async fn store_ca(
    tx: &mut PgConnection,
    cluster: Uuid,
    org: Uuid,
    ca: &crate::vault::ClusterCa,
) -> Result<()> {
    store::insert(tx, cluster, org, ca).await?;
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
    /// Why the control plane's certificate request could not be signed
    /// (set aside after its attempts).
    serving_error: Option<String>,
}

/// Attempts at signing one control plane's certificate request before it is
/// set aside (with backoff from 2 s to 5 min between them, about half an hour).
const SERVING_ATTEMPTS: i32 = 10;

impl App {
    async fn credentials_target(
        &self,
        ctx: &RequestContext,
        project: &ResourceRef<ProjectKind>,
        cluster: &ResourceRef<ClusterKind>,
    ) -> Result<ClusterCredentialsTarget> {
        let mut conn = self.db().acquire().await?;
        let row = super::lookup(&mut conn, ctx, project, cluster, Action::Read, Lock::None).await?;
        let ca = store::issuing(&mut conn, row.id, SERVING_ATTEMPTS)
            .await?
            .ok_or_else(|| Error::conflict("no_certificate_authority", "this cluster has no certificate authority"))?;
        let status: ObservedStored = jsonb::from_column("cluster status", &row.status)?;
        let endpoint = status.endpoint.as_deref().and_then(serving_endpoint);
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
            serving_error: ca.serving_error,
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
        let user = crate::app::principal_ref(&ctx.principal);
        let groups = groups(access);
        // A certificate never outlives the credential that asked for it.
        let lifetime = match ctx.principal.expires_at {
            Some(end) => lifetime.min(end - Utc::now().timestamp()),
            None => lifetime,
        };
        if lifetime < 60 {
            return Err(Error::refused("exceeds_credential", "refused: your credential expires within a minute"));
        }
        let epoch = current_epoch(&mut *self.db().acquire().await?, ctx, target).await?;
        let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256)
            .map_err(|e| Error::Internal(anyhow::anyhow!("key generation: {e}")))?;
        let mut params = rcgen::CertificateParams::default();
        params.distinguished_name.push(rcgen::DnType::CommonName, user.as_str());
        for group in &groups {
            params.distinguished_name.push(rcgen::DnType::OrganizationName, group.as_str());
        }
        // One OU (a DN holds one value per attribute type here): the
        // cluster's credentials generation and the principal's epoch.
        params.distinguished_name.push(
            rcgen::DnType::OrganizationalUnitName,
            format!("moke-credentials-{}.epoch-{epoch}", target.credentials_generation),
        );
        let csr = params
            .serialize_request(&key)
            .and_then(|csr| csr.pem())
            .map_err(|e| Error::Internal(anyhow::anyhow!("certificate request: {e}")))?;
        if ctx.is_dry_run() {
            // Nothing is signed: the plan is the certificate it would be.
            return Err(crate::app::kernel::dry_run::outside_database(PlannedChange {
                action: "cluster.credentials_issue".into(),
                resource_type: "cluster".into(),
                resource_id: Some(ClusterId::from_uuid(target.cluster_id).to_string()),
                details: json!({
                    "user": user, "groups": groups, "lifetime_seconds": lifetime, "purpose": purpose,
                    "credentials_generation": target.credentials_generation, "principal_epoch": epoch,
                }),
            }));
        }
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
                    "credentials_generation": target.credentials_generation, "principal_epoch": epoch,
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
        let auth = &self.config().auth;
        let lifetime = match expiry_seconds {
            Some(asked) => {
                if !(MIN_KUBECONFIG_SECONDS..=auth.kubeconfig_max_seconds).contains(&asked) {
                    return Err(Error::invalid_field(
                        "expiry_seconds",
                        "out_of_range",
                        format!("must be between {MIN_KUBECONFIG_SECONDS} and {}", auth.kubeconfig_max_seconds),
                    ));
                }
                if ctx.principal.expires_at.is_some_and(|end| Utc::now().timestamp() + asked > end) {
                    return Err(Error::invalid_field(
                        "expiry_seconds",
                        "exceeds_credential",
                        "longer than the credential you are using has left",
                    ));
                }
                asked
            }
            None => auth.kubeconfig_default_seconds,
        };
        let target = self.credentials_target(ctx, project, cluster).await?;
        let access = self.cluster_access(ctx, &target, access)?;
        let endpoint = target.endpoint.clone().ok_or_else(|| match &target.serving_error {
            Some(error) => Error::conflict(
                "not_ready",
                format!("the control plane's certificate could not be signed ({error}); contact support"),
            ),
            None => {
                Error::conflict("not_ready", "the cluster's control plane is not serving yet; retry when it is running")
            }
        })?;
        let context = format!("{}-{}", target.name, ClusterId::from_uuid(target.cluster_id));
        let user = format!("{}@{context}", crate::app::principal_ref(&ctx.principal));
        let (user_entry, expires_at) = match format {
            KubeconfigFormat::Certificate => {
                let (certificate, key, expires_at) =
                    self.issue_client_certificate(ctx, &target, access, lifetime, "kubeconfig").await?;
                (
                    json!({
                        "client-certificate-data": STANDARD.encode(certificate),
                        "client-key-data": STANDARD.encode(key),
                    }),
                    Some(expires_at),
                )
            }
            KubeconfigFormat::Exec => (
                json!({ "exec": {
                    "apiVersion": "client.authentication.k8s.io/v1",
                    "command": "moke",
                    "args": [
                        "kubeconfig", "token",
                        "--project", ProjectId::from_uuid(target.project_id).to_string(),
                        "--cluster", ClusterId::from_uuid(target.cluster_id).to_string(),
                        "--access", access.as_str(),
                    ],
                    "interactiveMode": "Never",
                    "provideClusterInfo": false,
                }}),
                None,
            ),
        };
        // Serialized, never assembled as text: nothing a region reports can
        // add keys or documents to the customer's kubeconfig.
        let document = json!({
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{ "name": context, "cluster": {
                "server": endpoint,
                "certificate-authority-data": STANDARD.encode(&target.ca_pem),
            }}],
            "users": [{ "name": user, "user": user_entry }],
            "contexts": [{ "name": context, "context": { "cluster": context, "user": user } }],
            "current-context": context,
            "preferences": {},
        });
        let kubeconfig = serde_norway::to_string(&document).map_err(|e| Error::Internal(e.into()))?;
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
        let target = &target;
        let request = (target.cluster_id, "revoke");
        self.idempotent(ctx, "cluster_credentials_revoke", &request, |claim| async move {
            let mut tx = claim.begin(self.db()).await?;
            let generation = store::next_credentials_generation(&mut tx, target.cluster_id).await?;
            let op = self
                .record_change(
                    &mut tx,
                    ctx,
                    RegionalChange {
                        kind: ChangeKind::ClusterCertificate,
                        action: "cluster.credentials_revoke",
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
                            target,
                            target.serving_certificate_pem.as_deref().unwrap_or_default(),
                            generation,
                        )
                    },
                )
                .await?;
            claim.complete(&mut tx, 202, &op).await?;
            self.commit(ctx, tx).await?;
            Ok(op)
        })
        .await
    }

    /// Signs the control planes' pending certificate requests and sends the
    /// certificates to their regions. Returns how many were signed.
    pub async fn sign_serving_certificates_once(&self) -> Result<usize> {
        let mut conn = self.db().acquire().await?;
        let pending = store::pending_serving(&mut conn, SERVING_ATTEMPTS).await?;
        drop(conn);
        let mut signed = 0;
        for row in pending {
            // One request that cannot be signed waits on its own backoff;
            // the others go on.
            let signing = self.vault().sign_verbatim(
                &row.mount,
                &row.issuer_id,
                "kube-serving",
                &row.serving_csr,
                SERVING_SECONDS,
            );
            let certificate = match signing.await {
                Ok(certificate) => certificate,
                Err(error) => {
                    self.serving_certificate_failed(
                        &row.serving_csr,
                        row.cluster_id,
                        row.org_id,
                        row.serving_attempts,
                        &error,
                    )
                    .await?;
                    continue;
                }
            };
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
                serving_error: None,
            };
            let mut tx = self.db().begin().await?;
            if !store::store_serving_certificate(
                &mut tx,
                row.cluster_id,
                &row.serving_csr,
                &certificate.certificate_pem,
            )
            .await?
            {
                continue;
            }
            let system = RequestContext::system(row.org_id);
            self.record_change(
                &mut tx,
                &system,
                RegionalChange {
                    kind: ChangeKind::ClusterCertificate,
                    action: "cluster.serving_certificate_issue",
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

    /// Records a failed signing of `csr`: retried after a backoff. Only a
    /// failure of this request counts as an attempt (Vault refused it, or
    /// failed it while otherwise healthy); an outage does not use them up.
    /// After [`SERVING_ATTEMPTS`] the request is set aside, visibly: in
    /// the log (with Vault's answer), the organization's audit log and the
    /// kubeconfig answer (with a code that names no internals).
    async fn serving_certificate_failed(
        &self,
        csr: &str,
        cluster: Uuid,
        org: Uuid,
        attempts: i32,
        error: &crate::vault::VaultUnavailable,
    ) -> Result<()> {
        let config = &self.config().outbox;
        let delay =
            crate::app::region::outbox::retry_delay(attempts, config.retry_base_seconds, config.retry_max_seconds);
        let refused = error.refused() || (!error.ours() && self.vault().healthy().await);
        let code = if refused { "certificate_request_refused" } else { "certificate_authority_unreachable" };
        let mut tx = self.db().begin().await?;
        let recorded = store::serving_failed(&mut tx, cluster, csr, code, delay.as_secs_f64(), refused).await?;
        let cluster_ref = ClusterId::from_uuid(cluster);
        match recorded {
            Some(attempts) if refused && attempts >= SERVING_ATTEMPTS => {
                crate::background::dead_lettered(
                    "serving_certificates",
                    &format!("certificate request of {cluster_ref}"),
                    &error.to_string(),
                );
                audit::record(
                    &mut tx,
                    &RequestContext::system(org),
                    AuditRecord {
                        action: "cluster.serving_certificate_failed",
                        resource_type: "cluster",
                        resource_id: Some(cluster_ref.to_string()),
                        details: json!({ "attempts": attempts, "error": code }),
                    },
                )
                .await?;
                fail_waiting_cluster_create(&mut tx, cluster, code).await?;
            }
            Some(attempts) => tracing::warn!(cluster = %cluster_ref, attempts, %error, retry_in = ?delay,
                "could not sign a control-plane certificate request; will retry"),
            None => {}
        }
        tx.commit().await?;
        Ok(())
    }

    /// Destroys in Vault the CAs of clusters that no longer exist.
    pub async fn destroy_orphaned_cluster_cas_once(&self) -> Result<usize> {
        let mut conn = self.db().acquire().await?;
        let orphans = store::orphans(&mut conn).await?;
        let count = orphans.len();
        for orphan in orphans {
            self.vault().delete_cluster_ca(&orphan.mount, &orphan.issuer_id, &orphan.key_id).await?;
            store::mark_destroyed(&mut conn, orphan.cluster_id).await?;
        }
        Ok(count)
    }
}

/// A control-plane endpoint fit for a kubeconfig: `https://host[:port]`
/// and nothing else (no credentials, path, query or fragment).
pub(in crate::app) fn serving_endpoint(reported: &str) -> Option<String> {
    let url = url::Url::parse(reported).ok()?;
    let plain = url.scheme() == "https"
        && url.host().is_some()
        && url.username().is_empty()
        && url.password().is_none()
        && matches!(url.path(), "" | "/")
        && url.query().is_none()
        && url.fragment().is_none();
    plain.then(|| reported.trim_end_matches('/').to_string())
}

/// Fails the cluster's unfinished create Operation, which waits for the
/// control plane to serve: a certificate request set aside never gets there.
async fn fail_waiting_cluster_create(tx: &mut PgConnection, cluster: Uuid, code: &str) -> Result<()> {
    let waiting: Option<Uuid> = sqlx::query_scalar(
        "SELECT id FROM operations WHERE target_id = $1 AND kind = 'cluster_create'
           AND status NOT IN ('succeeded', 'failed')",
    )
    .bind(cluster)
    .fetch_optional(&mut *tx)
    .await?;
    let Some(operation_id) = waiting else { return Ok(()) };
    let failed = OperationProgress {
        region: None,
        operation_id,
        status: OperationStatus::Failed,
        step: "control plane: its serving certificate could not be signed".into(),
        progress: 100,
        error: Some(OperationError {
            code: code.into(),
            message: "the control plane's certificate could not be signed; contact support".into(),
        }),
        earlier: Vec::new(),
    };
    crate::app::region::observations::record_progress(tx, failed).await.map(drop)
}

/// Where a revocation applies.
#[derive(Debug, Clone, Copy)]
pub(in crate::app) enum Reach {
    /// Every cluster of the organization (an organization role changed, a
    /// credential ended).
    Organization,
    /// The clusters of one project (a project role changed): certificates
    /// for other projects' clusters stay valid, since those clusters never
    /// learn the new epoch.
    Project(Uuid),
}

/// Ends a principal's cluster credentials (a member removed or demoted, a
/// service account deleted, a token revoked, a password reset): its
/// credential epoch goes up, and the control planes within `reach` learn to
/// refuse certificates of older epochs. Call inside the change's
/// transaction; the commands leave with it, whatever the regions' backlog.
#[allow(clippy::too_many_arguments)]
pub(in crate::app) async fn revoke_principal_credentials(
    app: &App,
    tx: &mut PgConnection,
    ctx: &RequestContext,
    org: Uuid,
    principal: Uuid,
    principal_text: &str,
    reason: &str,
    reach: Reach,
) -> Result<()> {
    let epoch = store::next_principal_epoch(&mut *tx, org, principal).await?;
    let project = match reach {
        Reach::Organization => None,
        Reach::Project(project) => Some(project),
    };
    let clusters = store::of_org(&mut *tx, org, project).await?;
    if clusters.is_empty() {
        return Ok(());
    }
    // Only this principal's entry travels: the region keeps the highest
    // epoch it has seen per principal, so entries never undo each other,
    // and a project's revocation reaches no other project's clusters.
    let entry = pb::PrincipalEpoch { principal: principal_text.to_string(), epoch };
    // The organization's own record of the change: the caller when it acts
    // there, else the server (a password reset has no organization).
    let system = if ctx.principal.org_id == org {
        ctx.on_behalf()
    } else {
        RequestContext { principal: RequestContext::system(org).principal, ..ctx.on_behalf() }
    };
    for row in clusters {
        // At most one revocation waits per cluster: a later one takes its
        // place, carrying both, so repeated revocations cannot flood a
        // region's queue. The merged command is a new message (a new id, due
        // now): the waiting one may already have reached the region under
        // its id, which the queue would then drop as a duplicate. One the
        // relay is sending right now (locked) is left alone.
        let queued = outbox::undelivered_certificate_commands(&mut *tx, row.cluster_id).await?;
        let waiting = queued.into_iter().find_map(|(id, command)| {
            let command = pb::Command::decode(command.as_slice()).ok()?;
            (!command.principal_epochs.is_empty()).then_some((id, command))
        });
        if let Some((waiting_id, mut command)) = waiting {
            match command.principal_epochs.iter_mut().find(|e| e.principal == principal_text) {
                Some(existing) => existing.epoch = existing.epoch.max(epoch),
                None => command.principal_epochs.push(entry.clone()),
            }
            // As a new command it goes after whatever was queued since:
            // epochs only (one queued by an older gateway may carry more).
            let command = pb::Command {
                ca_pem: String::new(),
                serving_certificate_pem: String::new(),
                credentials_generation: 0,
                written_at_unix_micros: chrono::Utc::now().timestamp_micros(),
                ..command
            };
            outbox::replace(&mut *tx, waiting_id, &command).await?;
            audit::record(
                &mut *tx,
                &system,
                AuditRecord {
                    action: "cluster.principal_credentials_revoke",
                    resource_type: "cluster",
                    resource_id: Some(ClusterId::from_uuid(row.cluster_id).to_string()),
                    details: json!({ "principal": principal_text, "epoch": epoch, "reason": reason,
                                     "joined_waiting_command": true }),
                },
            )
            .await?;
            continue;
        }
        let target = ClusterCredentialsTarget {
            org_id: row.org_id,
            project_id: row.project_id,
            cluster_id: row.cluster_id,
            name: row.name.clone(),
            region: row.region.clone(),
            generation: row.generation,
            endpoint: None,
            mount: row.mount,
            issuer_id: row.issuer_id,
            ca_pem: row.certificate_pem,
            credentials_generation: row.credentials_generation,
            serving_certificate_pem: row.serving_certificate_pem.clone(),
            serving_error: None,
        };
        app.record_change_within(
            &mut *tx,
            &system,
            RegionalChange {
                kind: ChangeKind::ClusterCertificate,
                action: "cluster.principal_credentials_revoke",
                target_id: row.cluster_id,
                target_ref: ClusterId::from_uuid(row.cluster_id).to_string(),
                target_name: &row.name,
                generation: row.generation,
                region: &row.region,
                needs_region: true,
                details: json!({ "principal": principal_text, "epoch": epoch, "reason": reason }),
            },
            |op| {
                // Epochs only: no CA, serving certificate or credentials
                // generation (the region keeps what it has for empty ones),
                // so a revocation, wherever it lands among a cluster's
                // commands, never puts back an older certificate.
                let header = CommandHeader {
                    kind: ChangeKind::ClusterCertificate,
                    operation: op.id,
                    org_id: target.org_id,
                    cluster_id: target.cluster_id,
                    name: &target.name,
                    generation: target.generation,
                };
                command::revocation(header, vec![entry.clone()])
            },
            None,
        )
        .await?;
    }
    Ok(())
}

/// The caller's credential epoch in the cluster's organization (0 until
/// first revoked), read in one snapshot with what the caller still holds:
/// its role, its project role there, and its credential. When any changed
/// since the caller was authenticated (a revocation raced this request),
/// nothing is issued: a certificate either carries an epoch the revocation
/// already outdates, or is refused here.
async fn current_epoch(
    conn: &mut PgConnection,
    ctx: &RequestContext,
    target: &ClusterCredentialsTarget,
) -> Result<i64> {
    let principal = &ctx.principal;
    let credential = match principal.credential {
        moke_iam::Credential::ApiToken(id) | moke_iam::Credential::Session { id, .. } => Some(id),
        moke_iam::Credential::Exchanged { .. } | moke_iam::Credential::None => None,
    };
    let exchanged = match principal.credential {
        moke_iam::Credential::Exchanged { jti } => Some(jti),
        _ => None,
    };
    let holder = Holder {
        org: target.org_id,
        principal: principal.id,
        is_user: principal.kind == moke_iam::PrincipalKind::User,
        project: target.project_id,
        credential,
        exchanged,
    };
    let row = store::held_now(conn, holder).await?;
    let project_role = row.project_role.as_deref().and_then(moke_iam::ProjectRole::parse);
    let unchanged = row.credential_live
        && row.role.as_deref() == Some(principal.role.as_str())
        && project_role == principal.project_role(target.project_id);
    if !unchanged {
        return Err(Error::Unauthenticated);
    }
    Ok(row.epoch)
}

fn certificate_command(
    op: &OperationView,
    target: &ClusterCredentialsTarget,
    serving_certificate_pem: &str,
    credentials_generation: i64,
) -> pb::Command {
    let header = CommandHeader {
        kind: ChangeKind::ClusterCertificate,
        operation: op.id,
        org_id: target.org_id,
        cluster_id: target.cluster_id,
        name: &target.name,
        generation: target.generation,
    };
    command::certificate(header, &target.ca_pem, serving_certificate_pem, credentials_generation)
}
