//! The organization's single sign-on: its OpenID Connect identity provider
//! (the client secret goes in, never comes back out), the domains whose
//! people may join through it (each proven by a DNS TXT record), and the
//! credential policy that can make members use it.

use leptos::prelude::*;
use moke_sdk::types;

use super::account::Fields;
use super::org::OrgTabs;
use crate::app::Frame;
use crate::error::ConsoleError;
use crate::session::request_session;
use crate::ui::{Choice, Csrf, Field, FormAlert, FormErrors, IdempotencyKey, action_error, ago, error_view};

/// Roles single sign-on may give the people who join through it (never owner).
const JOIN_ROLES: [&str; 4] = ["admin", "billing", "member", "viewer"];

/// The units the policy form offers for the token lifetime, largest first.
const UNITS: [(&str, i64); 4] = [("days", 86_400), ("hours", 3_600), ("minutes", 60), ("seconds", 1)];

/// The API's name of the token lifetime field.
const LIFETIME: &str = "max_token_lifetime_seconds";

/// `seconds` in the largest unit that states it exactly (so that the form
/// sends back the policy it was drawn with).
fn in_units(seconds: i64) -> (i64, &'static str) {
    let (unit, size) = UNITS.iter().copied().find(|(_, size)| seconds % size == 0).unwrap_or(("seconds", 1));
    (seconds / size, unit)
}

/// A lifetime as people read it ("90 days", "1 hour").
fn lifetime(seconds: i64) -> String {
    match in_units(seconds) {
        (1, unit) => format!("1 {}", unit.trim_end_matches('s')),
        (n, unit) => format!("{n} {unit}"),
    }
}

/// The API's answer to a form; a 412 (someone saved in between) says what to do.
fn settings_changed(error: moke_sdk::Error<types::Problem>) -> ConsoleError {
    let error = ConsoleError::from(error);
    let detail = "Someone changed these settings after this page was drawn. Check them above, then send again.";
    if error.status == 412 { ConsoleError { detail: detail.into(), ..error } } else { error }
}

#[server(prefix = "/console/fn", endpoint = "sso_config_set")]
pub async fn sso_config_set(
    csrf: String,
    etag: Option<String>,
    issuer: String,
    client_id: String,
    client_secret: String,
    allowed_domains: String,
    default_role: String,
) -> Result<(), ConsoleError> {
    let session = request_session();
    session.check_csrf(&csrf)?;
    // Never the client secret: a form's error travels in the page's URL.
    let kept = [
        ("issuer", issuer.as_str()),
        ("client_id", client_id.as_str()),
        ("allowed_domains", allowed_domains.as_str()),
        ("default_role", default_role.as_str()),
    ];
    let saved = async {
        let mut fields = Fields::default();
        let checked_issuer =
            fields.parse::<types::SsoConfigSetIssuer>("issuer", &issuer, "Enter the provider's https:// issuer URL.");
        let checked_id = fields.parse::<types::SsoConfigSetClientId>("client_id", &client_id, "Enter the client id.");
        let secret = fields.parse::<types::SsoConfigSetClientSecret>(
            "client_secret",
            &client_secret,
            "Enter the client secret: it is needed each time you save (at most 1024 characters).",
        );
        let mut domains = Vec::new();
        for domain in allowed_domains.split(|c: char| c == ',' || c.is_whitespace()).filter(|d| !d.is_empty()) {
            let message = format!("{domain} is not a domain name like example.com.");
            if let Some(domain) = fields.parse::<types::SsoAllowedDomain>("allowed_domains", domain, &message) {
                domains.push(domain);
            }
        }
        if domains.len() > 20 {
            fields.problem("allowed_domains", "At most 20 domains.");
        }
        let role = fields.parse::<types::SsoConfigSetDefaultRole>("default_role", &default_role, "Choose a role.");
        fields.finish()?;
        let body = types::SsoConfigSet {
            allowed_domains: domains,
            client_id: checked_id.expect("finish() refused a missing field"),
            client_secret: secret.expect("finish() refused a missing field"),
            default_role: role.expect("finish() refused a missing field"),
            issuer: checked_issuer.expect("finish() refused a missing field"),
        };
        let org = session.acting_organization()?;
        let api = session.api().await?;
        let mut call = api.sso_config_update().org(org).body(body);
        // Replacing: only the settings the page showed. Setting up: no
        // If-Match at all (the API refuses one while none exists).
        if let Some(etag) = etag.filter(|etag| !etag.is_empty()) {
            call = call.if_match(etag);
        }
        call.send().await.map_err(settings_changed)?;
        session.redirect("/org/sso");
        Ok(())
    };
    saved.await.map_err(|e: ConsoleError| e.keep(&kept))
}

