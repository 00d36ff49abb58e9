//! CI/CD: a project's deploy hooks (the secret shown once, with the setup
//! for curl, GitHub and GitLab; rotation; deletion) and its deploy policy.

use leptos::prelude::*;
use moke_sdk::types;

use super::account::Fields;
use super::projects::ProjectTabs;
use super::{param, segment};
use crate::app::Frame;
use crate::error::ConsoleError;
use crate::session::{Flash, request_session};
use crate::ui::{Csrf, Field, FormAlert, FormErrors, IdempotencyKey, NAME_PATTERN, action_error, ago, error_view};

fn hooks_path(project: &str) -> String {
    format!("/projects/{}/hooks", segment(project))
}

#[allow(clippy::too_many_arguments)]
#[server(prefix = "/console/fn", endpoint = "deploy_hook_create")]
pub async fn deploy_hook_create(
    csrf: String,
    idempotency_key: String,
    project: String,
    name: String,
    cluster: String,
    namespace: String,
    deployment: String,
) -> Result<(), ConsoleError> {
    let session = request_session();
    session.check_csrf(&csrf)?;
    let kept = [
        ("name", name.as_str()),
        ("cluster", cluster.as_str()),
        ("namespace", namespace.as_str()),
        ("deployment", deployment.as_str()),
    ];
    let made = async {
        let mut fields = Fields::default();
        if name.trim().is_empty() {
            fields.problem("name", "Name the hook, e.g. web-ci.");
        }
        if cluster.trim().is_empty() {
            fields.problem("target.cluster", "Enter the cluster the hook deploys to.");
        }
        if deployment.trim().is_empty() {
            fields.problem("target.deployment", "Enter the deployment the hook changes.");
        }
        fields.finish()?;
        let namespace = Some(namespace.trim().to_string()).filter(|n| !n.is_empty());
        let body = types::DeployHookCreate {
            image_template: None,
            name: name.trim().to_string(),
            rules: Vec::new(),
            target: Some(types::HookTarget {
                cluster: cluster.trim().to_string(),
                deployment: deployment.trim().to_string(),
                namespace,
            }),
        };
        let api = session.api().await?;
        let made =
            api.deploy_hook_create().project(&project).idempotency_key(idempotency_key).body(body).send().await?;
        let made = made.into_inner();
        let path = hooks_path(&project);
        if !made.secret.is_empty() {
            session.show_once(Flash {
                id: String::new(),
                issued: 0,
                for_path: path.clone(),
                what: format!("deploy hook {}", made.name),
                secret: made.secret,
                url: Some(session.public_link(&made.url)),
            });
        }
        session.redirect(&path);
        Ok(())
    };
    made.await.map_err(|e: ConsoleError| e.keep(&kept))
}

#[server(prefix = "/console/fn", endpoint = "deploy_hook_rotate")]
pub async fn deploy_hook_rotate(
    csrf: String,
    idempotency_key: String,
    project: String,
    hook: String,
    revoke_now: Option<String>,
) -> Result<(), ConsoleError> {
    let session = request_session();
    session.check_csrf(&csrf)?;
    let api = session.api().await?;
    let body = types::DeployHookSecretRotate { previous_secret_valid_seconds: revoke_now.map(|_| 0) };
    let rotated = api
        .deploy_hook_secret_rotate()
        .project(&project)
        .hook(&hook)
        .idempotency_key(idempotency_key)
        .body(body)
        .send()
        .await?
        .into_inner();
    let path = hooks_path(&project);
    if !rotated.secret.is_empty() {
        session.show_once(Flash {
            id: String::new(),
            issued: 0,
            for_path: path.clone(),
            what: format!("deploy hook {} (new secret)", rotated.name),
            secret: rotated.secret,
            url: Some(session.public_link(&rotated.url)),
        });
    }
    session.redirect(&path);
    Ok(())
}

#[server(prefix = "/console/fn", endpoint = "deploy_hook_delete")]
pub async fn deploy_hook_delete(
    csrf: String,
    project: String,
    hook: String,
    confirm: Option<String>,
) -> Result<(), ConsoleError> {
    let session = request_session();
    session.check_csrf(&csrf)?;
    Fields::ticked(&confirm, "Tick the box to confirm: CI deliveries to this hook stop working.")?;
    let api = session.api().await?;
    api.deploy_hook_delete().project(&project).hook(&hook).send().await?;
    session.redirect(&hooks_path(&project));
    Ok(())
}

