//! One service account: what it is (name, role, description, id), the CI
//! trust policies that let a job's OIDC ID token be exchanged for a
//! short-lived token of it, and the form to add one. Long-lived tokens stay
//! on the service-account list (their secret is shown once there).

use std::collections::HashMap;

use leptos::prelude::*;
use moke_sdk::types;

use super::account::Fields;
use super::org::OrgTabs;
use super::{param, query, segment};
use crate::app::Frame;
use crate::error::ConsoleError;
use crate::session::request_session;
use crate::ui::{Csrf, Field, FormAlert, FormErrors, IdempotencyKey, TextArea, action_error, ago, error_view, when};

/// Claim names a policy may not require: the issuer and audience have their
/// own fields, and the time claims are always checked.
const RESERVED_CLAIMS: [&str; 6] = ["iss", "aud", "exp", "iat", "nbf", "jti"];

/// The claims textarea's `name=value` lines (blank lines skipped), each
/// checked; every bad line is a problem of the `claims` field.
fn parse_claims(fields: &mut Fields, text: &str) -> HashMap<String, types::TrustPolicyCreateClaimsValue> {
    let mut claims = HashMap::new();
    let mut lines = 0;
    for (number, line) in text.lines().enumerate().map(|(i, line)| (i + 1, line.trim())) {
        if line.is_empty() {
            continue;
        }
        lines += 1;
        let Some((name, value)) = line.split_once('=') else {
            fields.problem("claims", &format!("Line {number}: write name=value, e.g. repository=owner/repo."));
            continue;
        };
        let name = name.trim();
        if name.is_empty() || name.chars().count() > 100 {
            fields.problem("claims", &format!("Line {number}: a claim name is 1-100 characters."));
        } else if RESERVED_CLAIMS.contains(&name) {
            fields.problem("claims", &format!("Line {number}: Moke checks {name} itself; require other claims."));
        } else if claims.contains_key(name) {
            fields.problem("claims", &format!("Line {number}: {name} is named twice."));
        } else if let Some(value) = fields.parse::<types::TrustPolicyCreateClaimsValue>(
            "claims",
            value,
            &format!("Line {number}: the value of {name} is 1-500 characters."),
        ) {
            claims.insert(name.to_string(), value);
        }
    }
    if lines == 0 {
        fields.problem(
            "claims",
            "Name at least one claim, e.g. repository=owner/repo: a policy matching any job is refused.",
        );
    } else if lines > 10 {
        fields.problem("claims", "Name at most 10 claims.");
    }
    claims
}

#[server(prefix = "/console/fn", endpoint = "trust_policy_create")]
pub async fn trust_policy_create(
    csrf: String,
    idempotency_key: String,
    service_account: String,
    issuer: String,
    audience: String,
    claims: String,
) -> Result<(), ConsoleError> {
    let session = request_session();
    session.check_csrf(&csrf)?;
    let kept = [("issuer", issuer.as_str()), ("audience", audience.as_str()), ("claims", claims.as_str())];
    let made = async {
        let mut fields = Fields::default();
        let checked_issuer = fields.parse::<types::TrustPolicyCreateIssuer>(
            "issuer",
            &issuer,
            "Enter the CI system's issuer: an https:// URL of at most 500 characters.",
        );
        let checked_audience = fields.parse::<types::TrustPolicyCreateAudience>(
            "audience",
            &audience,
            "Enter the audience your CI job asks for (1-200 characters).",
        );
        let checked_claims = parse_claims(&mut fields, &claims);
        fields.finish()?;
        let body = types::TrustPolicyCreate {
            audience: checked_audience.expect("finish() refused a missing field"),
            claims: checked_claims,
            issuer: checked_issuer.expect("finish() refused a missing field"),
        };
        let org = session.acting_organization()?;
        session
            .api()
            .await?
            .trust_policy_create()
            .org(org)
            .service_account(&service_account)
            .idempotency_key(idempotency_key)
            .body(body)
            .send()
            .await?;
        session.redirect(&format!("/org/service-accounts/{}?added=1", segment(&service_account)));
        Ok(())
    };
    made.await.map_err(|e: ConsoleError| e.keep(&kept))
}

