//! The organization: members and invitations, service accounts and their
//! tokens, your personal tokens (secrets shown once), quotas as usage bars,
//! and the audit log with its filters and paging in the URL.

use leptos::prelude::*;
use moke_sdk::types;

use super::account::Fields;
use super::projects::PAGE_SIZE;
use super::{query, segment};
use crate::app::Frame;
use crate::error::ConsoleError;
use crate::session::{Flash, request_session};
use crate::ui::{
    Csrf, Field, FormAlert, FormErrors, IdempotencyKey, NAME_PATTERN, action_error, ago, error_view, when,
};

const ROLES: [&str; 5] = ["owner", "admin", "billing", "member", "viewer"];

fn role_of(text: &str) -> Result<types::OrgRole, ConsoleError> {
    text.parse().map_err(|_| {
        ConsoleError::invalid(vec![crate::error::FieldProblem {
            field: "role".into(),
            message: "Choose a role.".into(),
        }])
    })
}

/// The organization's tabs.
#[component]
pub(crate) fn OrgTabs(current: &'static str) -> impl IntoView {
    let mark = |tab: &str| (tab == current).then_some("page");
    view! {
        <nav class="tabs" aria-label="Organization">
            <a href="/org/members" aria-current=mark("members")>"Members"</a>
            <a href="/org/service-accounts" aria-current=mark("service-accounts")>"Service accounts"</a>
            <a href="/org/tokens" aria-current=mark("tokens")>"Your tokens"</a>
            <a href="/org/quotas" aria-current=mark("quotas")>"Quotas"</a>
            <a href="/org/billing" aria-current=mark("billing")>"Billing"</a>
            <a href="/org/webhooks" aria-current=mark("webhooks")>"Event webhooks"</a>
            <a href="/org/sso" aria-current=mark("sso")>"Single sign-on"</a>
            <a href="/org/policy" aria-current=mark("policy")>"Change policy"</a>
            <a href="/org/audit" aria-current=mark("audit")>"Audit log"</a>
        </nav>
    }
}

/// A `<select>` of organization roles.
#[component]
fn RoleSelect(id: String, #[prop(optional)] selected: Option<String>, label: String) -> impl IntoView {
    let selected = selected.unwrap_or_else(|| "member".into());
    view! {
        <label for=id.clone() class="visually-hidden">{label}</label>
        <select id=id name="role">
            {ROLES.iter().map(|role| view! { <option value=*role selected=*role == selected>{*role}</option> }).collect_view()}
        </select>
    }
}

#[server(prefix = "/console/fn", endpoint = "invitation_create")]
pub async fn invitation_create(
    csrf: String,
    idempotency_key: String,
    email: String,
    role: String,
) -> Result<(), ConsoleError> {
    let session = request_session();
    session.check_csrf(&csrf)?;
    let kept = [("email", email.as_str())];
    let made = async {
        let mut fields = Fields::default();
        let checked = fields.parse::<types::InvitationCreateEmail>("email", &email, "Enter an e-mail address.");
        fields.finish()?;
        let role = role_of(&role)?;
        let org = session.acting_organization()?;
        let api = session.api().await?;
        api.invitation_create()
            .org(org)
            .idempotency_key(idempotency_key)
            .body(types::InvitationCreate { email: checked.expect("finish() refused a missing field"), role })
            .send()
            .await?;
        session.redirect("/org/members?invited=1");
        Ok(())
    };
    made.await.map_err(|e: ConsoleError| e.keep(&kept))
}

#[server(prefix = "/console/fn", endpoint = "invitation_delete")]
pub async fn invitation_delete(csrf: String, invitation: String) -> Result<(), ConsoleError> {
    let session = request_session();
    session.check_csrf(&csrf)?;
    let org = session.acting_organization()?;
    session.api().await?.invitation_delete().org(org).invitation(&invitation).send().await?;
    session.redirect("/org/members");
    Ok(())
}

