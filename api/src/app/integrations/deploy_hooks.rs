//! Inbound CI/CD deploy webhooks. A hook belongs to a deployment, or to a
//! project with rules mapping repository and image to deployments. Its
//! secret is made here, shown once and kept only as Vault transit
//! ciphertext. `POST /v1/hooks/{hook}` takes Standard Webhooks, GitHub and
//! GitLab deliveries; a verified, new delivery of an allowed image becomes a
//! deployment revision and its rollout Operation in one transaction.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use moke_iam::Action;
use serde_json::{Value, json};
use sha2::Digest;
use uuid::Uuid;

use crate::app::authz::Lock;
use crate::app::error::Validator;
use crate::app::infra::projects;
use crate::app::integrations::signing;
use crate::app::integrations::store::deploy_hooks::{self as store, HookRow, NewDelivery, NewHook};
use crate::app::{App, Error, PageRequest, RequestContext, ResourceRef, Result, validate, workloads::deployments};
use crate::ids::{DeployHookId, DeploymentId, ProjectId, ProjectKind};
use crate::model::*;

/// How long a decrypted hook secret is reused before Vault is asked again.
const SECRET_TTL: Duration = Duration::from_secs(60);

/// Decrypted hook secrets, briefly, so a burst of deliveries is not a burst
/// of Vault calls. An entry serves only the ciphertexts it was decrypted
/// from: a rotation or an eviction on any gateway applies at once.
#[derive(Default)]
pub struct HookSecrets(Mutex<HashMap<Uuid, (Instant, Ciphertexts, HookKeys)>>);

/// The stored ciphertexts (current, previous) a cached [`HookKeys`] came from.
type Ciphertexts = (String, Option<String>);

/// A hook's secret, and during a rotation the one it replaced with when that
/// stops being accepted.
#[derive(Clone)]
struct HookKeys {
    current: String,
    previous: Option<(String, chrono::DateTime<chrono::Utc>)>,
}

impl HookKeys {
    /// The secrets a delivery may be signed with now.
    fn valid(&self) -> Vec<&str> {
        let now = chrono::Utc::now();
        let previous = self.previous.as_ref().filter(|(_, until)| *until > now).map(|(secret, _)| secret.as_str());
        std::iter::once(self.current.as_str()).chain(previous).collect()
    }
}

impl HookSecrets {
    fn get(&self, hook: Uuid, stored: &Ciphertexts) -> Option<HookKeys> {
        let cache = self.0.lock().expect("hook secret lock");
        cache
            .get(&hook)
            .filter(|(at, from, _)| at.elapsed() < SECRET_TTL && from == stored)
            .map(|(_, _, keys)| keys.clone())
    }

    fn put(&self, hook: Uuid, stored: Ciphertexts, secret: HookKeys) {
        let mut cache = self.0.lock().expect("hook secret lock");
        cache.retain(|_, (at, _, _)| at.elapsed() < SECRET_TTL);
        cache.insert(hook, (Instant::now(), stored, secret));
    }

    pub(in crate::app) fn forget(&self, hook: Uuid) {
        self.0.lock().expect("hook secret lock").remove(&hook);
    }
}

/// What a delivery did.
pub enum HookOutcome {
    /// A rollout started (or nothing changed: the Operation is born succeeded).
    Deploying(Box<OperationView>),
    Pong,
    /// Verified, but not an event that deploys (with why).
    Ignored(String),
}

/// The headers a delivery is judged by.
pub struct Delivery<'a> {
    pub header: &'a (dyn Fn(&str) -> Option<String> + Sync),
    pub body: &'a [u8],
}

impl HookRow {
    fn into_view(self) -> Result<DeployHookView> {
        let id = DeployHookId::from_uuid(self.id);
        let rules = self.rules()?;
        Ok(DeployHookView {
            url: format!("/v1/hooks/{id}"),
            id,
            project_id: ProjectId::from_uuid(self.project_id),
            name: self.name,
            deployment_id: self.deployment_id.map(DeploymentId::from_uuid),
            rules,
            image_template: self.image_template,
            previous_secret_expires_at: self.previous_secret_expires_at.filter(|at| *at > chrono::Utc::now()),
            created_at: self.created_at,
            last_delivery_at: self.last_delivery_at,
        })
    }
}

