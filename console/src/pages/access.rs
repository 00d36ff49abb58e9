//! A project's access: the project roles its principals (members and
//! service accounts of the organization) hold on top of their organization
//! role, granted, changed and removed.

use leptos::prelude::*;
use moke_sdk::types;

use super::account::Fields;
use super::projects::ProjectTabs;
use super::{param, segment};
use crate::app::Frame;
use crate::error::{ConsoleError, FieldProblem};
use crate::session::request_session;
use crate::ui::{Csrf, FormAlert, FormErrors, action_error, ago, error_view};

const PROJECT_ROLES: [(&str, &str); 3] = [
    ("viewer", "viewer: reads the project's resources"),
    ("developer", "developer: creates and changes its clusters and node pools"),
    ("admin", "admin: manages its resources and who may work in it"),
];

fn access_path(project: &str) -> String {
    format!("/projects/{}/access", segment(project))
}

fn project_role_of(text: &str) -> Result<types::ProjectRole, ConsoleError> {
    text.parse().map_err(|_| {
        ConsoleError::invalid(vec![FieldProblem { field: "role".into(), message: "Choose a project role.".into() }])
    })
}

/// Grants or changes a principal's project role (the API's PUT is both).
#[server(prefix = "/console/fn", endpoint = "project_member_set")]
pub async fn project_member_set(
    csrf: String,
    project: String,
    principal: String,
    role: String,
) -> Result<(), ConsoleError> {
    let session = request_session();
    session.check_csrf(&csrf)?;
    if principal.is_empty() {
        return Err(ConsoleError::invalid(vec![FieldProblem {
            field: "principal".into(),
            message: "Choose a member or service account.".into(),
        }]));
    }
    let role = project_role_of(&role)?;
    let api = session.api().await?;
    api.project_member_update()
        .project(&project)
        .principal(&principal)
        .body(types::ProjectMemberSet { role })
        .send()
        .await?;
    session.redirect(&format!("{}?saved=1", access_path(&project)));
    Ok(())
}

#[server(prefix = "/console/fn", endpoint = "project_member_remove")]
pub async fn project_member_remove(
    csrf: String,
    project: String,
    principal: String,
    confirm: Option<String>,
) -> Result<(), ConsoleError> {
    let session = request_session();
    session.check_csrf(&csrf)?;
    Fields::ticked(&confirm, "Tick the box to confirm removing the project role.")?;
    session.api().await?.project_member_delete().project(&project).principal(&principal).send().await?;
    session.redirect(&access_path(&project));
    Ok(())
}

/// A `<select>` of project roles.
#[component]
fn ProjectRoleSelect(id: String, label: String, #[prop(optional)] selected: Option<String>) -> impl IntoView {
    let selected = selected.unwrap_or_else(|| "developer".into());
    view! {
        <label for=id.clone() class="visually-hidden">{label}</label>
        <select id=id name="role">
            {PROJECT_ROLES.iter().map(|(role, _)| view! { <option value=*role selected=*role == selected>{*role}</option> }).collect_view()}
        </select>
    }
}