#[server(prefix = "/console/fn", endpoint = "member_update")]
pub async fn member_update(csrf: String, user: String, role: String) -> Result<(), ConsoleError> {
    let session = request_session();
    session.check_csrf(&csrf)?;
    let role = role_of(&role)?;
    let org = session.acting_organization()?;
    session.api().await?.member_update().org(org).user(&user).body(types::MemberUpdate { role }).send().await?;
    session.redirect("/org/members?updated=1");
    Ok(())
}

#[server(prefix = "/console/fn", endpoint = "member_delete")]
pub async fn member_delete(csrf: String, user: String, confirm: Option<String>) -> Result<(), ConsoleError> {
    let session = request_session();
    session.check_csrf(&csrf)?;
    Fields::ticked(&confirm, "Tick the box to confirm removing the member.")?;
    let org = session.acting_organization()?;
    session.api().await?.member_delete().org(org).user(&user).send().await?;
    session.redirect("/org/members");
    Ok(())
}

/// `/org/members`: members (role, removal) and invitations.
#[component]
pub fn Members() -> impl IntoView {
    let invite = ServerAction::<InvitationCreate>::new();
    let revoke = ServerAction::<InvitationDelete>::new();
    let update = ServerAction::<MemberUpdate>::new();
    let remove = ServerAction::<MemberDelete>::new();
    let invite_errors = FormErrors::new(action_error(invite.value().get_untracked()), &["email", "role"]);
    let list_errors = FormErrors::new(
        action_error(update.value().get_untracked())
            .or(action_error(remove.value().get_untracked()))
            .or(action_error(revoke.value().get_untracked())),
        &[],
    );
    let invited = query("invited").is_some();
    let session = request_session();
    let content = {
        let session = session.clone();
        Suspend::new(async move {
            let fetched = async {
                let org = session.acting_organization()?;
                let api = session.api().await?;
                let (members, invitations) = futures::join!(
                    api.member_list().org(&org).limit(100u32).send(),
                    api.invitation_list().org(&org).limit(100u32).send(),
                );
                Ok::<_, ConsoleError>((members?.into_inner().items, invitations?.into_inner().items))
            };
            let (members, invitations) = match fetched.await {
                Ok(data) => data,
                Err(error) => return error_view(&session, error),
            };
            let pending: Vec<_> =
                invitations.into_iter().filter(|i| i.accepted_at.is_none() && i.revoked_at.is_none()).collect();
            view! {
                <h1>"Members"</h1>
                <OrgTabs current="members"/>
                <FormAlert errors=list_errors.clone()/>
                <table>
                    <caption class="visually-hidden">"Members"</caption>
                    <thead><tr><th scope="col">"Name"</th><th scope="col">"E-mail"</th><th scope="col">"Role"</th><th scope="col">"Joined"</th><th scope="col">"Remove"</th></tr></thead>
                    <tbody>
                        {members.into_iter().map(|m| {
                            let user = m.user.to_string();
                            let (role_id, confirm_id) = (format!("role-{user}"), format!("remove-{user}"));
                            let (u1, u2) = (user.clone(), user.clone());
                            view! {
                                <tr>
                                    <td>{m.display_name.clone()}</td>
                                    <td>{m.email.clone()}</td>
                                    <td>
                                        <ActionForm action=update>
                                            <Csrf/>
                                            <input type="hidden" name="user" value=u1/>
                                            <RoleSelect id=role_id selected=m.role.to_string() label=format!("Role of {}", m.email)/>
                                            <button type="submit" class="secondary">"Change"</button>
                                        </ActionForm>
                                    </td>
                                    <td>{ago(m.joined_at)}</td>
                                    <td>
                                        <ActionForm action=remove>
                                            <Csrf/>
                                            <input type="hidden" name="user" value=u2/>
                                            <input type="checkbox" id=confirm_id.clone() name="confirm" value="yes" required=true/>
                                            <label for=confirm_id>"Sure"</label>
                                            <button type="submit" class="danger">"Remove"</button>
                                        </ActionForm>
                                    </td>
                                </tr>
                            }
                        }).collect_view()}
                    </tbody>
                </table>
                <section aria-labelledby="invitations-title">
                    <h2 id="invitations-title">"Pending invitations"</h2>
                    {if pending.is_empty() {
                        view! { <p class="muted">"None."</p> }.into_any()
                    } else {
                        view! {
                            <table>
                                <caption class="visually-hidden">"Pending invitations"</caption>
                                <thead><tr><th scope="col">"E-mail"</th><th scope="col">"Role"</th><th scope="col">"Expires"</th><th scope="col">"Revoke"</th></tr></thead>
                                <tbody>
                                    {pending.into_iter().map(|i| view! {
                                        <tr>
                                            <td>{i.email.clone()}</td>
                                            <td>{i.role.to_string()}</td>
                                            <td>{when(i.expires_at)}</td>
                                            <td>
                                                <ActionForm action=revoke>
                                                    <Csrf/>
                                                    <input type="hidden" name="invitation" value=i.id.to_string()/>
                                                    <button type="submit" class="secondary" aria-label=format!("Revoke the invitation of {}", i.email)>"Revoke"</button>
                                                </ActionForm>
                                            </td>
                                        </tr>
                                    }).collect_view()}
                                </tbody>
                            </table>
                        }.into_any()
                    }}
                </section>
                <section class="card" aria-labelledby="invite-title">
                    <h2 id="invite-title">"Invite someone"</h2>
                    <FormAlert errors=invite_errors.clone() done=invited.then_some("Invitation sent.")/>
                    <ActionForm action=invite>
                        <Csrf/>
                        <IdempotencyKey/>
                        <Field label="E-mail" name="email" kind="email" required=true errors=invite_errors.clone()/>
                        <div class="field">
                            <RoleSelect id="field-role".to_string() label="Role".to_string()/>
                        </div>
                        <button type="submit">"Send invitation"</button>
                    </ActionForm>
                </section>
            }
            .into_any()
        })
    };
    view! {
        <Frame title="Members">
            <Suspense fallback=|| ()>{content}</Suspense>
        </Frame>
    }
}