/// A deploy event, read from a provider's payload.
struct Event {
    provider: &'static str,
    name: String,
    delivery_id: String,
    repository: Option<String>,
    /// An image, or what to build one from.
    image: ImageSource,
}

enum ImageSource {
    Image(String),
    Tag(String),
    Digest(String),
    /// Fill the hook's image template.
    Template {
        sha: String,
        tag: String,
        branch: String,
    },
}

fn text(value: &Value) -> Option<String> {
    value.as_str().filter(|s| !s.is_empty()).map(str::to_string)
}

/// Why a verified delivery deploys nothing.
enum Read {
    Event(Box<Event>),
    Pong,
    Ignored(String),
}

fn read_github(event: &str, delivery_id: String, body: &Value, branches: &[String]) -> Read {
    let repository = text(&body["repository"]["full_name"]);
    let event_of = |image| {
        Read::Event(Box::new(Event { provider: "github", name: event.to_string(), delivery_id, repository, image }))
    };
    match event {
        "ping" => Read::Pong,
        "registry_package" | "package" => {
            if body["action"] != "published" {
                return Read::Ignored(format!("{event} action {} does not deploy", body["action"]));
            }
            let version = &body[event]["package_version"];
            match text(&version["package_url"]) {
                Some(url) => event_of(ImageSource::Image(url)),
                None => Read::Ignored("the package has no container image URL".into()),
            }
        }
        "workflow_run" => {
            let run = &body["workflow_run"];
            let branch = text(&run["head_branch"]).unwrap_or_default();
            // A pull request's run names its head branch, which a fork chooses freely.
            let from_fork = text(&run["head_repository"]["full_name"])
                .is_some_and(|head| Some(head.as_str()) != body["repository"]["full_name"].as_str());
            let for_pull_request = run["event"].as_str().is_some_and(|event| event.starts_with("pull_request"));
            if body["action"] != "completed" || run["conclusion"] != "success" {
                Read::Ignored("only successfully completed workflow runs deploy".into())
            } else if from_fork || for_pull_request {
                Read::Ignored("runs for pull requests (and of forks) do not deploy".into())
            } else if !branches.contains(&branch) {
                Read::Ignored(format!("branch {branch:?} is not allowed to deploy"))
            } else {
                let sha = text(&run["head_sha"]).unwrap_or_default();
                event_of(ImageSource::Template { sha, tag: String::new(), branch })
            }
        }
        "deployment" => {
            let deployment = &body["deployment"];
            match text(&deployment["payload"]["image"]) {
                Some(image) => event_of(ImageSource::Image(image)),
                None => {
                    let sha = text(&deployment["sha"]).unwrap_or_default();
                    let branch = text(&deployment["ref"]).unwrap_or_default();
                    event_of(ImageSource::Template { sha, tag: String::new(), branch })
                }
            }
        }
        other => Read::Ignored(format!("GitHub event {other:?} does not deploy")),
    }
}