#[server(prefix = "/console/fn", endpoint = "deploy_policy_update")]
pub async fn deploy_policy_update(
    csrf: String,
    project: String,
    allowed_image_prefixes: String,
    allowed_branches: String,
) -> Result<(), ConsoleError> {
    let session = request_session();
    session.check_csrf(&csrf)?;
    let lines = |text: &str| -> Vec<String> {
        text.lines().map(str::trim).filter(|l| !l.is_empty()).map(String::from).collect()
    };
    let body = types::DeployPolicy {
        allowed_branches: lines(&allowed_branches),
        allowed_image_prefixes: lines(&allowed_image_prefixes),
    };
    let api = session.api().await?;
    api.deploy_policy_update().project(&project).body(body).send().await?;
    session.redirect(&format!("{}?policy=saved", hooks_path(&project)));
    Ok(())
}

/// The secret of a new (or rotated) hook, shown once, with how to use it.
#[component]
fn SecretOnce(flash: Flash, back: String) -> impl IntoView {
    let url = flash.url.clone().unwrap_or_default();
    let sample = format!(
        "SECRET='{secret}'\nbody='{{\"image\":\"registry.example.com/shop/web:1.2.3\"}}'\nid=\"msg_$(date +%s%N)\"; ts=$(date +%s)\n\
         key=$(printf '%s' \"${{SECRET#whsec_}}\" | base64 -d | od -An -tx1 | tr -d ' \\n')\n\
         sig=$(printf '%s' \"$id.$ts.$body\" | openssl dgst -sha256 -mac HMAC -macopt \"hexkey:$key\" -binary | base64)\n\
         curl -sS -X POST '{url}' -H 'Content-Type: application/json' \\\n  \
         -H \"webhook-id: $id\" -H \"webhook-timestamp: $ts\" -H \"webhook-signature: v1,$sig\" -d \"$body\"",
        secret = flash.secret,
    );
    view! {
        <section class="card secret" aria-labelledby="secret-title" role="alert">
            <h2 id="secret-title">{format!("The secret of {}", flash.what)}</h2>
            <p><strong>"Copy it now: it is shown only this once."</strong> " Moke keeps only a way to check it; if it is lost, rotate it."</p>
            <div class="field">
                <label for="hook-secret">"Secret"</label>
                <input id="hook-secret" readonly=true value=flash.secret.clone() autocomplete="off" spellcheck="false" data-copy="secret"/>
            </div>
            <div class="field">
                <label for="hook-url">"Delivery URL"</label>
                <input id="hook-url" readonly=true value=url.clone() data-copy="delivery URL"/>
            </div>
            <h3>"Try it with curl (Standard Webhooks signature)"</h3>
            <pre data-copy="curl command"><code>{sample}</code></pre>
            <h3>"GitHub"</h3>
            <p>"Repository → Settings → Webhooks → Add webhook: Payload URL = the delivery URL, Content type = application/json, Secret = the secret, events: Packages (registry packages) and Workflow runs, or a deployment event from your workflow."</p>
            <h3>"GitLab"</h3>
            <p>"Project → Settings → Webhooks → Add new webhook: URL = the delivery URL, Secret token = the secret, triggers: Pipeline events and Deployment events."</p>
            <p><a class="button" href=back>"I have saved it"</a></p>
        </section>
    }
}