#[server(prefix = "/console/fn", endpoint = "sso_config_delete")]
pub async fn sso_config_delete(csrf: String, confirm: Option<String>) -> Result<(), ConsoleError> {
    let session = request_session();
    session.check_csrf(&csrf)?;
    Fields::ticked(&confirm, "Tick the box to confirm: nobody can sign in through single sign-on any more.")?;
    let org = session.acting_organization()?;
    session.api().await?.sso_config_delete().org(org).send().await?;
    session.redirect("/org/sso");
    Ok(())
}

#[server(prefix = "/console/fn", endpoint = "sso_domain_create")]
pub async fn sso_domain_create(csrf: String, idempotency_key: String, domain: String) -> Result<(), ConsoleError> {
    let session = request_session();
    session.check_csrf(&csrf)?;
    let kept = [("domain", domain.as_str())];
    let made = async {
        let mut fields = Fields::default();
        let checked =
            fields.parse::<types::DomainCreateDomain>("domain", &domain, "Enter a domain name such as example.com.");
        fields.finish()?;
        let body = types::DomainCreate { domain: checked.expect("finish() refused a missing field") };
        let org = session.acting_organization()?;
        let api = session.api().await?;
        api.domain_create().org(org).idempotency_key(idempotency_key).body(body).send().await?;
        session.redirect("/org/sso");
        Ok(())
    };
    made.await.map_err(|e: ConsoleError| e.keep(&kept))
}

#[server(prefix = "/console/fn", endpoint = "sso_domain_verify")]
pub async fn sso_domain_verify(csrf: String, domain: String) -> Result<(), ConsoleError> {
    let session = request_session();
    session.check_csrf(&csrf)?;
    let org = session.acting_organization()?;
    session.api().await?.domain_verify().org(org).domain(&domain).send().await?;
    session.redirect("/org/sso");
    Ok(())
}

#[server(prefix = "/console/fn", endpoint = "sso_domain_delete")]
pub async fn sso_domain_delete(csrf: String, domain: String, confirm: Option<String>) -> Result<(), ConsoleError> {
    let session = request_session();
    session.check_csrf(&csrf)?;
    Fields::ticked(&confirm, "Tick the box to confirm: people at this domain no longer join through single sign-on.")?;
    let org = session.acting_organization()?;
    session.api().await?.domain_delete().org(org).domain(&domain).send().await?;
    session.redirect("/org/sso");
    Ok(())
}

