//! Projects: the list (with the create form), one project's clusters, and
//! its settings (description, rename, deletion).

use leptos::prelude::*;
use moke_sdk::types;

use super::account::Fields;
use super::{param, query, segment};
use crate::app::Frame;
use crate::error::ConsoleError;
use crate::session::request_session;
use crate::ui::{
    Csrf, Field, FormAlert, FormErrors, IdempotencyKey, InProgress, NAME_PATTERN, Pager, StatusChip, action_error, ago,
    error_view,
};

/// Items per page of the console's lists.
pub(crate) const PAGE_SIZE: u32 = 25;

const PROJECT_NAME: &str = "Use 1-63 lowercase letters, digits or '-', starting with a letter and not ending with '-'.";

#[server(prefix = "/console/fn", endpoint = "project_create")]
pub async fn project_create(
    csrf: String,
    idempotency_key: String,
    name: String,
    description: Option<String>,
) -> Result<(), ConsoleError> {
    let kept = [("name", name.as_str()), ("description", description.as_deref().unwrap_or_default())];
    let session = request_session();
    session.check_csrf(&csrf)?;
    create_project(&session, idempotency_key, &name, description.clone()).await.map_err(|e| e.keep(&kept))
}

async fn create_project(
    session: &crate::session::RequestSession,
    idempotency_key: String,
    name: &str,
    description: Option<String>,
) -> Result<(), ConsoleError> {
    let mut fields = Fields::default();
    let checked = fields.parse::<types::ProjectCreateName>("name", name, PROJECT_NAME);
    let description = description.map(|d| d.trim().to_string()).filter(|d| !d.is_empty());
    let description = match description {
        Some(d) => fields.parse::<types::ProjectSpecDescription>("spec.description", &d, "At most 1024 characters."),
        None => None,
    };
    fields.finish()?;
    let organization = session.acting_organization()?;
    let api = session.api().await?;
    let body = types::ProjectCreate {
        name: checked.expect("finish() refused a missing field"),
        labels: None,
        spec: description.map(|description| types::ProjectSpec { description: Some(description) }),
    };
    let made =
        api.project_create().org(organization).idempotency_key(idempotency_key).body(body).send().await?.into_inner();
    session.redirect(&format!("/projects/{}", segment(&made.name)));
    Ok(())
}

/// `/projects`: the organization's projects and a form for a new one.
#[component]
pub fn Projects() -> impl IntoView {
    let action = ServerAction::<ProjectCreate>::new();
    let errors = FormErrors::new(action_error(action.value().get_untracked()), &["name", "spec.description"]);
    let session = request_session();
    let page = query("page");
    let welcome = query("welcome").is_some();
    let list = {
        let session = session.clone();
        Suspend::new(async move {
            let page_token = page.clone();
            let listed = async {
                let organization = session.acting_organization()?;
                let api = session.api().await?;
                let mut call = api.project_list().org(organization).limit(PAGE_SIZE);
                if let Some(token) = page_token {
                    call = call.page_token(token);
                }
                Ok::<_, ConsoleError>(call.send().await?.into_inner())
            };
            match listed.await {
                Err(error) => error_view(&session, error),
                Ok(listed) if listed.items.is_empty() && page.is_none() => view! {
                    <div class="empty">
                        <h2>"No projects yet"</h2>
                        <p>"A project holds clusters and the people who work on them. Create your first one below, then a cluster in it."</p>
                    </div>
                }
                .into_any(),
                Ok(listed) => view! {
                    <table>
                        <caption class="visually-hidden">"Projects"</caption>
                        <thead><tr><th scope="col">"Name"</th><th scope="col">"Description"</th><th scope="col">"Created"</th></tr></thead>
                        <tbody>
                            {listed.items.into_iter().map(|project| {
                                let href = format!("/projects/{}", segment(&project.name));
                                let description = project.spec.description.map(|d| d.to_string()).unwrap_or_default();
                                view! {
                                    <tr>
                                        <td><a href=href>{project.name}</a></td>
                                        <td>{description}</td>
                                        <td>{ago(project.created_at)}</td>
                                    </tr>
                                }
                            }).collect_view()}
                        </tbody>
                    </table>
                    <Pager base="/projects".into() next=listed.next_page paged=page.is_some()/>
                }
                .into_any(),
            }
        })
    };
    view! {
        <Frame title="Projects">
            <h1>"Projects"</h1>
            {welcome.then(|| view! {
                <div class="alert ok" role="status">"Welcome to Moke. Your account and organization are ready."</div>
            })}
            <Suspense fallback=|| ()>{list}</Suspense>
            <section class="card" aria-labelledby="new-project">
                <h2 id="new-project">"Create a project"</h2>
                <FormAlert errors=errors.clone()/>
                <ActionForm action=action>
                    <Csrf/>
                    <IdempotencyKey/>
                    <Field label="Name" name="name" hint="Lowercase letters, digits and '-', e.g. web." pattern=NAME_PATTERN required=true errors=errors.clone()/>
                    <Field label="Description (optional)" name="description" error_name="spec.description" errors=errors.clone()/>
                    <button type="submit">"Create project"</button>
                </ActionForm>
            </section>
        </Frame>
    }
}