#[server(prefix = "/console/fn", endpoint = "service_account_create")]
pub async fn service_account_create(
    csrf: String,
    idempotency_key: String,
    name: String,
    role: String,
    description: Option<String>,
) -> Result<(), ConsoleError> {
    let session = request_session();
    session.check_csrf(&csrf)?;
    let kept = [("name", name.as_str()), ("description", description.as_deref().unwrap_or_default())];
    let made = async {
        let mut fields = Fields::default();
        let checked = fields.parse::<types::ServiceAccountCreateName>(
            "name",
            &name,
            "Use 1-63 lowercase letters, digits or '-', starting with a letter.",
        );
        let description = match description.as_deref().map(str::trim).filter(|d| !d.is_empty()) {
            Some(d) => {
                fields.parse::<types::ServiceAccountCreateDescription>("description", d, "At most 500 characters.")
            }
            None => None,
        };
        fields.finish()?;
        let role = role_of(&role)?;
        let org = session.acting_organization()?;
        let body =
            types::ServiceAccountCreate { description, name: checked.expect("finish() refused a missing field"), role };
        session
            .api()
            .await?
            .service_account_create()
            .org(org)
            .idempotency_key(idempotency_key)
            .body(body)
            .send()
            .await?;
        session.redirect("/org/service-accounts");
        Ok(())
    };
    made.await.map_err(|e: ConsoleError| e.keep(&kept))
}