#[server(prefix = "/console/fn", endpoint = "trust_policy_delete")]
pub async fn trust_policy_delete(
    csrf: String,
    service_account: String,
    policy: String,
    confirm: Option<String>,
) -> Result<(), ConsoleError> {
    let session = request_session();
    session.check_csrf(&csrf)?;
    Fields::ticked(&confirm, "Tick the box to confirm: CI jobs matching this policy can no longer get tokens.")?;
    let org = session.acting_organization()?;
    session
        .api()
        .await?
        .trust_policy_delete()
        .org(org)
        .service_account(&service_account)
        .policy(&policy)
        .send()
        .await?;
    session.redirect(&format!("/org/service-accounts/{}", segment(&service_account)));
    Ok(())
}

/// `/org/service-accounts/:service_account`: the account, its trust
/// policies, and how a CI job uses them.
#[component]
pub fn ServiceAccount() -> impl IntoView {
    let create = ServerAction::<TrustPolicyCreate>::new();
    let delete = ServerAction::<TrustPolicyDelete>::new();
    let errors = FormErrors::new(action_error(create.value().get_untracked()), &["issuer", "audience", "claims"]);
    let delete_errors = FormErrors::new(action_error(delete.value().get_untracked()), &[]);
    let service_account = param("service_account");
    let added = query("added").is_some();
    let session = request_session();
    let content = {
        let (session, service_account) = (session.clone(), service_account.clone());
        Suspend::new(async move {
            let fetched = async {
                let org = session.acting_organization()?;
                let api = session.api().await?;
                let (account, policies) = futures::join!(
                    api.service_account_view().org(&org).service_account(&service_account).send(),
                    api.trust_policy_list().org(&org).service_account(&service_account).limit(100u32).send(),
                );
                Ok::<_, ConsoleError>((account?.into_inner(), policies?.into_inner().items))
            };
            let (account, policies) = match fetched.await {
                Ok(data) => data,
                Err(error) => return error_view(&session, error),
            };
            let id = account.id.to_string();
            let exchange = session.public_link("/v1/auth/token-exchange");
            let sample = format!(
                "# GitHub Actions (the job needs `permissions: id-token: write`)\n\
                 ID_TOKEN=$(curl -sSf -H \"Authorization: bearer $ACTIONS_ID_TOKEN_REQUEST_TOKEN\" \\\n  \
                 \"$ACTIONS_ID_TOKEN_REQUEST_URL&audience=moke\" | jq -r .value)\n\
                 export MOKE_TOKEN=$(curl -sSf -X POST '{exchange}' -H 'Content-Type: application/json' \\\n  \
                 -d \"{{\\\"service_account\\\":\\\"{id}\\\",\\\"subject_token\\\":\\\"$ID_TOKEN\\\"}}\" | jq -r .access_token)"
            );
            view! {
                <h1>{account.name.clone()}</h1>
                <OrgTabs current="service-accounts"/>
                <section class="summary" aria-label="Summary">
                    <dl>
                        <div><dt>"Role"</dt><dd>{account.role.to_string()}</dd></div>
                        <div><dt>"Description"</dt><dd>{if account.description.is_empty() {
                            view! { <span class="muted">"none"</span> }.into_any()
                        } else {
                            view! { <span>{account.description.clone()}</span> }.into_any()
                        }}</dd></div>
                        <div><dt>"Created"</dt><dd><time datetime=account.created_at.to_rfc3339()>{when(account.created_at)}</time></dd></div>
                        <div><dt>"Id"</dt><dd><code>{id.clone()}</code></dd></div>
                    </dl>
                    <p class="hint">"Long-lived tokens for this account are made on the " <a href="/org/service-accounts">"service accounts list"</a> "."</p>
                </section>
                <section aria-labelledby="policies-title">
                    <h2 id="policies-title">"Trust policies"</h2>
                    <p class="hint">"A CI job whose OIDC ID token matches a policy (issuer, audience and every claim) can exchange it for a short-lived token of this account: no secret to store in CI."</p>
                    <FormAlert errors=delete_errors.clone()/>
                    {if policies.is_empty() {
                        view! { <p class="empty">"No trust policies: no CI job can act as this account without a token. Add one below for GitHub Actions or GitLab."</p> }.into_any()
                    } else {
                        view! {
                            <table>
                                <caption class="visually-hidden">"Trust policies"</caption>
                                <thead><tr><th scope="col">"Issuer"</th><th scope="col">"Audience"</th><th scope="col">"Claims"</th><th scope="col">"Created"</th><th scope="col">"Delete"</th></tr></thead>
                                <tbody>
                                    {policies.into_iter().map(|p| {
                                        let (account_id, policy) = (id.clone(), p.id.to_string());
                                        let confirm_id = format!("delete-{policy}");
                                        let mut claims: Vec<_> = p.claims.into_iter().collect();
                                        claims.sort();
                                        view! {
                                            <tr>
                                                <td><code>{p.issuer.clone()}</code></td>
                                                <td><code>{p.audience.clone()}</code></td>
                                                <td>{claims.into_iter().map(|(name, value)| view! { <code>{format!("{name} = {value}")}</code><br/> }).collect_view()}</td>
                                                <td>
                                                    {ago(p.created_at)}
                                                    {p.expires_at.map(|at| view! { <br/><span class="muted">{format!("ends {}", when(at))}</span> })}
                                                </td>
                                                <td>
                                                    <ActionForm action=delete>
                                                        <Csrf/>
                                                        <input type="hidden" name="service_account" value=account_id/>
                                                        <input type="hidden" name="policy" value=policy/>
                                                        <input type="checkbox" id=confirm_id.clone() name="confirm" value="yes" required=true/>
                                                        <label for=confirm_id>"Sure"</label>
                                                        <button type="submit" class="danger" aria-label=format!("Delete the policy for {}", p.issuer)>"Delete"</button>
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
                <section class="card" aria-labelledby="new-policy">
                    <h2 id="new-policy">"Add a trust policy"</h2>
                    <FormAlert errors=errors.clone() done=added.then_some("Trust policy added.")/>
                    <p class="hint">
                        "GitHub Actions: issuer " <code>"https://token.actions.githubusercontent.com"</code>
                        ", claims such as " <code>"repository=owner/repo"</code> " and " <code>"ref=refs/heads/main"</code>
                        " (or " <code>"environment=production"</code> "). GitLab: issuer " <code>"https://gitlab.com"</code>
                        ", claims such as " <code>"project_path=group/project"</code> " and " <code>"ref=main"</code> "."
                    </p>
                    <ActionForm action=create>
                        <Csrf/>
                        <IdempotencyKey/>
                        <input type="hidden" name="service_account" value=id.clone()/>
                        <Field label="Issuer" name="issuer" kind="url" placeholder="https://token.actions.githubusercontent.com" required=true errors=errors.clone()/>
                        <Field label="Audience" name="audience" hint="The aud your CI job asks for in its ID token, e.g. moke." required=true errors=errors.clone()/>
                        <TextArea label="Claims that must match" name="claims" rows=4 errors=errors.clone()
                            hint="One name=value per line, 1 to 10 lines; each must equal the job's ID token claim exactly."/>
                        <button type="submit">"Add trust policy"</button>
                    </ActionForm>
                </section>
                <section aria-labelledby="exchange-title">
                    <h2 id="exchange-title">"Using it from CI"</h2>
                    <p>"The job asks its CI system for an ID token with the policy's audience, posts it to " <code>"POST /v1/auth/token-exchange"</code> " with this account's id, and uses the answer's " <code>"access_token"</code> " as " <code>"MOKE_TOKEN"</code> " (with " <code>"MOKE_HOST"</code> " for the CLI). Each ID token is accepted once."</p>
                    <pre data-copy="example"><code>{sample}</code></pre>
                    <p class="hint">"GitLab: declare " <code>"id_tokens: { MOKE_ID_TOKEN: { aud: moke } }"</code> " in the job and post " <code>"$MOKE_ID_TOKEN"</code> " the same way."</p>
                </section>
            }
            .into_any()
        })
    };
    let crumbs = vec![("Service accounts".to_string(), "/org/service-accounts".to_string())];
    view! {
        <Frame title="Service account" crumbs=crumbs>
            <Suspense fallback=|| ()>{content}</Suspense>
        </Frame>
    }
}