fn read_gitlab(event: &str, delivery_id: String, body: &Value, branches: &[String]) -> Read {
    let repository = text(&body["project"]["path_with_namespace"]);
    let event_of = |image| {
        Read::Event(Box::new(Event { provider: "gitlab", name: event.to_string(), delivery_id, repository, image }))
    };
    match event {
        "Pipeline Hook" => {
            let attributes = &body["object_attributes"];
            let branch = text(&attributes["ref"]).unwrap_or_default();
            // A merge request's pipeline runs its source branch, which a fork chooses freely.
            let for_merge_request = attributes["source"]
                .as_str()
                .is_some_and(|source| matches!(source, "merge_request_event" | "external_pull_request_event"));
            if attributes["status"] != "success" {
                Read::Ignored("only successful pipelines deploy".into())
            } else if for_merge_request {
                Read::Ignored("pipelines for merge requests do not deploy".into())
            } else if attributes["tag"] == true {
                let sha = text(&attributes["sha"]).unwrap_or_default();
                event_of(ImageSource::Template { sha, tag: branch, branch: String::new() })
            } else if !branches.contains(&branch) {
                Read::Ignored(format!("branch {branch:?} is not allowed to deploy"))
            } else {
                let sha = text(&attributes["sha"]).unwrap_or_default();
                event_of(ImageSource::Template { sha, tag: String::new(), branch })
            }
        }
        "Push Hook" => {
            let reference = text(&body["ref"]).unwrap_or_default();
            let branch = reference.strip_prefix("refs/heads/").unwrap_or(&reference).to_string();
            if !branches.contains(&branch) {
                return Read::Ignored(format!("branch {branch:?} is not allowed to deploy"));
            }
            let sha = text(&body["checkout_sha"]).unwrap_or_default();
            event_of(ImageSource::Template { sha, tag: String::new(), branch })
        }
        "Tag Push Hook" => {
            let tag = text(&body["ref"]).unwrap_or_default().trim_start_matches("refs/tags/").to_string();
            let sha = text(&body["checkout_sha"]).unwrap_or_default();
            event_of(ImageSource::Template { sha, tag, branch: String::new() })
        }
        other => Read::Ignored(format!("GitLab event {other:?} does not deploy")),
    }
}

/// Moke's own form: `{"image": …}`, `{"tag": …}` or `{"digest": …}`, with an
/// optional `repository`; `{"type": "ping"}` answers pong.
fn read_generic(delivery_id: String, body: &Value) -> Result<Read> {
    if body["type"] == "ping" {
        return Ok(Read::Pong);
    }
    let image = match (text(&body["image"]), text(&body["tag"]), text(&body["digest"])) {
        (Some(image), None, None) => ImageSource::Image(image),
        (None, Some(tag), None) => ImageSource::Tag(tag),
        (None, None, Some(digest)) => ImageSource::Digest(digest),
        _ => return Err(Error::invalid_field("image", "required", "give exactly one of image, tag or digest")),
    };
    Ok(Read::Event(Box::new(Event {
        provider: "standard",
        name: "deploy".into(),
        delivery_id,
        repository: text(&body["repository"]),
        image,
    })))
}

/// The repository part of an image reference (no tag or digest).
fn repository_of(image: &str) -> &str {
    let without_digest = image.split('@').next().unwrap_or(image);
    match without_digest.rsplit_once(':') {
        Some((repo, tag)) if !tag.contains('/') => repo,
        _ => without_digest,
    }
}

impl App {
    async fn hook_secret(&self, hook: &HookRow) -> Result<HookKeys> {
        let stored = (hook.secret_enc.clone(), hook.previous_secret_enc.clone());
        if let Some(keys) = self.hook_secrets.get(hook.id, &stored) {
            return Ok(keys);
        }
        let current = self.vault().decrypt(hook.org_id, &hook.secret_enc).await?;
        let previous = match (&hook.previous_secret_enc, hook.previous_secret_expires_at) {
            (Some(ciphertext), Some(until)) if until > chrono::Utc::now() => {
                Some((self.vault().decrypt(hook.org_id, ciphertext).await?, until))
            }
            _ => None,
        };
        let keys = HookKeys { current, previous };
        self.hook_secrets.put(hook.id, stored, keys.clone());
        Ok(keys)
    }

    /// `deploy_policy_view`: with its ETag (a project that never set one is at version 0).
    pub async fn deploy_policy_view(
        &self,
        ctx: &RequestContext,
        project: &ResourceRef<ProjectKind>,
    ) -> Result<DeployPolicyView> {
        let mut conn = self.db().acquire().await?;
        let project_row = projects::lookup(&mut conn, ctx, project, Action::Read, Lock::None).await?;
        policy_view(&mut conn, project_row.id).await
    }