#[server(prefix = "/console/fn", endpoint = "sso_policy_update")]
pub async fn sso_policy_update(
    csrf: String,
    etag: Option<String>,
    max_token_lifetime: String,
    lifetime_unit: String,
    require_sso: Option<String>,
    require_verified_email: Option<String>,
) -> Result<(), ConsoleError> {
    let session = request_session();
    session.check_csrf(&csrf)?;
    let ticked = |b: &Option<String>| if b.is_some() { "yes" } else { "" };
    let kept = [
        ("max_token_lifetime", max_token_lifetime.as_str()),
        ("lifetime_unit", lifetime_unit.as_str()),
        ("require_sso", ticked(&require_sso)),
        ("require_verified_email", ticked(&require_verified_email)),
    ];
    let saved = async {
        let mut fields = Fields::default();
        let seconds = match max_token_lifetime.trim() {
            "" => None,
            amount => {
                let size = UNITS.iter().find(|(unit, _)| *unit == lifetime_unit).map(|(_, size)| *size);
                let count = fields.parse::<i64>(LIFETIME, amount, "Enter a whole number, or nothing for no limit.");
                let seconds = count.zip(size).map(|(count, size)| count.saturating_mul(size));
                if size.is_none() {
                    fields.problem(LIFETIME, "Choose days, hours, minutes or seconds.");
                } else if seconds.is_some_and(|s| !(300..=31_536_000).contains(&s)) {
                    fields.problem(LIFETIME, "Between 5 minutes and 365 days.");
                }
                seconds
            }
        };
        fields.finish()?;
        let body = types::CredentialPolicy {
            max_token_lifetime_seconds: seconds,
            require_sso: Some(require_sso.is_some()),
            require_verified_email: Some(require_verified_email.is_some()),
        };
        let org = session.acting_organization()?;
        let api = session.api().await?;
        let mut call = api.credential_policy_update().org(org).body(body);
        if let Some(etag) = etag.filter(|etag| !etag.is_empty()) {
            call = call.if_match(etag);
        }
        call.send().await.map_err(settings_changed)?;
        session.redirect("/org/sso");
        Ok(())
    };
    saved.await.map_err(|e: ConsoleError| e.keep(&kept))
}

/// The `<select>` of the role people get when they join through SSO.
#[component]
fn JoinRole(current: String, errors: FormErrors) -> impl IntoView {
    let messages = errors.messages_for("default_role");
    let invalid = !messages.is_empty();
    let chosen = errors.value("default_role").unwrap_or(current);
    view! {
        <div class="field" class:invalid=invalid>
            <label for="field-default_role">"Role of people who join through single sign-on"</label>
            <select id="field-default_role" name="default_role" autofocus=errors.is_first("default_role")
                aria-invalid=invalid.then_some("true")
                aria-describedby=invalid.then_some("field-default_role-error")>
                {JOIN_ROLES.iter().map(|role| view! { <option value=*role selected=*role == chosen>{*role}</option> }).collect_view()}
            </select>
            {invalid.then(|| view! { <p class="field-error" id="field-default_role-error">{messages.join(" ")}</p> })}
        </div>
    }
}

/// A labelled checkbox of a setting: ticked as it is now, or as the person
/// had it before an error, with the API's message for it.
#[component]
fn Flag(label: &'static str, name: &'static str, current: bool, errors: FormErrors) -> impl IntoView {
    let id = format!("field-{name}");
    let messages = errors.messages_for(name);
    let invalid = !messages.is_empty();
    let error_id = format!("{id}-error");
    let checked = errors.value(name).map_or(current, |value| !value.is_empty());
    view! {
        <div class="choice" class:invalid=invalid>
            <input type="checkbox" id=id.clone() name=name value="yes" checked=checked autofocus=errors.is_first(name)
                aria-invalid=invalid.then_some("true") aria-describedby=invalid.then(|| error_id.clone())/>
            <label for=id>{label}</label>
        </div>
        {invalid.then(|| view! { <p class="field-error" id=error_id.clone()>{messages.join(" ")}</p> })}
    }
}