#[server(prefix = "/console/fn", endpoint = "service_account_token_create")]
pub async fn service_account_token_create(
    csrf: String,
    idempotency_key: String,
    service_account: String,
    name: String,
) -> Result<(), ConsoleError> {
    let session = request_session();
    session.check_csrf(&csrf)?;
    let mut fields = Fields::default();
    let checked = fields.parse::<types::ScopedTokenCreateName>(
        "name",
        &name,
        "Say what the token is for (at most 100 characters).",
    );
    fields.finish()?;
    let org = session.acting_organization()?;
    let body = types::ScopedTokenCreate {
        expires_in_seconds: None,
        name: checked.expect("finish() refused a missing field"),
        project: None,
        scopes: None,
    };
    let made = session
        .api()
        .await?
        .service_account_token_create()
        .org(org)
        .service_account(&service_account)
        .idempotency_key(idempotency_key)
        .body(body)
        .send()
        .await?
        .into_inner();
    if !made.token.is_empty() {
        session.show_once(Flash {
            id: String::new(),
            issued: 0,
            for_path: "/org/service-accounts".into(),
            what: format!("token {} of {service_account}", made.name),
            secret: made.token,
            url: None,
        });
    }
    session.redirect("/org/service-accounts");
    Ok(())
}

#[server(prefix = "/console/fn", endpoint = "service_account_delete")]
pub async fn service_account_delete(
    csrf: String,
    service_account: String,
    confirm: Option<String>,
) -> Result<(), ConsoleError> {
    let session = request_session();
    session.check_csrf(&csrf)?;
    Fields::ticked(&confirm, "Tick the box to confirm: its tokens stop working.")?;
    let org = session.acting_organization()?;
    session.api().await?.service_account_delete().org(org).service_account(&service_account).send().await?;
    session.redirect("/org/service-accounts");
    Ok(())
}

/// A secret shown once (a token), and the button to move on.
#[component]
pub(crate) fn TokenOnce(flash: Flash, back: &'static str) -> impl IntoView {
    view! {
        <section class="card secret" aria-labelledby="secret-title" role="alert">
            <h2 id="secret-title">{format!("The {}", flash.what)}</h2>
            <p><strong>"Copy it now: it is shown only this once."</strong></p>
            <div class="field">
                <label for="token-secret">"Token"</label>
                <input id="token-secret" readonly=true value=flash.secret autocomplete="off" spellcheck="false" data-copy="token"/>
            </div>
            <p class="hint">"Use it as " <code>"Authorization: Bearer …"</code> ", or " <code>"MOKE_TOKEN"</code> " for the CLI and SDKs."</p>
            <p><a class="button" href=back>"I have saved it"</a></p>
        </section>
    }
}