/// `/projects/:project`: the project's clusters.
#[component]
pub fn Project() -> impl IntoView {
    let project = param("project");
    let session = request_session();
    let page = query("page");
    let base = format!("/projects/{}", segment(&project));
    let content = {
        let (session, project, base) = (session.clone(), project.clone(), base.clone());
        Suspend::new(async move {
            let listed = async {
                let api = session.api().await?;
                let mut call = api.cluster_list().project(&project).limit(PAGE_SIZE);
                if let Some(token) = page.clone() {
                    call = call.page_token(token);
                }
                Ok::<_, ConsoleError>(call.send().await?.into_inner())
            };
            match listed.await {
                Err(error) => error_view(&session, error),
                Ok(listed) if listed.items.is_empty() && page.is_none() => view! {
                    <h1>{format!("Project {project}")}</h1>
                    <ProjectTabs base=base.clone() current="clusters"/>
                    <div class="empty">
                        <h2>"No clusters yet"</h2>
                        <p>"A cluster is a Kubernetes control plane with node pools. It is ready in a few minutes; then download its kubeconfig and use kubectl."</p>
                        <p><a class="button" href=format!("{base}/clusters/new")>"Create a cluster"</a></p>
                    </div>
                }
                .into_any(),
                Ok(listed) => view! {
                    <h1>{format!("Project {project}")}</h1>
                    <ProjectTabs base=base.clone() current="clusters"/>
                    <InProgress
                        changing=listed.items.iter().any(|c| !matches!(c.status.phase.as_str(), "running" | "failed"))
                        here=page.as_ref().map_or_else(|| base.clone(), |token| format!("{base}?page={}", segment(token)))/>
                    <p><a class="button" href=format!("{base}/clusters/new")>"Create a cluster"</a></p>
                    <table>
                        <caption class="visually-hidden">"Clusters"</caption>
                        <thead>
                            <tr>
                                <th scope="col">"Name"</th>
                                <th scope="col">"Status"</th>
                                <th scope="col">"Region"</th>
                                <th scope="col">"Kubernetes"</th>
                                <th scope="col">"Created"</th>
                            </tr>
                        </thead>
                        <tbody>
                            {listed.items.into_iter().map(|cluster| {
                                let href = format!("{base}/clusters/{}", segment(&cluster.name));
                                let upgrade_href = format!("{href}/upgrade");
                                view! {
                                    <tr>
                                        <td><a href=href>{cluster.name}</a></td>
                                        <td><StatusChip phase=cluster.status.phase stale=cluster.status.stale/></td>
                                        <td>{cluster.spec.region}</td>
                                        <td>
                                            {cluster.spec.kubernetes_version}
                                            {cluster.upgrade_available.map(|version| view! {
                                                <a class="chip upgrade" href=upgrade_href>{format!("{version} available")}</a>
                                            })}
                                        </td>
                                        <td>{ago(cluster.created_at)}</td>
                                    </tr>
                                }
                            }).collect_view()}
                        </tbody>
                    </table>
                    <Pager base=base.clone() next=listed.next_page paged=page.is_some()/>
                }
                .into_any(),
            }
        })
    };
    let crumbs = vec![("Projects".to_string(), "/projects".to_string())];
    view! {
        <Frame title=format!("Project {project}") crumbs=crumbs>
            <Suspense fallback=|| ()><div id="clusters-live" data-live="">{content}</div></Suspense>
        </Frame>
    }
}

#[server(prefix = "/console/fn", endpoint = "project_update")]
pub async fn project_update(csrf: String, project: String, description: String) -> Result<(), ConsoleError> {
    let session = request_session();
    session.check_csrf(&csrf)?;
    let mut fields = Fields::default();
    let description = description.trim();
    let checked = if description.is_empty() {
        None
    } else {
        fields.parse::<types::ProjectSpecDescription>("spec.description", description, "At most 1024 characters.")
    };
    fields.finish()?;
    let api = session.api().await?;
    let body =
        types::ProjectUpdate { name: None, labels: None, spec: Some(types::ProjectSpec { description: checked }) };
    api.project_update().project(&project).body(body).send().await?;
    session.redirect(&format!("/projects/{}/settings?saved=1", segment(&project)));
    Ok(())
}

/// Renames the project; its pages move to the new name.
#[server(prefix = "/console/fn", endpoint = "project_rename")]
pub async fn project_rename(csrf: String, project: String, name: String) -> Result<(), ConsoleError> {
    let session = request_session();
    session.check_csrf(&csrf)?;
    let renamed = async {
        let mut fields = Fields::default();
        let checked = fields.parse::<types::ProjectUpdateName>("name", name.trim(), PROJECT_NAME);
        fields.finish()?;
        let body = types::ProjectUpdate { name: checked, labels: None, spec: None };
        let renamed = session.api().await?.project_update().project(&project).body(body).send().await?.into_inner();
        session.redirect(&format!("/projects/{}/settings?renamed=1", segment(&renamed.name)));
        Ok(())
    };
    renamed.await.map_err(|e: ConsoleError| e.keep(&[("name", name.as_str())]))
}