/// `/projects/:project/access`: who holds which project role.
#[component]
pub fn ProjectAccess() -> impl IntoView {
    let set = ServerAction::<ProjectMemberSet>::new();
    let remove = ServerAction::<ProjectMemberRemove>::new();
    let grant_errors = FormErrors::new(action_error(set.value().get_untracked()), &["principal", "role"]);
    let list_errors = FormErrors::new(action_error(remove.value().get_untracked()), &[]);
    let project = param("project");
    let saved = super::query("saved").is_some();
    let base = format!("/projects/{}", segment(&project));
    let session = request_session();
    let content = {
        let (session, project, base) = (session.clone(), project.clone(), base.clone());
        Suspend::new(async move {
            let fetched = async {
                let org = session.acting_organization()?;
                let api = session.api().await?;
                let (bindings, members, accounts) = futures::join!(
                    api.project_member_list().project(&project).limit(500u32).send(),
                    api.member_list().org(&org).limit(500u32).send(),
                    api.service_account_list().org(&org).limit(500u32).send(),
                );
                Ok::<_, ConsoleError>((
                    bindings?.into_inner().items,
                    members.map(|m| m.into_inner().items).unwrap_or_default(),
                    accounts.map(|a| a.into_inner().items).unwrap_or_default(),
                ))
            };
            let (bindings, members, accounts) = match fetched.await {
                Ok(data) => data,
                Err(error) => return error_view(&session, error),
            };
            // Principals are ids in the API; people read names.
            let mut names: Vec<(String, String)> = members
                .iter()
                .map(|m| (m.user.to_string(), format!("{} <{}> (organization {})", m.display_name, m.email, m.role)))
                .collect();
            names.extend(
                accounts
                    .iter()
                    .map(|a| (a.id.to_string(), format!("service account {} (organization {})", a.name, a.role))),
            );
            let name_of = |principal: &str| {
                names.iter().find(|(id, _)| id == principal).map(|(_, n)| n.clone()).unwrap_or(principal.to_string())
            };
            let rows: Vec<_> = bindings
                .iter()
                .map(|b| (b.principal.clone(), name_of(&b.principal), b.role.to_string(), b.created_at))
                .collect();
            let choices: Vec<(String, String)> =
                names.iter().filter(|(id, _)| !bindings.iter().any(|b| &b.principal == id)).cloned().collect();
            let project_name = project.clone();
            view! {
                <h1>{format!("Access to {project}")}</h1>
                <ProjectTabs base=base.clone() current="access"/>
                <p class="hint">"Everyone in the organization has their organization role everywhere. A project role adds to it in this project only."</p>
                <FormAlert errors=list_errors.clone()/>
                {if rows.is_empty() {
                    view! { <p class="empty">"No project roles yet: grant one below to let a viewer or member do more here."</p> }.into_any()
                } else {
                    view! {
                        <table>
                            <caption class="visually-hidden">"Project roles"</caption>
                            <thead><tr><th scope="col">"Who"</th><th scope="col">"Project role"</th><th scope="col">"Since"</th><th scope="col">"Remove"</th></tr></thead>
                            <tbody>
                                {rows.into_iter().map(|(principal, name, role, since)| {
                                    let (role_id, confirm_id) = (format!("role-{principal}"), format!("remove-{principal}"));
                                    let (p1, p2, n1, n2) = (principal.clone(), principal, name.clone(), name.clone());
                                    let (j1, j2) = (project_name.clone(), project_name.clone());
                                    view! {
                                        <tr>
                                            <td>{name}</td>
                                            <td>
                                                <ActionForm action=set>
                                                    <Csrf/>
                                                    <input type="hidden" name="project" value=j1/>
                                                    <input type="hidden" name="principal" value=p1/>
                                                    <ProjectRoleSelect id=role_id label=format!("Project role of {n1}") selected=role/>
                                                    <button type="submit" class="secondary">"Change"</button>
                                                </ActionForm>
                                            </td>
                                            <td>{ago(since)}</td>
                                            <td>
                                                <ActionForm action=remove>
                                                    <Csrf/>
                                                    <input type="hidden" name="project" value=j2/>
                                                    <input type="hidden" name="principal" value=p2/>
                                                    <input type="checkbox" id=confirm_id.clone() name="confirm" value="yes" required=true/>
                                                    <label for=confirm_id>"Sure"<span class="visually-hidden">{format!(": remove the project role of {n2}")}</span></label>
                                                    <button type="submit" class="danger">"Remove"</button>
                                                </ActionForm>
                                            </td>
                                        </tr>
                                    }
                                }).collect_view()}
                            </tbody>
                        </table>
                    }.into_any()
                }}
                <section class="card" aria-labelledby="grant-title">
                    <h2 id="grant-title">"Grant a project role"</h2>
                    <FormAlert errors=grant_errors.clone() done=saved.then_some("Saved.")/>
                    {if choices.is_empty() {
                        view! { <p class="muted">"Everyone in the organization already has a role here. Invite members or create service accounts under Organization."</p> }.into_any()
                    } else {
                        let first = grant_errors.is_first("principal");
                        view! {
                            <ActionForm action=set>
                                <Csrf/>
                                <input type="hidden" name="project" value=project_name.clone()/>
                                <div class="field">
                                    <label for="field-principal">"Member or service account"</label>
                                    <select id="field-principal" name="principal" required=true autofocus=first>
                                        {choices.into_iter().map(|(id, name)| view! { <option value=id>{name}</option> }).collect_view()}
                                    </select>
                                </div>
                                <div class="field">
                                    <label for="field-role">"Project role"</label>
                                    <select id="field-role" name="role">
                                        {PROJECT_ROLES.iter().map(|(role, text)| view! { <option value=*role selected=*role == "developer">{*text}</option> }).collect_view()}
                                    </select>
                                </div>
                                <button type="submit">"Grant"</button>
                            </ActionForm>
                        }.into_any()
                    }}
                </section>
            }
            .into_any()
        })
    };
    let crumbs = vec![("Projects".to_string(), "/projects".to_string()), (project.clone(), base)];
    view! {
        <Frame title=format!("Access to {project}") crumbs=crumbs>
            <Suspense fallback=|| ()>{content}</Suspense>
        </Frame>
    }
}