/// `/org/service-accounts`: the organization's robots and their tokens.
#[component]
pub fn ServiceAccounts() -> impl IntoView {
    let create = ServerAction::<ServiceAccountCreate>::new();
    let token = ServerAction::<ServiceAccountTokenCreate>::new();
    let delete = ServerAction::<ServiceAccountDelete>::new();
    let create_errors = FormErrors::new(action_error(create.value().get_untracked()), &["name", "description", "role"]);
    let list_errors = FormErrors::new(
        action_error(token.value().get_untracked()).or(action_error(delete.value().get_untracked())),
        &[],
    );
    let session = request_session();
    let flash = session.take_flash();
    let content = {
        let session = session.clone();
        Suspend::new(async move {
            let fetched = async {
                let org = session.acting_organization()?;
                let api = session.api().await?;
                Ok::<_, ConsoleError>(
                    api.service_account_list().org(&org).limit(100u32).send().await?.into_inner().items,
                )
            };
            let accounts = match fetched.await {
                Ok(accounts) => accounts,
                Err(error) => return error_view(&session, error),
            };
            view! {
                <h1>"Service accounts"</h1>
                <OrgTabs current="service-accounts"/>
                {flash.map(|flash| view! { <TokenOnce flash=flash back="/org/service-accounts"/> })}
                <FormAlert errors=list_errors.clone()/>
                {if accounts.is_empty() {
                    view! { <p class="empty">"No service accounts: create one for CI or automation below."</p> }.into_any()
                } else {
                    view! {
                        <table>
                            <caption class="visually-hidden">"Service accounts"</caption>
                            <thead><tr><th scope="col">"Name"</th><th scope="col">"Role"</th><th scope="col">"Description"</th><th scope="col">"New token"</th><th scope="col">"Delete"</th></tr></thead>
                            <tbody>
                                {accounts.into_iter().map(|sa| {
                                    let id = sa.id.to_string();
                                    let (token_id, confirm_id) = (format!("token-{id}"), format!("delete-{id}"));
                                    let (a, b) = (id.clone(), id.clone());
                                    view! {
                                        <tr>
                                            <td><a href=format!("/org/service-accounts/{}", segment(&id))>{sa.name.clone()}</a></td>
                                            <td>{sa.role.to_string()}</td>
                                            <td>{sa.description.clone()}</td>
                                            <td>
                                                <ActionForm action=token>
                                                    <Csrf/>
                                                    <IdempotencyKey/>
                                                    <input type="hidden" name="service_account" value=a/>
                                                    <label for=token_id.clone() class="visually-hidden">{format!("Name of a new token for {}", sa.name)}</label>
                                                    <input id=token_id name="name" placeholder="what it is for" required=true/>
                                                    <button type="submit" class="secondary">"Create token"</button>
                                                </ActionForm>
                                            </td>
                                            <td>
                                                <ActionForm action=delete>
                                                    <Csrf/>
                                                    <input type="hidden" name="service_account" value=b/>
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
                <section class="card" aria-labelledby="new-sa">
                    <h2 id="new-sa">"Create a service account"</h2>
                    <FormAlert errors=create_errors.clone()/>
                    <ActionForm action=create>
                        <Csrf/>
                        <IdempotencyKey/>
                        <Field label="Name" name="name" pattern=NAME_PATTERN hint="e.g. ci-deployer" required=true errors=create_errors.clone()/>
                        <Field label="Description (optional)" name="description" errors=create_errors.clone()/>
                        <div class="field">
                            <label for="field-role">"Role"</label>
                            <select id="field-role" name="role">
                                {ROLES.iter().map(|role| view! { <option value=*role selected=*role == "member">{*role}</option> }).collect_view()}
                            </select>
                        </div>
                        <button type="submit">"Create service account"</button>
                    </ActionForm>
                </section>
            }
            .into_any()
        })
    };
    view! {
        <Frame title="Service accounts">
            <Suspense fallback=|| ()>{content}</Suspense>
        </Frame>
    }
}

#[server(prefix = "/console/fn", endpoint = "personal_token_create")]
pub async fn personal_token_create(
    csrf: String,
    idempotency_key: String,
    name: String,
    expires_in_days: String,
) -> Result<(), ConsoleError> {
    let session = request_session();
    session.check_csrf(&csrf)?;
    let kept = [("name", name.as_str()), ("expires_in_days", expires_in_days.as_str())];
    let made = async {
        let mut fields = Fields::default();
        let checked = fields.parse::<types::ScopedTokenCreateName>(
            "name",
            &name,
            "Say what the token is for (at most 100 characters).",
        );
        let days = fields.parse::<i64>("expires_in_seconds", &expires_in_days, "Enter a number of days.");
        fields.finish()?;
        let body = types::ScopedTokenCreate {
            expires_in_seconds: days.map(|d| d * 86400),
            name: checked.expect("finish() refused a missing field"),
            project: None,
            scopes: None,
        };
        let made = session
            .api()
            .await?
            .personal_token_create()
            .idempotency_key(idempotency_key)
            .body(body)
            .send()
            .await?
            .into_inner();
        if !made.token.is_empty() {
            session.show_once(Flash {
                id: String::new(),
                issued: 0,
                for_path: "/org/tokens".into(),
                what: format!("personal token {}", made.name),
                secret: made.token,
                url: None,
            });
        }
        session.redirect("/org/tokens");
        Ok(())
    };
    made.await.map_err(|e: ConsoleError| e.keep(&kept))
}

#[server(prefix = "/console/fn", endpoint = "personal_token_delete")]
pub async fn personal_token_delete(csrf: String, token: String) -> Result<(), ConsoleError> {
    let session = request_session();
    session.check_csrf(&csrf)?;
    session.api().await?.personal_token_delete().token(&token).send().await?;
    session.redirect("/org/tokens");
    Ok(())
}

/// `/org/tokens`: your personal tokens.
#[component]
pub fn Tokens() -> impl IntoView {
    let create = ServerAction::<PersonalTokenCreate>::new();
    let delete = ServerAction::<PersonalTokenDelete>::new();
    let errors = FormErrors::new(action_error(create.value().get_untracked()), &["name", "expires_in_seconds"]);
    let delete_errors = FormErrors::new(action_error(delete.value().get_untracked()), &[]);
    let session = request_session();
    let flash = session.take_flash();
    let content = {
        let session = session.clone();
        Suspend::new(async move {
            let fetched = async {
                let api = session.api().await?;
                Ok::<_, ConsoleError>(api.personal_token_list().limit(100u32).send().await?.into_inner().items)
            };
            let tokens = match fetched.await {
                Ok(tokens) => tokens,
                Err(error) => return error_view(&session, error),
            };
            view! {
                <h1>"Your tokens"</h1>
                <OrgTabs current="tokens"/>
                {flash.map(|flash| view! { <TokenOnce flash=flash back="/org/tokens"/> })}
                <FormAlert errors=delete_errors.clone()/>
                {if tokens.is_empty() {
                    view! { <p class="empty">"No personal tokens. The CLI makes one when you run moke auth login."</p> }.into_any()
                } else {
                    view! {
                        <table>
                            <caption class="visually-hidden">"Personal tokens"</caption>
                            <thead><tr><th scope="col">"Name"</th><th scope="col">"Hint"</th><th scope="col">"Last used"</th><th scope="col">"Expires"</th><th scope="col">"Revoke"</th></tr></thead>
                            <tbody>
                                {tokens.into_iter().map(|t| view! {
                                    <tr>
                                        <td>{t.name.clone()}</td>
                                        <td><code>{t.hint.clone()}</code></td>
                                        <td>{t.last_used_at.map_or("never".to_string(), ago)}</td>
                                        <td>{t.expires_at.map_or("never".to_string(), when)}</td>
                                        <td>
                                            <ActionForm action=delete>
                                                <Csrf/>
                                                <input type="hidden" name="token" value=t.id.to_string()/>
                                                <button type="submit" class="danger" aria-label=format!("Revoke {}", t.name)>"Revoke"</button>
                                            </ActionForm>
                                        </td>
                                    </tr>
                                }).collect_view()}
                            </tbody>
                        </table>
                    }.into_any()
                }}
                <section class="card" aria-labelledby="new-token">
                    <h2 id="new-token">"Create a personal token"</h2>
                    <FormAlert errors=errors.clone()/>
                    <ActionForm action=create>
                        <Csrf/>
                        <IdempotencyKey/>
                        <Field label="Name" name="name" hint="What it is for, e.g. laptop scripts." required=true errors=errors.clone()/>
                        <Field label="Expires after (days)" name="expires_in_days" error_name="expires_in_seconds" kind="number" value="90" min="1" max="365" required=true errors=errors.clone()/>
                        <button type="submit">"Create token"</button>
                    </ActionForm>
                </section>
            }
            .into_any()
        })
    };
    view! {
        <Frame title="Your tokens">
            <Suspense fallback=|| ()>{content}</Suspense>
        </Frame>
    }
}

/// `/org/quotas`: each limit and its use, as bars.
#[component]
pub fn Quotas() -> impl IntoView {
    let session = request_session();
    let content = {
        let session = session.clone();
        Suspend::new(async move {
            let fetched = async {
                let org = session.acting_organization()?;
                Ok::<_, ConsoleError>(session.api().await?.quota_view().org(org).send().await?.into_inner())
            };
            let q = match fetched.await {
                Ok(q) => q,
                Err(error) => return error_view(&session, error),
            };
            let rows = [
                ("Clusters", q.clusters),
                ("Nodes", q.nodes),
                ("vCPUs", q.vcpus),
                ("Node pools per cluster", q.node_pools_per_cluster),
                ("Namespaces per cluster", q.namespaces_per_cluster),
                ("Service accounts", q.service_accounts),
                ("API tokens", q.api_tokens),
                ("Trust policies", q.trust_policies),
                ("Deploy hooks", q.deploy_hooks),
                ("Webhook endpoints", q.webhook_endpoints),
                ("Pending invitations", q.pending_invitations),
                ("Invitations per hour", q.invitations_per_hour),
            ];
            let plan = q.plan.clone();
            view! {
                <h1>"Quotas"</h1>
                <OrgTabs current="quotas"/>
                <p class="hint">"Limits come from your organization's plan, " <strong>{plan}</strong>
                    " (change it under " <a href="/org/billing#plan-title">"Billing"</a> "), unless Moke set one for you."</p>
                {rows.into_iter().map(|(label, item)| {
                    let source = match item.source {
                        types::QuotaSource::Override => " (set for your organization)",
                        types::QuotaSource::Plan => "",
                    };
                    let share = if item.limit > 0 { (item.usage as f64 / item.limit as f64).clamp(0.0, 1.0) } else { 1.0 };
                    let width = format!("{:.1}", share * 100.0);
                    let tone = if share >= 0.9 { "meter-fill full" } else { "meter-fill" };
                    view! {
                        <figure class="meter">
                            <figcaption>{format!("{label}: {} of {}{source}", item.usage, item.limit)}</figcaption>
                            <svg viewBox="0 0 100 6" preserveAspectRatio="none" role="img" aria-label=format!("{label}: {:.0}% used", share * 100.0)>
                                <rect x="0" y="0" width="100" height="6" class="meter-track"/>
                                <rect x="0" y="0" width=width height="6" class=tone/>
                            </svg>
                        </figure>
                    }
                }).collect_view()}
            }
            .into_any()
        })
    };
    view! {
        <Frame title="Quotas">
            <Suspense fallback=|| ()>{content}</Suspense>
        </Frame>
    }
}

/// `/org/audit?actor=&action=&since=&until=&page=`: the audit log, filtered
/// and paged in the URL (a GET form: links to a view can be shared).
#[component]
pub fn Audit() -> impl IntoView {
    let session = request_session();
    let filters = ["actor", "action", "outcome", "since", "until"].map(|name| (name, query(name)));
    let page = query("page");
    let content = {
        let (session, filters, page) = (session.clone(), filters.clone(), page.clone());
        Suspend::new(async move {
            let get = |name: &str| filters.iter().find(|(n, _)| *n == name).and_then(|(_, v)| v.clone());
            let fetched = async {
                let org = session.acting_organization()?;
                let api = session.api().await?;
                let mut call = api.audit_event_list().org(org).limit(PAGE_SIZE);
                if let Some(actor) = get("actor") {
                    call = call.actor(actor);
                }
                if let Some(action) = get("action") {
                    call = call.action(action);
                }
                if let Some(outcome) = get("outcome") {
                    call = call.outcome(outcome);
                }
                if let Some(since) = get("since") {
                    call = call.since(parse_time("since", &since)?);
                }
                if let Some(until) = get("until") {
                    call = call.until(parse_time("until", &until)?);
                }
                if let Some(token) = page.clone() {
                    call = call.page_token(token);
                }
                Ok::<_, ConsoleError>(call.send().await?.into_inner())
            };
            let listed = match fetched.await {
                Ok(listed) => listed,
                // A bad filter is the person's to fix, on this page.
                Err(error) if error.status == 400 => {
                    return view! {
                        <h1>"Audit log"</h1>
                        <OrgTabs current="audit"/>
                        <AuditFilters filters=filters.to_vec()/>
                        <div class="alert error" role="alert">{format!("{} {}", error.title, error.detail)}</div>
                    }
                    .into_any();
                }
                Err(error) => return error_view(&session, error),
            };
            let base = {
                let mut query = form_urlencoded::Serializer::new(String::new());
                for (name, value) in filters.iter() {
                    if let Some(value) = value {
                        query.append_pair(name, value);
                    }
                }
                let query = query.finish();
                if query.is_empty() { "/org/audit".to_string() } else { format!("/org/audit?{query}") }
            };
            view! {
                <h1>"Audit log"</h1>
                <OrgTabs current="audit"/>
                <AuditFilters filters=filters.to_vec()/>
                {if listed.items.is_empty() {
                    view! { <p class="empty">"No events match."</p> }.into_any()
                } else {
                    view! {
                        <table>
                            <caption class="visually-hidden">"Audit events"</caption>
                            <thead><tr><th scope="col">"When"</th><th scope="col">"Action"</th><th scope="col">"Outcome"</th><th scope="col">"Actor"</th><th scope="col">"Resource"</th><th scope="col">"From"</th></tr></thead>
                            <tbody>
                                {listed.items.into_iter().map(|e| view! {
                                    <tr>
                                        <td><time datetime=e.occurred_at.to_rfc3339()>{when(e.occurred_at)}</time></td>
                                        <td><code>{e.action.clone()}</code></td>
                                        <td>{e.outcome.clone()}</td>
                                        <td>{e.principal.id.clone().unwrap_or_else(|| e.principal.kind.clone())}</td>
                                        <td>{format!("{} {}", e.resource_type, e.resource_id.clone().unwrap_or_default())}</td>
                                        <td>{e.source_ip.clone().unwrap_or_default()}</td>
                                    </tr>
                                }).collect_view()}
                            </tbody>
                        </table>
                    }.into_any()
                }}
                <PagerWithQuery base=base next=listed.next_page paged=page.is_some()/>
            }
            .into_any()
        })
    };
    view! {
        <Frame title="Audit log">
            <Suspense fallback=|| ()>{content}</Suspense>
        </Frame>
    }
}

/// A time filter: RFC 3339, or a date (midnight UTC).
fn parse_time(name: &str, text: &str) -> Result<chrono::DateTime<chrono::Utc>, ConsoleError> {
    let text = text.trim();
    chrono::DateTime::parse_from_rfc3339(text)
        .map(|t| t.with_timezone(&chrono::Utc))
        .or_else(|_| {
            chrono::NaiveDate::parse_from_str(text, "%Y-%m-%d")
                .map(|d| d.and_hms_opt(0, 0, 0).expect("midnight exists").and_utc())
        })
        .map_err(|_| {
            ConsoleError::new(400, "Bad filter", format!("{name}: use a date like 2026-12-01 or an RFC 3339 time."))
        })
}

/// The audit log's filter form (GET: the filters live in the URL).
#[component]
fn AuditFilters(filters: Vec<(&'static str, Option<String>)>) -> impl IntoView {
    let value = |name: &str| filters.iter().find(|(n, _)| *n == name).and_then(|(_, v)| v.clone());
    view! {
        <form method="get" action="/org/audit" class="filters" aria-label="Filters">
            <div class="field">
                <label for="filter-actor">"Actor (usr_…, sa_… or tok_…)"</label>
                <input id="filter-actor" name="actor" value=value("actor")/>
            </div>
            <div class="field">
                <label for="filter-action">"Action (e.g. cluster.create, cluster.*)"</label>
                <input id="filter-action" name="action" value=value("action")/>
            </div>
            <div class="field">
                <label for="filter-since">"Since (2026-12-01)"</label>
                <input id="filter-since" name="since" value=value("since")/>
            </div>
            <div class="field">
                <label for="filter-until">"Until"</label>
                <input id="filter-until" name="until" value=value("until")/>
            </div>
            <button type="submit" class="secondary">"Filter"</button>
        </form>
    }
}

/// [`Pager`] for a URL that already has a query.
#[component]
fn PagerWithQuery(base: String, next: Option<String>, paged: bool) -> impl IntoView {
    let join = if base.contains('?') { '&' } else { '?' };
    let next_href = next.map(|token| format!("{base}{join}page={}", segment(&token)));
    (next_href.is_some() || paged).then(|| {
        view! {
            <nav class="pager" aria-label="Pages">
                {paged.then(|| view! { <a href=base.clone()>"First page"</a> })}
                {next_href.map(|href| view! { <a href=href rel="next">"Next page"</a> })}
            </nav>
        }
    })
}