    /// `deploy_policy_update`: replaces the project's webhook policy, if
    /// `if_match` (when given) is its current ETag.
    pub async fn deploy_policy_update(
        &self,
        ctx: &RequestContext,
        project: &ResourceRef<ProjectKind>,
        policy: DeployPolicy,
        if_match: Option<&str>,
    ) -> Result<DeployPolicyView> {
        let mut tx = self.db().begin().await?;
        // The project's row lock orders concurrent updates: the check below
        // sees the version the write replaces.
        let project_row = projects::lookup(&mut tx, ctx, project, Action::ManageCredentials, Lock::ForUpdate).await?;
        let mut v = Validator::new();
        for (i, prefix) in policy.allowed_image_prefixes.iter().enumerate() {
            // A bare host would also allow "host.evil.example": prefixes end at a path separator.
            v.check(
                prefix.contains('/') && prefix.ends_with('/') && !prefix.chars().any(char::is_whitespace),
                format!("allowed_image_prefixes[{i}]"),
                "invalid",
                "a registry path ending in '/', e.g. registry.example.com/shop/",
            );
        }
        for (i, branch) in policy.allowed_branches.iter().enumerate() {
            v.check(
                !branch.is_empty() && branch.len() <= 255,
                format!("allowed_branches[{i}]"),
                "invalid",
                "a branch name",
            );
        }
        v.finish()?;
        let current = policy_view(&mut tx, project_row.id).await?;
        crate::app::check_if_match(if_match, &current.etag)?;
        let row = store::set_policy(&mut tx, project_row.org_id, project_row.id, &policy).await?;
        crate::app::kernel::audit::record(
            &mut tx,
            ctx,
            crate::app::kernel::audit::AuditRecord {
                action: "deploy_policy.update",
                resource_type: "project",
                resource_id: Some(ProjectId::from_uuid(project_row.id).to_string()),
                details: json!(policy),
            },
        )
        .await?;
        self.commit(ctx, tx).await?;
        Ok(policy_view_of(project_row.id, Some(row)))
    }

    /// `deploy_hook_list`: in id (creation) order.
    pub async fn deploy_hook_list(
        &self,
        ctx: &RequestContext,
        project: &ResourceRef<ProjectKind>,
        page: PageRequest,
    ) -> Result<Page<DeployHookView>> {
        let mut conn = self.db().acquire().await?;
        let project_row = projects::lookup(&mut conn, ctx, project, Action::ReadCredentials, Lock::None).await?;
        let rows = store::list(&mut conn, project_row.id, &page).await?;
        let views = rows.into_iter().map(HookRow::into_view).collect::<Result<Vec<_>>>()?;
        Ok(page.page(views, |h| h.id.uuid()))
    }