/// `/projects/:project/hooks`: deploy hooks and the deploy policy.
#[component]
pub fn Hooks() -> impl IntoView {
    let create = ServerAction::<DeployHookCreate>::new();
    let rotate = ServerAction::<DeployHookRotate>::new();
    let delete = ServerAction::<DeployHookDelete>::new();
    let policy = ServerAction::<DeployPolicyUpdate>::new();
    let create_errors = FormErrors::new(
        action_error(create.value().get_untracked()),
        &["name", "target.cluster", "target.namespace", "target.deployment"],
    );
    let rotate_errors = FormErrors::new(action_error(rotate.value().get_untracked()), &[]);
    let delete_errors = FormErrors::new(action_error(delete.value().get_untracked()), &["confirm"]);
    let policy_errors =
        FormErrors::new(action_error(policy.value().get_untracked()), &["allowed_image_prefixes", "allowed_branches"]);
    let project = param("project");
    let session = request_session();
    let flash = session.take_flash();
    let saved = super::query("policy").is_some();
    let content = {
        let (session, project) = (session.clone(), project.clone());
        Suspend::new(async move {
            let fetched = async {
                let api = session.api().await?;
                let (hooks, policy) = futures::join!(
                    api.deploy_hook_list().project(&project).limit(100u32).send(),
                    api.deploy_policy_view().project(&project).send(),
                );
                Ok::<_, ConsoleError>((hooks?.into_inner().items, policy?.into_inner()))
            };
            let (hooks, current_policy) = match fetched.await {
                Ok(data) => data,
                Err(error) => return error_view(&session, error),
            };
            let base = format!("/projects/{}", segment(&project));
            let back = hooks_path(&project);
            let (p1, p2) = (project.clone(), project.clone());
            view! {
                <h1>{format!("CI/CD of {project}")}</h1>
                <ProjectTabs base=base current="hooks"/>
                {flash.map(|flash| view! { <SecretOnce flash=flash back=back.clone()/> })}
                <section aria-labelledby="hooks-title">
                    <h2 id="hooks-title">"Deploy hooks"</h2>
                    <p class="hint">"CI systems call a hook's URL, signed with its secret, to roll out a new image."</p>
                    <FormAlert errors=rotate_errors.clone()/>
                    <FormAlert errors=delete_errors.clone()/>
                    {if hooks.is_empty() {
                        view! { <p class="empty">"No deploy hooks yet: create one below, then add it to your CI."</p> }.into_any()
                    } else {
                        view! {
                            <table>
                                <caption class="visually-hidden">"Deploy hooks"</caption>
                                <thead><tr><th scope="col">"Name"</th><th scope="col">"URL"</th><th scope="col">"Last delivery"</th><th scope="col">"Secret"</th><th scope="col">"Delete"</th></tr></thead>
                                <tbody>
                                    {hooks.into_iter().map(|hook| {
                                        let project = project.clone();
                                        let (hook_a, hook_b) = (hook.name.clone(), hook.name.clone());
                                        let (project_a, project_b) = (project.clone(), project.clone());
                                        let confirm_id = format!("confirm-{}", hook.name);
                                        view! {
                                            <tr>
                                                <td>{hook.name.clone()}</td>
                                                <td><code>{session.public_link(&hook.url)}</code></td>
                                                <td>{hook.last_delivery_at.map_or("never".to_string(), ago)}</td>
                                                <td>
                                                    <ActionForm action=rotate>
                                                        <Csrf/>
                                                        <IdempotencyKey/>
                                                        <input type="hidden" name="project" value=project_a/>
                                                        <input type="hidden" name="hook" value=hook_a/>
                                                        <button type="submit" class="secondary">"Rotate secret"</button>
                                                    </ActionForm>
                                                </td>
                                                <td>
                                                    <ActionForm action=delete>
                                                        <Csrf/>
                                                        <input type="hidden" name="project" value=project_b/>
                                                        <input type="hidden" name="hook" value=hook_b/>
                                                        <input type="checkbox" id=confirm_id.clone() name="confirm" value="yes" required=true/>
                                                        <label for=confirm_id>"Sure"</label>
                                                        <button type="submit" class="danger">"Delete"</button>
                                                    </ActionForm>
                                                </td>
                                            </tr>
                                        }
                                    }).collect_view()}
                                </tbody>
                            </table>
                        }.into_any()
                    }}
                </section>
                <section class="card" aria-labelledby="new-hook">
                    <h2 id="new-hook">"Create a deploy hook"</h2>
                    <FormAlert errors=create_errors.clone()/>
                    <ActionForm action=create>
                        <Csrf/>
                        <IdempotencyKey/>
                        <input type="hidden" name="project" value=p1/>
                        <Field label="Name" name="name" pattern=NAME_PATTERN hint="e.g. web-ci" required=true errors=create_errors.clone()/>
                        <Field label="Cluster" name="cluster" error_name="target.cluster" required=true errors=create_errors.clone()/>
                        <Field label="Namespace" name="namespace" error_name="target.namespace" value="default" errors=create_errors.clone()/>
                        <Field label="Deployment" name="deployment" error_name="target.deployment" required=true errors=create_errors.clone()/>
                        <button type="submit">"Create hook"</button>
                    </ActionForm>
                </section>
                <section class="card" aria-labelledby="policy-title">
                    <h2 id="policy-title">"Deploy policy"</h2>
                    <p class="hint">"What hooks may deploy in this project. Empty means anything."</p>
                    <FormAlert errors=policy_errors.clone() done=saved.then_some("Saved.")/>
                    <ActionForm action=policy>
                        <Csrf/>
                        <input type="hidden" name="project" value=p2/>
                        <div class="field">
                            <label for="field-allowed_image_prefixes">"Allowed image prefixes, one per line"</label>
                            <textarea id="field-allowed_image_prefixes" name="allowed_image_prefixes" rows="3">{current_policy.allowed_image_prefixes.join("\n")}</textarea>
                        </div>
                        <div class="field">
                            <label for="field-allowed_branches">"Allowed branches, one per line"</label>
                            <textarea id="field-allowed_branches" name="allowed_branches" rows="3">{current_policy.allowed_branches.join("\n")}</textarea>
                        </div>
                        <button type="submit">"Save policy"</button>
                    </ActionForm>
                </section>
            }
            .into_any()
        })
    };
    let crumbs = vec![("Projects".to_string(), "/projects".to_string())];
    view! {
        <Frame title=format!("CI/CD of {project}") crumbs=crumbs>
            <Suspense fallback=|| ()>{content}</Suspense>
        </Frame>
    }
}