#[server(prefix = "/console/fn", endpoint = "project_delete")]
pub async fn project_delete(csrf: String, project: String, confirm: String) -> Result<(), ConsoleError> {
    let session = request_session();
    session.check_csrf(&csrf)?;
    Fields::typed(&confirm, &project, "Type the project's name exactly to delete it.")?;
    let api = session.api().await?;
    api.project_delete().project(&project).send().await?;
    session.redirect("/projects");
    Ok(())
}

/// `/projects/:project/settings`: description, and deletion (type the name).
#[component]
pub fn ProjectSettings() -> impl IntoView {
    let update = ServerAction::<ProjectUpdate>::new();
    let rename = ServerAction::<ProjectRename>::new();
    let delete = ServerAction::<ProjectDelete>::new();
    let update_errors = FormErrors::new(action_error(update.value().get_untracked()), &["spec.description"]);
    let rename_errors = FormErrors::new(action_error(rename.value().get_untracked()), &["name"]);
    let renamed = query("renamed").is_some();
    let delete_errors = FormErrors::new(action_error(delete.value().get_untracked()), &["confirm"]);
    let project = param("project");
    let session = request_session();
    let saved = query("saved").is_some();
    let base = format!("/projects/{}", segment(&project));
    let content = {
        let (session, project, base) = (session.clone(), project.clone(), base.clone());
        Suspend::new(async move {
            let viewed = async {
                let api = session.api().await?;
                Ok::<_, ConsoleError>(api.project_view().project(&project).send().await?.into_inner())
            };
            match viewed.await {
                Err(error) => error_view(&session, error),
                Ok(viewed) => {
                    let description = viewed.spec.description.map(|d| d.to_string()).unwrap_or_default();
                    let (name, name_to_rename, name_to_delete) =
                        (viewed.name.clone(), viewed.name.clone(), viewed.name);
                    view! {
                        <h1>{format!("Settings of {project}")}</h1>
                        <ProjectTabs base=base.clone() current="settings"/>
                        <section class="card" aria-labelledby="about">
                            <h2 id="about">"About"</h2>
                            <FormAlert errors=update_errors.clone() done=saved.then_some("Saved.")/>
                            <ActionForm action=update>
                                <Csrf/>
                                <input type="hidden" name="project" value=name/>
                                <Field label="Description" name="description" error_name="spec.description" value=description errors=update_errors.clone()/>
                                <button type="submit">"Save"</button>
                            </ActionForm>
                        </section>
                        <section class="card" aria-labelledby="rename">
                            <h2 id="rename">"Rename"</h2>
                            <p class="hint">"Links and scripts that use the old name stop finding the project; its id stays the same."</p>
                            <FormAlert errors=rename_errors.clone() done=renamed.then_some("Renamed.")/>
                            <ActionForm action=rename>
                                <Csrf/>
                                <input type="hidden" name="project" value=name_to_rename.clone()/>
                                <Field label="New name" name="name" pattern=NAME_PATTERN value=name_to_rename required=true errors=rename_errors.clone()/>
                                <button type="submit">"Rename"</button>
                            </ActionForm>
                        </section>
                        <section class="card danger" aria-labelledby="delete">
                            <h2 id="delete">"Delete this project"</h2>
                            <p>"A project can be deleted once it has no clusters. This cannot be undone."</p>
                            <FormAlert errors=delete_errors.clone()/>
                            <ActionForm action=delete>
                                <Csrf/>
                                <input type="hidden" name="project" value=name_to_delete/>
                                <Field label=r#"Type the project's name to confirm"# name="confirm" autocomplete="off" required=true errors=delete_errors.clone()/>
                                <button type="submit" class="danger">"Delete project"</button>
                            </ActionForm>
                        </section>
                    }
                    .into_any()
                }
            }
        })
    };
    let crumbs = vec![("Projects".to_string(), "/projects".to_string()), (project.clone(), base.clone())];
    view! {
        <Frame title=format!("Settings of {project}") crumbs=crumbs>
            <Suspense fallback=|| ()>{content}</Suspense>
        </Frame>
    }
}

/// The project's tabs.
#[component]
pub(crate) fn ProjectTabs(base: String, current: &'static str) -> impl IntoView {
    let mark = |tab: &str| (tab == current).then_some("page");
    view! {
        <nav class="tabs" aria-label="Project">
            <a href=base.clone() aria-current=mark("clusters")>"Clusters"</a>
            <a href=format!("{base}/hooks") aria-current=mark("hooks")>"CI/CD"</a>
            <a href=format!("{base}/access") aria-current=mark("access")>"Access"</a>
            <a href=format!("{base}/settings") aria-current=mark("settings")>"Settings"</a>
        </nav>
    }
}