    /// `deploy_hook_create`: the secret is in the answer and nowhere else.
    pub async fn deploy_hook_create(
        &self,
        ctx: &RequestContext,
        project: &ResourceRef<ProjectKind>,
        input: DeployHookCreate,
    ) -> Result<DeployHookCreated> {
        let mut conn = self.db().acquire().await?;
        let project_row = projects::lookup(&mut conn, ctx, project, Action::ManageCredentials, Lock::None).await?;
        // The secret deploys, for as long as the hook lives.
        let on = moke_iam::Target::project(project_row.org_id, project_row.id);
        crate::app::check_lasting(ctx, on, &[Action::ManageResources])?;
        let mut v = Validator::new();
        validate::name(&mut v, "name", &input.name);
        v.check(
            input.target.is_some() == input.rules.is_empty(),
            "target",
            "required",
            "give either target (one deployment) or rules (project hook)",
        );
        v.check(input.rules.len() <= 100, "rules", "too_many", "at most 100 rules");
        if let Some(template) = &input.image_template {
            v.check(
                template.contains('{') && !template.chars().any(char::is_whitespace),
                "image_template",
                "invalid",
                "an image reference with {sha}, {tag} or {branch}",
            );
        }
        v.finish()?;
        let deployment_id = match &input.target {
            Some(target) => Some(deployments::find_in_project(&mut conn, project_row.id, target).await?),
            None => None,
        };
        for rule in &input.rules {
            deployments::find_in_project(&mut conn, project_row.id, &rule.target).await?;
        }
        drop(conn);
        let (input, project_row) = (&input, &project_row);
        self.idempotent(ctx, "deploy_hook_create", &(project_row.id, input), |claim| async move {
            let secret = signing::new_secret();
            let secret_enc = self.vault().encrypt(project_row.org_id, &secret).await?;
            let id = DeployHookId::generate();
            let mut tx = claim.begin(self.db()).await?;
            let hooks = crate::app::kernel::quotas::Counted::DeployHooks;
            crate::app::iam::principals::hold_live_credential(&mut tx, ctx, project_row.org_id).await?;
            crate::app::kernel::quotas::check_count(&mut tx, self.config(), project_row.org_id, hooks, 1).await?;
            let new = NewHook {
                id: id.uuid(),
                org: project_row.org_id,
                project: project_row.id,
                name: &input.name,
                deployment: deployment_id,
                rules: &input.rules,
                image_template: input.image_template.as_deref(),
                secret_enc: &secret_enc,
                created_by: ctx.principal.id,
            };
            let row = store::insert(&mut tx, new).await?;
            crate::app::kernel::audit::record(
                &mut tx,
                ctx,
                crate::app::kernel::audit::AuditRecord {
                    action: "deploy_hook.create",
                    resource_type: "deploy_hook",
                    resource_id: Some(id.to_string()),
                    details: json!({ "name": input.name, "target": input.target, "rules": input.rules }),
                },
            )
            .await?;
            let created = DeployHookCreated { hook: row.into_view()?, secret };
            // The stored replay never holds the secret: a retry learns the hook only.
            let replay = DeployHookCreated { secret: String::new(), ..created.clone() };
            claim.complete(&mut tx, 201, &replay).await?;
            self.commit(ctx, tx).await?;
            Ok(created)
        })
        .await
    }

    /// `deploy_hook_secret_rotate`: a new secret, shown only in the answer;
    /// the previous one keeps being accepted for the time asked (24 h by
    /// default; 0 revokes it at once). A second rotation replaces whatever
    /// previous secret was still valid.
    pub async fn deploy_hook_secret_rotate(
        &self,
        ctx: &RequestContext,
        project: &ResourceRef<ProjectKind>,
        hook: DeployHookId,
        input: DeployHookSecretRotate,
    ) -> Result<DeployHookCreated> {
        let keep = input.previous_secret_valid_seconds.unwrap_or(86_400);
        let mut v = Validator::new();
        v.check(
            (0..=604_800).contains(&keep),
            "previous_secret_valid_seconds",
            "out_of_range",
            "between 0 (revoke now) and 604800 (7 days)",
        );
        v.finish()?;
        // Authorized before the key is consulted, and the project is part of
        // the request: a replay is answered only to a caller who may rotate
        // this hook's secret now, and never under another project's path.
        let mut conn = self.db().acquire().await?;
        let project_row = projects::lookup(&mut conn, ctx, project, Action::ManageCredentials, Lock::None).await?;
        drop(conn);
        // The secret deploys, for as long as the hook lives.
        let on = moke_iam::Target::project(project_row.org_id, project_row.id);
        crate::app::check_lasting(ctx, on, &[Action::ManageResources])?;
        let project_row = &project_row;
        let request = (project_row.id, hook, keep);
        let rotated = self
            .idempotent(ctx, "deploy_hook_secret_rotate", &request, |claim| async move {
                let mut tx = claim.begin(self.db()).await?;
                crate::app::iam::principals::hold_live_credential(&mut tx, ctx, project_row.org_id).await?;
                let current = store::lock_secret(&mut tx, hook.uuid(), project_row.id)
                    .await?
                    .ok_or_else(|| Error::not_found("deploy hook", hook.to_string()))?;
                let secret = signing::new_secret();
                let secret_enc = self.vault().encrypt(project_row.org_id, &secret).await?;
                let row =
                    store::rotate_secret(&mut tx, hook.uuid(), &secret_enc, &current, keep, ctx.principal.id).await?;
                crate::app::kernel::audit::record(
                    &mut tx,
                    ctx,
                    crate::app::kernel::audit::AuditRecord {
                        action: "deploy_hook.rotate_secret",
                        resource_type: "deploy_hook",
                        resource_id: Some(hook.to_string()),
                        details: json!({ "previous_secret_valid_seconds": keep }),
                    },
                )
                .await?;
                let rotated = DeployHookCreated { hook: row.into_view()?, secret };
                // The stored replay never holds the secret: a retry learns the hook only.
                let replay = DeployHookCreated { secret: String::new(), ..rotated.clone() };
                claim.complete(&mut tx, 200, &replay).await?;
                self.commit(ctx, tx).await?;
                Ok(rotated)
            })
            .await?;
        self.hook_secrets.forget(hook.uuid());
        Ok(rotated)
    }