/// `/org/sso`: the identity provider, the domains it admits, the credential policy.
#[component]
pub fn Sso() -> impl IntoView {
    let set = ServerAction::<SsoConfigSet>::new();
    let remove = ServerAction::<SsoConfigDelete>::new();
    let add = ServerAction::<SsoDomainCreate>::new();
    let verify = ServerAction::<SsoDomainVerify>::new();
    let give_up = ServerAction::<SsoDomainDelete>::new();
    let save_policy = ServerAction::<SsoPolicyUpdate>::new();
    let set_errors = FormErrors::new(
        action_error(set.value().get_untracked()),
        &["issuer", "client_id", "client_secret", "allowed_domains", "default_role"],
    );
    let remove_errors = FormErrors::new(action_error(remove.value().get_untracked()), &["confirm"]);
    let add_errors = FormErrors::new(action_error(add.value().get_untracked()), &["domain"]);
    let list_errors = FormErrors::new(
        action_error(verify.value().get_untracked()).or(action_error(give_up.value().get_untracked())),
        &[],
    );
    let policy_errors = FormErrors::new(
        action_error(save_policy.value().get_untracked()),
        &[LIFETIME, "require_sso", "require_verified_email"],
    );
    let session = request_session();
    let content = {
        let session = session.clone();
        Suspend::new(async move {
            let fetched = async {
                let org = session.acting_organization()?;
                let api = session.api().await?;
                let (config, domains, policy) = futures::join!(
                    api.sso_config_view().org(&org).send(),
                    api.domain_list().org(&org).limit(100u32).send(),
                    api.credential_policy_view().org(&org).send(),
                );
                // None set up yet is a 404: the page then offers to set one up.
                let config = match config.map_err(ConsoleError::from) {
                    Ok(config) => Some(config.into_inner()),
                    Err(error) if error.is_not_found() => None,
                    Err(error) => return Err(error),
                };
                Ok::<_, ConsoleError>((config, domains?.into_inner().items, policy?.into_inner()))
            };
            let (config, domains, policy) = match fetched.await {
                Ok(data) => data,
                Err(error) => return error_view(&session, error),
            };
            let has_config = config.is_some();
            // The form starts from the provider as it is (never its secret).
            let (issuer_now, client_now, domains_now, role_now, etag_now) = match &config {
                Some(c) => {
                    let role = c.default_role.to_string();
                    (c.issuer.clone(), c.client_id.clone(), c.allowed_domains.join(", "), role, Some(c.etag.clone()))
                }
                None => (String::new(), String::new(), String::new(), "member".to_string(), None),
            };
            let (amount_now, unit_now) = policy.max_token_lifetime_seconds.map_or((String::new(), "days"), |s| {
                let (count, unit) = in_units(s);
                (count.to_string(), unit)
            });
            let unit_chosen = policy_errors.value("lifetime_unit").unwrap_or_else(|| unit_now.to_string());
            let yes_no = |on: bool| if on { "yes" } else { "no" };
            view! {
                <h1>"Single sign-on"</h1>
                <OrgTabs current="sso"/>
                <p class="hint">"Members sign in to Moke through your organization's OpenID Connect identity provider (Okta, Entra ID, Google Workspace, Keycloak…). Only owners can change these settings."</p>
                <section aria-labelledby="provider-title">
                    <h2 id="provider-title">"Identity provider"</h2>
                    {match config {
                        Some(c) => view! {
                            <div class="summary">
                                <dl>
                                    <div><dt>"Issuer"</dt><dd><code>{c.issuer}</code></dd></div>
                                    <div><dt>"Client id"</dt><dd><code>{c.client_id}</code></dd></div>
                                    <div><dt>"Allowed domains"</dt><dd>{if c.allowed_domains.is_empty() {
                                        "none: only people whose accounts are already linked sign in".to_string()
                                    } else {
                                        c.allowed_domains.join(", ")
                                    }}</dd></div>
                                    <div><dt>"Role on joining"</dt><dd>{c.default_role.to_string()}</dd></div>
                                    <div><dt>"Sign-in link for your members"</dt><dd><code>{c.login_url}</code></dd></div>
                                    <div><dt>"Redirect URI to register at the provider"</dt><dd><code>{c.redirect_uri}</code></dd></div>
                                    <div><dt>"Updated"</dt><dd><time datetime=c.updated_at.to_rfc3339()>{ago(c.updated_at)}</time></dd></div>
                                </dl>
                            </div>
                        }.into_any(),
                        None => view! {
                            <p class="empty">"Single sign-on is not set up. Add and verify your e-mail domain below, register Moke as an OpenID Connect web application at your identity provider, then enter its issuer URL, client id and secret in the form below. Once saved, this page shows the redirect URI to register at the provider and the sign-in link for your members."</p>
                        }.into_any(),
                    }}
                </section>
                <section class="card" aria-labelledby="set-title">
                    <h2 id="set-title">{if has_config { "Replace the identity provider" } else { "Set up the identity provider" }}</h2>
                    <FormAlert errors=set_errors.clone()/>
                    <ActionForm action=set>
                        <Csrf/>
                        {etag_now.map(|etag| view! { <input type="hidden" name="etag" value=etag/> })}
                        <Field label="Issuer URL" name="issuer" kind="url" value=issuer_now placeholder="https://login.example.com" hint="The provider's OpenID Connect issuer; Moke reads its discovery document." required=true errors=set_errors.clone()/>
                        <Field label="Client id" name="client_id" value=client_now autocomplete="off" required=true errors=set_errors.clone()/>
                        <Field label="Client secret" name="client_secret" kind="password" autocomplete="new-password" hint="Stored encrypted and never shown again: enter it each time you save." required=true errors=set_errors.clone()/>
                        <Field label="Allowed domains (optional)" name="allowed_domains" value=domains_now hint="Verified domains (below), separated by commas or spaces: people with addresses there join on their first sign-in. Empty: only people whose accounts are already linked sign in." errors=set_errors.clone()/>
                        <JoinRole current=role_now errors=set_errors.clone()/>
                        <button type="submit">"Save identity provider"</button>
                    </ActionForm>
                </section>
                {has_config.then(|| view! {
                    <section class="card danger" aria-labelledby="remove-title">
                        <h2 id="remove-title">"Turn single sign-on off"</h2>
                        <p>"Nobody can sign in through the provider any more; sessions already open continue. If the credential policy below requires single sign-on, members other than owners cannot act here until you change it."</p>
                        <FormAlert errors=remove_errors.clone()/>
                        <ActionForm action=remove>
                            <Csrf/>
                            <Choice label="I understand that nobody can sign in through single sign-on any more" name="confirm" required=true errors=remove_errors.clone()/>
                            <button type="submit" class="danger">"Turn off"</button>
                        </ActionForm>
                    </section>
                })}
                <section aria-labelledby="domains-title">
                    <h2 id="domains-title">"Domains"</h2>
                    <p class="hint">"Publish each domain's TXT record at your DNS provider, then verify it. Only verified domains can be allowed above."</p>
                    <FormAlert errors=list_errors.clone()/>
                    {if domains.is_empty() {
                        view! { <p class="empty">"No domains yet. Add your company's e-mail domain below, publish the TXT record it shows, then press Verify."</p> }.into_any()
                    } else {
                        view! {
                            <table>
                                <caption class="visually-hidden">"Domains"</caption>
                                <thead><tr><th scope="col">"Domain"</th><th scope="col">"Status"</th><th scope="col">"TXT record to publish"</th><th scope="col">"Verify"</th><th scope="col">"Delete"</th></tr></thead>
                                <tbody>
                                    {domains.into_iter().map(|d| {
                                        let types::DomainView { id, domain, verification, verified, last_checked_at, last_error, .. } = d;
                                        let confirm_id = format!("delete-{}", id.as_str());
                                        let (for_verify, for_delete) = (domain.clone(), domain.clone());
                                        let (verify_label, delete_label) = (format!("Verify {domain}"), format!("Delete {domain}"));
                                        view! {
                                            <tr>
                                                <td>{domain}</td>
                                                <td>{if verified {
                                                    view! { <span class="chip good">"verified"</span> }.into_any()
                                                } else {
                                                    view! {
                                                        <span class="chip">"not verified"</span>
                                                        {last_error.map(|error| view! { <p class="hint">{error}</p> })}
                                                        {last_checked_at.map(|at| view! { <p class="hint">{format!("Checked {}", ago(at))}</p> })}
                                                    }.into_any()
                                                }}</td>
                                                <td>
                                                    <span class="muted">"Name "</span><code>{verification.name}</code><br/>
                                                    <span class="muted">"Type "</span>{verification.record_type}<br/>
                                                    <span class="muted">"Value "</span><code>{verification.value}</code>
                                                </td>
                                                <td>
                                                    {(!verified).then(|| view! {
                                                        <ActionForm action=verify>
                                                            <Csrf/>
                                                            <input type="hidden" name="domain" value=for_verify/>
                                                            <button type="submit" class="secondary" aria-label=verify_label>"Verify"</button>
                                                        </ActionForm>
                                                    })}
                                                </td>
                                                <td>
                                                    <ActionForm action=give_up>
                                                        <Csrf/>
                                                        <input type="hidden" name="domain" value=for_delete/>
                                                        <input type="checkbox" id=confirm_id.clone() name="confirm" value="yes" required=true/>
                                                        <label for=confirm_id>"Sure"</label>
                                                        <button type="submit" class="danger" aria-label=delete_label>"Delete"</button>
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
                <section class="card" aria-labelledby="add-domain-title">
                    <h2 id="add-domain-title">"Add a domain"</h2>
                    <FormAlert errors=add_errors.clone()/>
                    <ActionForm action=add>
                        <Csrf/>
                        <IdempotencyKey/>
                        <Field label="Domain" name="domain" placeholder="example.com" autocomplete="off" required=true errors=add_errors.clone()/>
                        <button type="submit">"Add domain"</button>
                    </ActionForm>
                </section>
                <section class="card" aria-labelledby="policy-title">
                    <h2 id="policy-title">"Credential policy"</h2>
                    <p class="hint">"What members' credentials must meet. Credentials a new policy refuses stop working at once."</p>
                    <div class="summary">
                        <dl>
                            <div><dt>"Longest token lifetime"</dt><dd>{policy.max_token_lifetime_seconds.map_or("no limit".to_string(), lifetime)}</dd></div>
                            <div><dt>"Single sign-on required"</dt><dd>{yes_no(policy.require_sso)}</dd></div>
                            <div><dt>"Verified e-mail required"</dt><dd>{yes_no(policy.require_verified_email)}</dd></div>
                            <div><dt>"Updated"</dt><dd>{policy.updated_at.map_or("never: the defaults apply".to_string(), ago)}</dd></div>
                        </dl>
                    </div>
                    <FormAlert errors=policy_errors.clone()/>
                    <ActionForm action=save_policy>
                        <Csrf/>
                        <input type="hidden" name="etag" value=policy.etag.clone()/>
                        <Field label="Longest token lifetime" name="max_token_lifetime" error_name=LIFETIME kind="number" min="1" value=amount_now hint="Empty: no limit. A new token asked for without an expiry gets this lifetime; 5 minutes to 365 days." errors=policy_errors.clone()/>
                        <div class="field">
                            <label for="field-lifetime_unit">"Unit of the lifetime"</label>
                            <select id="field-lifetime_unit" name="lifetime_unit">
                                {UNITS.iter().map(|(unit, _)| view! { <option value=*unit selected=*unit == unit_chosen>{*unit}</option> }).collect_view()}
                            </select>
                        </div>
                        <Flag label="Require single sign-on for everyone but owners (needs the identity provider above)" name="require_sso" current=policy.require_sso errors=policy_errors.clone()/>
                        <Flag label="Require a verified e-mail address" name="require_verified_email" current=policy.require_verified_email errors=policy_errors.clone()/>
                        <button type="submit">"Save policy"</button>
                    </ActionForm>
                </section>
            }
            .into_any()
        })
    };
    view! {
        <Frame title="Single sign-on">
            <Suspense fallback=|| ()>{content}</Suspense>
        </Frame>
    }
}