    pub async fn deploy_hook_delete(
        &self,
        ctx: &RequestContext,
        project: &ResourceRef<ProjectKind>,
        hook: DeployHookId,
    ) -> Result<()> {
        let mut tx = self.db().begin().await?;
        let project_row = projects::lookup(&mut tx, ctx, project, Action::ManageCredentials, Lock::None).await?;
        if !store::delete(&mut tx, hook.uuid(), project_row.id).await? {
            return Err(Error::not_found("deploy hook", hook.to_string()));
        }
        crate::app::kernel::audit::record(
            &mut tx,
            ctx,
            crate::app::kernel::audit::AuditRecord {
                action: "deploy_hook.delete",
                resource_type: "deploy_hook",
                resource_id: Some(hook.to_string()),
                details: json!({}),
            },
        )
        .await?;
        self.commit(ctx, tx).await?;
        self.hook_secrets.forget(hook.uuid());
        Ok(())
    }

    /// Judges and applies one delivery to `POST /v1/hooks/{hook}`: unknown
    /// hook 404, bad signature 401 (saying nothing more), malformed body
    /// 400, a replayed delivery 409; else a rollout (202), a pong, or an
    /// event that does not deploy.
    pub async fn hook_deliver(&self, hook: DeployHookId, delivery: Delivery<'_>) -> Result<HookOutcome> {
        let mut conn = self.db().acquire().await?;
        let row = store::find(&mut conn, hook.uuid())
            .await?
            .ok_or_else(|| Error::not_found("deploy hook", hook.to_string()))?;
        drop(conn);
        let keys = self.hook_secret(&row).await?;
        let secrets = keys.valid();
        let header = delivery.header;
        let now = chrono::Utc::now().timestamp();
        // Accepted when any secret still valid verifies it (a rotation keeps
        // the old one a while); answers which one did.
        let any = |verify: &dyn Fn(&str) -> std::result::Result<(), signing::Refusal>| match secrets
            .iter()
            .position(|secret| verify(secret).is_ok())
        {
            Some(which) => Ok(which),
            None => verify(secrets[0]).map(|()| 0),
        };
        let standard = || {
            any(&|secret| {
                signing::verify(
                    secret,
                    header("webhook-id").as_deref(),
                    header("webhook-timestamp").as_deref(),
                    header("webhook-signature").as_deref(),
                    delivery.body,
                    now,
                )
            })
        };
        // Signatures without a signed timestamp (GitHub's, GitLab's token)
        // do not bind the delivery id: such a body is accepted once, ever.
        let mut replay_digest: Option<Vec<u8>> = None;
        let (provider, verified, delivery_id) = if let Some(event) = header("x-github-event") {
            replay_digest = Some(sha2::Sha256::digest(delivery.body).to_vec());
            let verified =
                any(&|secret| signing::verify_github(secret, header("x-hub-signature-256").as_deref(), delivery.body));
            (("github", event), verified, header("x-github-delivery"))
        } else if let Some(event) = header("x-gitlab-event") {
            // The signed form (Standard Webhooks headers) when present, else the token.
            let verified = if header("webhook-signature").is_some() {
                standard()
            } else {
                replay_digest = Some(sha2::Sha256::digest(delivery.body).to_vec());
                any(&|secret| signing::verify_gitlab_token(secret, header("x-gitlab-token").as_deref()))
            };
            (("gitlab", event), verified, header("webhook-id").or_else(|| header("x-gitlab-event-uuid")))
        } else {
            (("standard", String::new()), standard(), header("webhook-id"))
        };
        let signed_with = match verified {
            Ok(0) => row.secret_enc.clone(),
            Ok(_) => row.previous_secret_enc.clone().unwrap_or_default(),
            Err(refusal) => {
                tracing::info!(hook = %hook, provider = provider.0, ?refusal, "webhook delivery refused");
                return Err(Error::Unauthenticated);
            }
        };
        let delivery_id = delivery_id.filter(|id| !id.is_empty() && id.len() <= 255).ok_or_else(|| {
            Error::invalid_field("delivery id", "required", "the delivery carries no delivery id header")
        })?;
        let body: Value = serde_json::from_slice(delivery.body)
            .map_err(|e| Error::Malformed(format!("the body is not JSON: {e}")))?;
        let mut conn = self.db().acquire().await?;
        let policy = policy_of(&mut conn, row.project_id).await?;
        let read = match provider {
            ("github", event) => read_github(&event, delivery_id, &body, &policy.allowed_branches),
            ("gitlab", event) => read_gitlab(&event, delivery_id, &body, &policy.allowed_branches),
            _ => read_generic(delivery_id, &body)?,
        };
        let event = match read {
            Read::Event(event) => event,
            Read::Pong => return Ok(HookOutcome::Pong),
            Read::Ignored(why) => return Ok(HookOutcome::Ignored(why)),
        };
        // The organization's policy may narrow the branches further: then a
        // delivery must name one (its image rule applies to every deploy).
        let branch = match &event.image {
            ImageSource::Template { branch, .. } if !branch.is_empty() => Some(branch.as_str()),
            _ => None,
        };
        if let Some(why) = crate::app::kernel::policy::refuse_branch(&mut conn, row.org_id, branch).await? {
            return Ok(HookOutcome::Ignored(why));
        }
        drop(conn);
        let (deployment, image) = self.resolve(&row, &event).await?;
        if !policy.allowed_image_prefixes.iter().any(|prefix| image.starts_with(prefix.as_str())) {
            return Err(Error::invalid_field(
                "image",
                "not_allowed",
                format!("{image:?} is not from a registry the project allows (see its deploy policy)"),
            ));
        }
        let ctx = RequestContext::system(row.org_id);
        let mut tx = self.db().begin().await?;
        let delivery = NewDelivery {
            hook: row.id,
            delivery_id: &event.delivery_id,
            provider: event.provider,
            event: &event.name,
            body_digest: replay_digest.as_deref(),
        };
        if !store::record_delivery(&mut tx, delivery).await? {
            return Err(Error::conflict(
                "duplicate_delivery",
                format!("delivery {:?}, or the same body under another id, was already received", event.delivery_id),
            ));
        }
        let cause = format!("webhook {} ({} {})", row.name, event.provider, event.name);
        let op = self.deploy_image(&mut tx, &ctx, deployment, &image, &cause).await?;
        store::set_delivery_operation(&mut tx, row.id, &event.delivery_id, op.id.uuid()).await?;
        // The secret that signed it must still be valid as this commits: a
        // rotation or an eviction that ended it meanwhile undoes the delivery.
        if !store::touch_if_still_valid(&mut tx, row.id, &signed_with).await? {
            return Err(Error::Unauthenticated);
        }
        tx.commit().await?;
        Ok(HookOutcome::Deploying(Box::new(op)))
    }

    /// The deployment a delivery changes and the image it rolls out.
    async fn resolve(&self, hook: &HookRow, event: &Event) -> Result<(Uuid, String)> {
        let fill = |template: &str, sha: &str, tag: &str, branch: &str| {
            template.replace("{sha}", sha).replace("{tag}", tag).replace("{branch}", &branch.replace('/', "-"))
        };
        let known_image = match &event.image {
            ImageSource::Image(image) => Some(image.clone()),
            ImageSource::Template { sha, tag, branch } => {
                let template = hook.image_template.as_deref().ok_or_else(|| {
                    Error::invalid_field(
                        "image_template",
                        "required",
                        "the event names no image and the hook has no image_template",
                    )
                })?;
                Some(fill(template, sha, tag, branch))
            }
            ImageSource::Tag(_) | ImageSource::Digest(_) => None,
        };
        let deployment = match hook.deployment_id {
            Some(id) => id,
            None => {
                let rules = hook.rules()?;
                let rule = rules
                    .iter()
                    .find(|rule| {
                        rule.repository.as_ref().is_none_or(|r| event.repository.as_ref() == Some(r))
                            && rule
                                .image_prefix
                                .as_ref()
                                .is_none_or(|p| known_image.as_ref().is_some_and(|i| i.starts_with(p.as_str())))
                    })
                    .ok_or_else(|| {
                        Error::invalid_field(
                            "repository",
                            "no_rule",
                            format!(
                                "no rule of this hook matches repository {:?}",
                                event.repository.as_deref().unwrap_or("")
                            ),
                        )
                    })?;
                let mut conn = self.db().acquire().await?;
                deployments::find_in_project(&mut conn, hook.project_id, &rule.target).await?
            }
        };
        let image = match (&event.image, known_image) {
            (_, Some(image)) => image,
            (ImageSource::Tag(tag), None) => {
                format!("{}:{tag}", repository_of(&self.deployment_image(deployment).await?))
            }
            (ImageSource::Digest(digest), None) => {
                format!("{}@{digest}", repository_of(&self.deployment_image(deployment).await?))
            }
            _ => unreachable!("every image source without a known image is a tag or digest"),
        };
        Ok((deployment, image))
    }
}

/// The policy a project without one has: no image is allowed and only
/// `main` deploys.
fn default_policy() -> DeployPolicy {
    DeployPolicy { allowed_image_prefixes: Vec::new(), allowed_branches: vec!["main".into()] }
}

/// A project's deploy policy (the default without one).
async fn policy_of(conn: &mut sqlx::PgConnection, project: Uuid) -> Result<DeployPolicy> {
    Ok(store::policy(conn, project).await?.map_or_else(default_policy, store::PolicyRow::policy))
}

/// A project's deploy policy with its ETag.
async fn policy_view(conn: &mut sqlx::PgConnection, project: Uuid) -> Result<DeployPolicyView> {
    Ok(policy_view_of(project, store::policy(conn, project).await?))
}

/// The view of a project's stored policy; without one, the default at version 0.
fn policy_view_of(project: Uuid, row: Option<store::PolicyRow>) -> DeployPolicyView {
    let (version, updated_at) = row.as_ref().map_or((0, None), |row| (row.version, Some(row.updated_at)));
    let policy = row.map_or_else(default_policy, store::PolicyRow::policy);
    DeployPolicyView {
        allowed_image_prefixes: policy.allowed_image_prefixes,
        allowed_branches: policy.allowed_branches,
        etag: crate::app::etag(project, version),
        updated_at,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repositories_of_image_references() {
        assert_eq!(repository_of("registry.example.com:5000/shop/web:1.2"), "registry.example.com:5000/shop/web");
        assert_eq!(repository_of("registry.example.com/shop/web@sha256:abc"), "registry.example.com/shop/web");
        assert_eq!(repository_of("registry.example.com:5000/shop/web"), "registry.example.com:5000/shop/web");
    }
}
