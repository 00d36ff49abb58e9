//! What runs in a cluster: namespaces, Deployments (created from pasted
//! YAML or a short form; scaled, restarted, paused, resumed, rolled back,
//! deleted) with their pods and revisions, and Services with their endpoints.

use leptos::prelude::*;
use moke_sdk::types;

use super::account::Fields;
use super::{param, query, segment};
use crate::app::Frame;
use crate::error::ConsoleError;
use crate::session::{RequestSession, request_session};
use crate::ui::{
    Csrf, Field, FormAlert, FormErrors, IdempotencyKey, InProgress, NAME_PATTERN, StatusChip, TextArea, action_error,
    ago, error_view,
};

fn workloads_path(project: &str, cluster: &str, namespace: &str) -> String {
    format!("/projects/{}/clusters/{}/workloads?namespace={}", segment(project), segment(cluster), segment(namespace))
}

fn deployment_path(project: &str, cluster: &str, namespace: &str, deployment: &str) -> String {
    format!(
        "/projects/{}/clusters/{}/namespaces/{}/deployments/{}",
        segment(project),
        segment(cluster),
        segment(namespace),
        segment(deployment)
    )
}

/// The cluster's tabs.
#[component]
pub(crate) fn ClusterTabs(project: String, cluster: String, current: &'static str) -> impl IntoView {
    let base = format!("/projects/{}/clusters/{}", segment(&project), segment(&cluster));
    let mark = |tab: &str| (tab == current).then_some("page");
    view! {
        <nav class="tabs" aria-label="Cluster">
            <a href=base.clone() aria-current=mark("overview")>"Overview"</a>
            <a href=format!("{base}/workloads") aria-current=mark("workloads")>"Workloads"</a>
            <a href=format!("{base}/kubeconfig") aria-current=mark("kubeconfig")>"Kubeconfig"</a>
            <a href=format!("{base}/events") aria-current=mark("events")>"Events"</a>
            <a href=format!("{base}/snapshots") aria-current=mark("snapshots")>"Snapshots"</a>
            <a href=format!("{base}/revisions") aria-current=mark("revisions")>"History"</a>
            <a href=format!("{base}/settings") aria-current=mark("settings")>"Settings"</a>
        </nav>
    }
}

#[server(prefix = "/console/fn", endpoint = "namespace_create")]
pub async fn namespace_create(
    csrf: String,
    idempotency_key: String,
    project: String,
    cluster: String,
    name: String,
) -> Result<(), ConsoleError> {
    let session = request_session();
    session.check_csrf(&csrf)?;
    let kept = [("name", name.as_str())];
    let made = async {
        let mut fields = Fields::default();
        let checked = fields.parse::<types::NamespaceCreateName>(
            "name",
            &name,
            "Use 1-63 lowercase letters, digits or '-', starting with a letter.",
        );
        fields.finish()?;
        let api = session.api().await?;
        api.namespace_create()
            .project(&project)
            .cluster(&cluster)
            .idempotency_key(idempotency_key)
            .body(types::NamespaceCreate { name: checked.expect("finish() refused a missing field") })
            .send()
            .await?;
        session.redirect(&workloads_path(&project, &cluster, name.trim()));
        Ok(())
    };
    made.await.map_err(|e: ConsoleError| e.keep(&kept))
}

/// One Deployment manifest from pasted YAML (or JSON): a mapping of kind
/// `Deployment`, and its name.
fn manifest_of(yaml: &str) -> Result<(String, serde_json::Map<String, serde_json::Value>), &'static str> {
    let value: serde_json::Value = serde_norway::from_str(yaml).map_err(|_| "This is not valid YAML.")?;
    let serde_json::Value::Object(manifest) = value else {
        return Err("Paste one Kubernetes Deployment (a YAML mapping).");
    };
    if manifest.get("kind").and_then(|k| k.as_str()) != Some("Deployment") {
        return Err("Paste a manifest of kind: Deployment.");
    }
    let name = manifest
        .get("metadata")
        .and_then(|m| m.get("name"))
        .and_then(|n| n.as_str())
        .ok_or("The manifest needs metadata.name.")?
        .to_string();
    Ok((name, manifest))
}

#[server(prefix = "/console/fn", endpoint = "deployment_create_yaml")]
pub async fn deployment_create_yaml(
    csrf: String,
    idempotency_key: String,
    project: String,
    cluster: String,
    namespace: String,
    manifest: String,
) -> Result<(), ConsoleError> {
    let session = request_session();
    session.check_csrf(&csrf)?;
    // The manifest is not kept on an error: it may hold secrets (env values)
    // and a form's error travels in the URL.
    let made = async {
        let mut fields = Fields::default();
        let parsed = manifest_of(&manifest).map_err(|message| fields.problem("manifest", message)).ok();
        fields.finish()?;
        let (name, manifest) = parsed.expect("finish() refused a missing field");
        let mut fields = Fields::default();
        let checked = fields.parse::<types::DeploymentCreateName>(
            "manifest",
            &name,
            "metadata.name must be 1-63 lowercase letters, digits or '-', starting with a letter.",
        );
        fields.finish()?;
        let api = session.api().await?;
        let body = types::DeploymentCreate {
            labels: None,
            manifest: Some(manifest.clone()),
            name: checked.expect("finish() refused a missing field"),
            spec: None,
        };
        let created = api
            .deployment_create()
            .project(&project)
            .cluster(&cluster)
            .namespace(&namespace)
            .idempotency_key(idempotency_key)
            .body(body)
            .send()
            .await
            .map_err(ConsoleError::from);
        // As `kubectl apply`: a deployment of that name already there gets the manifest.
        match created {
            Err(error) if error.status == 409 && error.code == "already_exists" => {
                let update = types::DeploymentUpdate { labels: None, manifest: Some(manifest), spec: None };
                api.deployment_update()
                    .project(&project)
                    .cluster(&cluster)
                    .namespace(&namespace)
                    .deployment(&name)
                    .body(update)
                    .send()
                    .await?;
            }
            other => {
                other?;
            }
        }
        session.redirect(&format!("{}?done=applied", deployment_path(&project, &cluster, &namespace, &name)));
        Ok(())
    };
    // The API names the manifest's own fields (`manifest.spec…`): they show at the text area.
    made.await
}

#[allow(clippy::too_many_arguments)]
#[server(prefix = "/console/fn", endpoint = "deployment_create_form")]
pub async fn deployment_create_form(
    csrf: String,
    idempotency_key: String,
    project: String,
    cluster: String,
    namespace: String,
    name: String,
    image: String,
    replicas: String,
    on_drift: String,
) -> Result<(), ConsoleError> {
    let session = request_session();
    session.check_csrf(&csrf)?;
    let kept = [("name", name.as_str()), ("image", image.as_str()), ("replicas", replicas.as_str())];
    let made = async {
        let mut fields = Fields::default();
        let checked = fields.parse::<types::DeploymentCreateName>(
            "name",
            &name,
            "Use 1-63 lowercase letters, digits or '-', starting with a letter.",
        );
        let image_checked = fields.parse::<types::DeploymentSpecImage>(
            "spec.image",
            &image,
            "Enter an image reference, e.g. registry.example.com/web:1.0.",
        );
        let count = fields.parse::<i64>("spec.replicas", &replicas, "Enter a number of pods, 0 to 1000.");
        let on_drift = fields.parse::<types::DeploymentSpecOnDrift>(
            "spec.on_drift",
            &on_drift,
            "Choose whether kubectl's changes are put back or adopted.",
        );
        fields.finish()?;
        let api = session.api().await?;
        let spec = types::DeploymentSpec {
            env: Vec::new(),
            image: image_checked.expect("finish() refused a missing field"),
            node_selector: None,
            on_drift,
            paused: None,
            pod_labels: None,
            ports: Vec::new(),
            probes: None,
            replicas: count,
            resources: None,
            restarted_at: None,
            strategy: None,
            tolerations: Vec::new(),
        };
        let body = types::DeploymentCreate {
            labels: None,
            manifest: None,
            name: checked.expect("finish() refused a missing field"),
            spec: Some(spec),
        };
        api.deployment_create()
            .project(&project)
            .cluster(&cluster)
            .namespace(&namespace)
            .idempotency_key(idempotency_key)
            .body(body)
            .send()
            .await?;
        session.redirect(&deployment_path(&project, &cluster, &namespace, name.trim()));
        Ok(())
    };
    made.await.map_err(|e: ConsoleError| e.keep(&kept))
}

#[allow(clippy::too_many_arguments)]
#[server(prefix = "/console/fn", endpoint = "service_create")]
pub async fn service_create(
    csrf: String,
    idempotency_key: String,
    project: String,
    cluster: String,
    namespace: String,
    service_name: String,
    service_type: String,
    selector: String,
    port: String,
    target_port: Option<String>,
) -> Result<(), ConsoleError> {
    let session = request_session();
    session.check_csrf(&csrf)?;
    let target_port = target_port.unwrap_or_default();
    let kept = [
        ("service_name", service_name.as_str()),
        ("service_type", service_type.as_str()),
        ("selector", selector.as_str()),
        ("port", port.as_str()),
        ("target_port", target_port.as_str()),
    ];
    let made = async {
        let mut fields = Fields::default();
        let name = fields.parse::<types::ServiceCreateName>(
            "name",
            &service_name,
            "Use 1-63 lowercase letters, digits or '-', starting with a letter.",
        );
        let kind = fields.parse::<types::ServiceSpecType>("spec.type", &service_type, "Choose ClusterIP or NodePort.");
        let mut pods = std::collections::HashMap::new();
        for line in selector.lines().map(str::trim).filter(|line| !line.is_empty()) {
            match line.split_once('=').map(|(k, v)| (k.trim(), v.trim().parse::<types::SelectorMapValue>())) {
                Some((key, Ok(value))) if !key.is_empty() => {
                    pods.insert(key.to_string(), value);
                }
                _ => fields.problem("spec.selector", &format!("Write key=value lines, e.g. app=web (not {line:?}).")),
            }
        }
        if pods.is_empty() {
            fields.problem("spec.selector", "Select the pods to send traffic to, e.g. app=web.");
        }
        let port = fields.parse::<std::num::NonZeroU64>("spec.ports[0].port", &port, "Enter a port, 1 to 65535.");
        let target_port = match target_port.trim() {
            "" => None,
            text => {
                fields.parse::<std::num::NonZeroU64>("spec.ports[0].target_port", text, "Enter a port, 1 to 65535.")
            }
        };
        fields.finish()?;
        let spec = types::ServiceSpec {
            ports: vec![types::ServicePort {
                name: None,
                node_port: None,
                port: port.expect("finish() refused a missing field"),
                protocol: None,
                target_port,
            }],
            selector: types::SelectorMap(pods),
            type_: kind,
        };
        let body = types::ServiceCreate {
            labels: None,
            manifest: None,
            name: name.expect("finish() refused a missing field"),
            spec: Some(spec),
        };
        session
            .api()
            .await?
            .service_create()
            .project(&project)
            .cluster(&cluster)
            .namespace(&namespace)
            .idempotency_key(idempotency_key)
            .body(body)
            .send()
            .await?;
        session.redirect(&format!("{}&service_created=1", workloads_path(&project, &cluster, &namespace)));
        Ok(())
    };
    made.await.map_err(|e: ConsoleError| e.keep(&kept))
}

#[server(prefix = "/console/fn", endpoint = "service_delete")]
pub async fn service_delete(
    csrf: String,
    project: String,
    cluster: String,
    namespace: String,
    service: String,
    confirm: Option<String>,
) -> Result<(), ConsoleError> {
    let session = request_session();
    session.check_csrf(&csrf)?;
    Fields::ticked(&confirm, "Tick the box to confirm deleting the service.")?;
    let api = session.api().await?;
    api.service_delete().project(&project).cluster(&cluster).namespace(&namespace).service(&service).send().await?;
    session.redirect(&workloads_path(&project, &cluster, &namespace));
    Ok(())
}

/// What the workloads page shows for one namespace.
struct WorkloadsData {
    namespaces: Vec<types::NamespaceView>,
    deployments: Vec<types::DeploymentView>,
    /// Those made with kubectl in this namespace, which Moke only shows.
    unmanaged: Vec<types::UnmanagedDeploymentView>,
    services: Vec<types::ServiceView>,
}

async fn workloads_data(
    session: &RequestSession,
    project: &str,
    cluster: &str,
    namespace: &str,
) -> Result<WorkloadsData, ConsoleError> {
    let api = session.api().await?;
    let namespaces = api.namespace_list().project(project).cluster(cluster).limit(100u32).send().await?.into_inner();
    let (deployments, unmanaged, services) = futures::join!(
        api.deployment_list().project(project).cluster(cluster).namespace(namespace).limit(100u32).send(),
        api.unmanaged_deployment_list().project(project).cluster(cluster).namespace(namespace).limit(300u32).send(),
        api.service_list().project(project).cluster(cluster).namespace(namespace).limit(100u32).send(),
    );
    Ok(WorkloadsData {
        namespaces: namespaces.items,
        deployments: deployments?.into_inner().items,
        unmanaged: unmanaged?.into_inner().items,
        services: services?.into_inner().items,
    })
}

/// `/projects/:project/clusters/:cluster/workloads?namespace=…`.
#[component]
pub fn Workloads() -> impl IntoView {
    let create_namespace = ServerAction::<NamespaceCreate>::new();
    let from_yaml = ServerAction::<DeploymentCreateYaml>::new();
    let from_form = ServerAction::<DeploymentCreateForm>::new();
    let create_service = ServerAction::<ServiceCreate>::new();
    let delete_service = ServerAction::<ServiceDelete>::new();
    let service_errors = FormErrors::new(
        action_error(create_service.value().get_untracked()),
        &["name", "spec.type", "spec.selector", "spec.ports"],
    );
    let services_errors = FormErrors::new(action_error(delete_service.value().get_untracked()), &[]);
    let namespace_errors = FormErrors::new(action_error(create_namespace.value().get_untracked()), &["name"]);
    let yaml_errors = FormErrors::new(action_error(from_yaml.value().get_untracked()), &["manifest"]);
    let form_errors =
        FormErrors::new(action_error(from_form.value().get_untracked()), &["name", "spec.image", "spec.replicas"]);
    let (project, cluster) = (param("project"), param("cluster"));
    let namespace = query("namespace").unwrap_or_else(|| "default".into());
    let session = request_session();
    let content = {
        let (session, project, cluster, namespace) =
            (session.clone(), project.clone(), cluster.clone(), namespace.clone());
        Suspend::new(async move {
            let WorkloadsData { namespaces, deployments, unmanaged, services } =
                match workloads_data(&session, &project, &cluster, &namespace).await {
                    Ok(data) => data,
                    Err(error) => return error_view(&session, error),
                };
            let (p1, c1, n1) = (project.clone(), cluster.clone(), namespace.clone());
            let (p2, c2, n2) = (project.clone(), cluster.clone(), namespace.clone());
            let (p3, c3) = (project.clone(), cluster.clone());
            let (p4, c4, n4) = (project.clone(), cluster.clone(), namespace.clone());
            view! {
                <h1>{format!("Workloads of {cluster}")}</h1>
                <ClusterTabs project=project.clone() cluster=cluster.clone() current="workloads"/>
                <nav class="namespaces" aria-label="Namespaces">
                    <span class="muted">"Namespace: "</span>
                    {namespaces.into_iter().map(|ns| {
                        let current = (ns.name == namespace).then_some("page");
                        let href = workloads_path(&project, &cluster, &ns.name);
                        view! { <a href=href aria-current=current>{ns.name}</a> }
                    }).collect_view()}
                </nav>
                <section aria-labelledby="deployments-title">
                    <h2 id="deployments-title">{format!("Deployments in {namespace}")}</h2>
                    {if deployments.is_empty() {
                        view! { <p class="empty">"No deployments here yet: paste a manifest or fill in the form below."</p> }.into_any()
                    } else {
                        view! {
                            <table>
                                <caption class="visually-hidden">"Deployments"</caption>
                                <thead><tr><th scope="col">"Name"</th><th scope="col">"Status"</th><th scope="col">"Ready"</th><th scope="col">"Image"</th><th scope="col">"Revision"</th></tr></thead>
                                <tbody>
                                    {deployments.into_iter().map(|d| {
                                        let href = deployment_path(&project, &cluster, &namespace, &d.name);
                                        view! {
                                            <tr>
                                                <td><a href=href>{d.name.clone()}</a></td>
                                                <td><StatusChip phase=d.status.phase.clone() stale=d.status.stale/></td>
                                                <td>{format!("{}/{}", d.status.ready_replicas, d.status.replicas)}</td>
                                                <td><code>{d.spec.image.to_string()}</code></td>
                                                <td>{d.revision}</td>
                                            </tr>
                                        }
                                    }).collect_view()}
                                </tbody>
                            </table>
                        }.into_any()
                    }}
                </section>
                {(!unmanaged.is_empty()).then(|| view! {
                    <section aria-labelledby="unmanaged-title">
                        <h2 id="unmanaged-title">"Made with kubectl"</h2>
                        <p class="hint">"Deployments made through the cluster's own API. Moke shows them and never changes them; manage them with kubectl."</p>
                        <table>
                            <caption class="visually-hidden">"Deployments made with kubectl"</caption>
                            <thead><tr><th scope="col">"Name"</th><th scope="col">"Status"</th><th scope="col">"Ready"</th><th scope="col">"Image"</th></tr></thead>
                            <tbody>
                                {unmanaged.into_iter().map(|d| view! {
                                    <tr>
                                        <td>{d.name.clone()}</td>
                                        <td><StatusChip phase=d.phase.clone() stale=false/></td>
                                        <td>{format!("{}/{}", d.ready_replicas, d.replicas)}</td>
                                        <td><code>{d.image.clone()}</code></td>
                                    </tr>
                                }).collect_view()}
                            </tbody>
                        </table>
                    </section>
                })}
                <section class="card" aria-labelledby="yaml-title">
                    <h2 id="yaml-title">"Deploy from YAML"</h2>
                    <p class="hint">"Creates the deployment, or updates it when one of that name exists (like kubectl apply)."</p>
                    <FormAlert errors=yaml_errors.clone()/>
                    <ActionForm action=from_yaml>
                        <Csrf/>
                        <IdempotencyKey/>
                        <input type="hidden" name="project" value=p1/>
                        <input type="hidden" name="cluster" value=c1/>
                        <input type="hidden" name="namespace" value=n1/>
                        <TextArea label="Kubernetes Deployment (apps/v1)" name="manifest" errors=yaml_errors.clone()
                            hint="One Deployment with one container; its metadata.name names it."/>
                        <button type="submit">"Deploy"</button>
                    </ActionForm>
                </section>
                <section class="card" aria-labelledby="form-title">
                    <h2 id="form-title">"Deploy an image"</h2>
                    <FormAlert errors=form_errors.clone()/>
                    <ActionForm action=from_form>
                        <Csrf/>
                        <IdempotencyKey/>
                        <input type="hidden" name="project" value=p2/>
                        <input type="hidden" name="cluster" value=c2/>
                        <input type="hidden" name="namespace" value=n2/>
                        <Field label="Name" name="name" pattern=NAME_PATTERN required=true errors=form_errors.clone()/>
                        <Field label="Image" name="image" error_name="spec.image" placeholder="registry.example.com/web:1.0" required=true errors=form_errors.clone()/>
                        <Field label="Pods" name="replicas" error_name="spec.replicas" kind="number" value="2" min="0" max="1000" required=true errors=form_errors.clone()/>
                        <div class="field">
                            <label for="field-on_drift">"Changes made with kubectl"</label>
                            <p class="hint" id="field-on_drift-hint">"A change made in the cluster (kubectl edit, scale, set image) is reported either way; an adopted one must pass the organization's image rules and quotas."</p>
                            <select id="field-on_drift" name="on_drift" aria-describedby="field-on_drift-hint">
                                <option value="revert" selected=true>"Put back: Moke's spec wins"</option>
                                <option value="adopt">"Adopt: each change becomes a new revision"</option>
                            </select>
                        </div>
                        <button type="submit">"Deploy"</button>
                    </ActionForm>
                </section>
                <section aria-labelledby="services-title">
                    <h2 id="services-title">{format!("Services in {namespace}")}</h2>
                    <FormAlert errors=services_errors.clone()/>
                    {if services.is_empty() {
                        view! { <p class="muted">"No services in this namespace."</p> }.into_any()
                    } else {
                        view! {
                            <table>
                                <caption class="visually-hidden">"Services"</caption>
                                <thead><tr><th scope="col">"Name"</th><th scope="col">"Cluster IP"</th><th scope="col">"Ports"</th><th scope="col">"Endpoints"</th><th scope="col">"Delete"</th></tr></thead>
                                <tbody>
                                    {services.into_iter().map(|s| {
                                        let (project, cluster, namespace) = (project.clone(), cluster.clone(), namespace.clone());
                                        let confirm_id = format!("delete-service-{}", s.name);
                                        let (service, confirm_label) = (s.name.clone(), format!(": delete {}", s.name));
                                        let ports = s.spec.ports.iter().map(|p| p.port.to_string()).collect::<Vec<_>>().join(", ");
                                        let ready = s.endpoints.iter().filter(|e| e.ready).count();
                                        let endpoints = s.endpoints.iter().map(|e| format!("{}:{} ({})", e.ip, e.port, e.pod)).collect::<Vec<_>>().join(", ");
                                        view! {
                                            <tr>
                                                <td>{s.name}</td>
                                                <td><code>{s.cluster_ip}</code></td>
                                                <td>{ports}</td>
                                                <td>{format!("{ready} ready")}<br/><span class="muted">{endpoints}</span></td>
                                                <td>
                                                    <ActionForm action=delete_service>
                                                        <Csrf/>
                                                        <input type="hidden" name="project" value=project/>
                                                        <input type="hidden" name="cluster" value=cluster/>
                                                        <input type="hidden" name="namespace" value=namespace/>
                                                        <input type="hidden" name="service" value=service/>
                                                        <input type="checkbox" id=confirm_id.clone() name="confirm" value="yes" required=true/>
                                                        <label for=confirm_id>"Sure"<span class="visually-hidden">{confirm_label}</span></label>
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
                <section class="card" aria-labelledby="service-title">
                    <h2 id="service-title">"Create a service"</h2>
                    <p class="hint">"A stable address in front of the pods the selector matches. Deployments made here label their pods app=<name>."</p>
                    <FormAlert errors=service_errors.clone()/>
                    <ActionForm action=create_service>
                        <Csrf/>
                        <IdempotencyKey/>
                        <input type="hidden" name="project" value=p4/>
                        <input type="hidden" name="cluster" value=c4/>
                        <input type="hidden" name="namespace" value=n4/>
                        <Field label="Name" name="service_name" error_name="name" pattern=NAME_PATTERN required=true errors=service_errors.clone()/>
                        <div class="field">
                            <label for="field-service_type">"Type"</label>
                            <select id="field-service_type" name="service_type">
                                <option value="ClusterIP" selected=true>"ClusterIP: reachable inside the cluster"</option>
                                <option value="NodePort">"NodePort: also on a port of every node"</option>
                            </select>
                        </div>
                        <TextArea label="Selector" name="selector" error_name="spec.selector" rows=2 hint="One key=value per line, e.g. app=web." errors=service_errors.clone()/>
                        <Field label="Port" name="port" error_name="spec.ports[0].port" kind="number" min="1" max="65535" value="80" required=true errors=service_errors.clone()/>
                        <Field label="Pods' port (optional)" name="target_port" error_name="spec.ports[0].target_port" kind="number" min="1" max="65535"
                            hint="The port the containers listen on; the same as Port if empty." errors=service_errors.clone()/>
                        <button type="submit">"Create service"</button>
                    </ActionForm>
                </section>
                <section class="card" aria-labelledby="namespace-title">
                    <h2 id="namespace-title">"Create a namespace"</h2>
                    <FormAlert errors=namespace_errors.clone()/>
                    <ActionForm action=create_namespace>
                        <Csrf/>
                        <IdempotencyKey/>
                        <input type="hidden" name="project" value=p3/>
                        <input type="hidden" name="cluster" value=c3/>
                        <Field label="Name" name="name" pattern=NAME_PATTERN required=true errors=namespace_errors.clone()/>
                        <button type="submit" class="secondary">"Create namespace"</button>
                    </ActionForm>
                </section>
            }
            .into_any()
        })
    };
    let crumbs = vec![
        ("Projects".to_string(), "/projects".to_string()),
        (project.clone(), format!("/projects/{}", segment(&project))),
        (cluster.clone(), format!("/projects/{}/clusters/{}", segment(&project), segment(&cluster))),
    ];
    view! {
        <Frame title=format!("Workloads of {cluster}") crumbs=crumbs>
            <Suspense fallback=|| ()>{content}</Suspense>
        </Frame>
    }
}

/// The deployment a form acts on.
#[derive(Clone)]
struct Target {
    project: String,
    cluster: String,
    namespace: String,
    deployment: String,
}

impl Target {
    fn path(&self) -> String {
        deployment_path(&self.project, &self.cluster, &self.namespace, &self.deployment)
    }
}

/// Hidden fields naming the deployment.
#[component]
fn TargetFields(target: Target) -> impl IntoView {
    view! {
        <input type="hidden" name="project" value=target.project/>
        <input type="hidden" name="cluster" value=target.cluster/>
        <input type="hidden" name="namespace" value=target.namespace/>
        <input type="hidden" name="deployment" value=target.deployment/>
    }
}

#[server(prefix = "/console/fn", endpoint = "deployment_scale")]
pub async fn deployment_scale(
    csrf: String,
    project: String,
    cluster: String,
    namespace: String,
    deployment: String,
    replicas: String,
) -> Result<(), ConsoleError> {
    let session = request_session();
    session.check_csrf(&csrf)?;
    let mut fields = Fields::default();
    let count = fields.parse::<i64>("replicas", &replicas, "Enter a number of pods, 0 to 1000.");
    fields.finish()?;
    let api = session.api().await?;
    api.deployment_scale()
        .project(&project)
        .cluster(&cluster)
        .namespace(&namespace)
        .deployment(&deployment)
        .body(types::ScaleRequest { replicas: count.expect("finish() refused a missing field") })
        .send()
        .await?;
    session.redirect(&format!("{}?done=scaled", deployment_path(&project, &cluster, &namespace, &deployment)));
    Ok(())
}

#[server(prefix = "/console/fn", endpoint = "deployment_action")]
pub async fn deployment_action(
    csrf: String,
    project: String,
    cluster: String,
    namespace: String,
    deployment: String,
    action: String,
) -> Result<(), ConsoleError> {
    let session = request_session();
    session.check_csrf(&csrf)?;
    let api = session.api().await?;
    let (p, c, n, d) = (&project, &cluster, &namespace, &deployment);
    let done = match action.as_str() {
        "restart" => {
            api.deployment_restart().project(p).cluster(c).namespace(n).deployment(d).send().await?;
            "restarted"
        }
        "pause" => {
            api.deployment_pause().project(p).cluster(c).namespace(n).deployment(d).send().await?;
            "paused"
        }
        "resume" => {
            api.deployment_resume().project(p).cluster(c).namespace(n).deployment(d).send().await?;
            "resumed"
        }
        _ => return Err(ConsoleError::new(400, "Unknown action", "Reload the page and try again.")),
    };
    session.redirect(&format!("{}?done={done}", deployment_path(p, c, n, d)));
    Ok(())
}

#[server(prefix = "/console/fn", endpoint = "deployment_rollback")]
pub async fn deployment_rollback(
    csrf: String,
    project: String,
    cluster: String,
    namespace: String,
    deployment: String,
    revision: Option<String>,
) -> Result<(), ConsoleError> {
    let session = request_session();
    session.check_csrf(&csrf)?;
    let revision = revision.filter(|r| !r.is_empty()).map(|r| r.parse::<i64>()).transpose().map_err(|_| {
        ConsoleError::invalid(vec![crate::error::FieldProblem {
            field: "revision".into(),
            message: "Choose a revision.".into(),
        }])
    })?;
    let api = session.api().await?;
    api.deployment_rollback()
        .project(&project)
        .cluster(&cluster)
        .namespace(&namespace)
        .deployment(&deployment)
        .body(types::RollbackRequest { revision })
        .send()
        .await?;
    session.redirect(&format!("{}?done=rolled-back", deployment_path(&project, &cluster, &namespace, &deployment)));
    Ok(())
}

#[server(prefix = "/console/fn", endpoint = "deployment_delete")]
pub async fn deployment_delete(
    csrf: String,
    project: String,
    cluster: String,
    namespace: String,
    deployment: String,
    confirm: String,
) -> Result<(), ConsoleError> {
    let session = request_session();
    session.check_csrf(&csrf)?;
    Fields::typed(&confirm, &deployment, "Type the deployment's name exactly to delete it.")?;
    let api = session.api().await?;
    api.deployment_delete()
        .project(&project)
        .cluster(&cluster)
        .namespace(&namespace)
        .deployment(&deployment)
        .send()
        .await?;
    session.redirect(&workloads_path(&project, &cluster, &namespace));
    Ok(())
}

/// `/projects/:project/clusters/:cluster/namespaces/:namespace/deployments/:deployment`.
#[component]
pub fn Deployment() -> impl IntoView {
    let scale = ServerAction::<DeploymentScale>::new();
    let act = ServerAction::<DeploymentAction>::new();
    let rollback = ServerAction::<DeploymentRollback>::new();
    let delete = ServerAction::<DeploymentDelete>::new();
    let scale_errors = FormErrors::new(action_error(scale.value().get_untracked()), &["replicas"]);
    let act_errors = FormErrors::new(action_error(act.value().get_untracked()), &[]);
    let rollback_errors = FormErrors::new(action_error(rollback.value().get_untracked()), &["revision"]);
    let delete_errors = FormErrors::new(action_error(delete.value().get_untracked()), &["confirm"]);
    let target = Target {
        project: param("project"),
        cluster: param("cluster"),
        namespace: param("namespace"),
        deployment: param("deployment"),
    };
    let done = query("done");
    let session = request_session();
    let content = {
        let (session, target) = (session.clone(), target.clone());
        Suspend::new(async move {
            let Target { project, cluster, namespace, deployment } = target.clone();
            let fetched = async {
                let api = session.api().await?;
                let (viewed, revisions) = futures::join!(
                    api.deployment_view()
                        .project(&project)
                        .cluster(&cluster)
                        .namespace(&namespace)
                        .deployment(&deployment)
                        .send(),
                    api.deployment_revision_list()
                        .project(&project)
                        .cluster(&cluster)
                        .namespace(&namespace)
                        .deployment(&deployment)
                        .limit(20u32)
                        .send(),
                );
                Ok::<_, ConsoleError>((viewed?.into_inner(), revisions?.into_inner().items))
            };
            let (d, revisions) = match fetched.await {
                Ok(data) => data,
                Err(error) => return error_view(&session, error),
            };
            let rolling = d.status.phase == "progressing" || d.status.observed_generation < d.generation;
            let paused = d.spec.paused == Some(true);
            let path = target.path();
            let (for_scale, for_actions, for_rollbacks, for_delete) =
                (target.clone(), target.clone(), target.clone(), target.clone());
            view! {
                <h1>{format!("Deployment {deployment}")}</h1>
                <div class="live" role="status" aria-live="polite">
                    {done.as_deref().and_then(done_message).map(|done| view! { <div class="alert ok">{done}</div> })}
                </div>
                <InProgress changing=rolling here=path.clone()/>
                <section class="summary" aria-label="Summary" id="deployment-summary" data-live="">
                    <dl>
                        <div><dt>"Status"</dt><dd><StatusChip phase=d.status.phase.clone() stale=d.status.stale/>{paused.then_some(" (paused)")}</dd></div>
                        <div><dt>"Pods ready"</dt><dd>{format!("{} of {}", d.status.ready_replicas, d.status.replicas)}</dd></div>
                        <div><dt>"Updated"</dt><dd>{format!("{} of {}", d.status.updated_replicas, d.status.replicas)}</dd></div>
                        <div><dt>"Image"</dt><dd><code>{d.spec.image.to_string()}</code></dd></div>
                        <div><dt>"Revision"</dt><dd>{format!("{} (running {})", d.revision, d.template_revision)}</dd></div>
                        <div><dt>"Last good revision"</dt><dd>{d.last_good_revision.map_or("none yet".to_string(), |r| r.to_string())}</dd></div>
                        <div><dt>"Changes made with kubectl"</dt><dd>{if d.spec.on_drift.as_deref().map(|o| o.as_str()) == Some("adopt") { "adopted as revisions" } else { "put back" }}</dd></div>
                    </dl>
                    {d.status.last_error.clone().map(|e| view! { <p class="alert error">{e.message}</p> })}
                    {d.status.conditions.iter().find(|c| c.type_ == "Drifted").map(|c| view! { <p class="alert">{c.message.clone()}</p> })}
                </section>
                <section aria-labelledby="actions-title">
                    <h2 id="actions-title">"Actions"</h2>
                    <FormAlert errors=act_errors.clone()/>
                    <FormAlert errors=scale_errors.clone()/>
                    <div class="actions">
                        <ActionForm action=scale>
                            <Csrf/>
                            <TargetFields target=for_scale/>
                            <label for="field-replicas">"Pods"</label>
                            <input id="field-replicas" class="narrow-input" type="number" name="replicas" min="0" max="1000" value=d.spec.replicas.unwrap_or(1).to_string()/>
                            <button type="submit" class="secondary">"Scale"</button>
                        </ActionForm>
                        <ActionForm action=act>
                            <Csrf/>
                            <TargetFields target=for_actions/>
                            <button type="submit" name="action" value="restart" class="secondary">"Restart"</button>
                            {if paused {
                                view! { <button type="submit" name="action" value="resume" class="secondary">"Resume"</button> }.into_any()
                            } else {
                                view! { <button type="submit" name="action" value="pause" class="secondary">"Pause"</button> }.into_any()
                            }}
                        </ActionForm>
                    </div>
                </section>
                <section aria-labelledby="pods-title" id="deployment-pods" data-live="">
                    <h2 id="pods-title">"Pods"</h2>
                    {if d.status.pods.is_empty() {
                        view! { <p class="muted">"No pods."</p> }.into_any()
                    } else {
                        view! {
                            <table>
                                <caption class="visually-hidden">"Pods"</caption>
                                <thead><tr><th scope="col">"Name"</th><th scope="col">"Ready"</th><th scope="col">"Revision"</th><th scope="col">"Node"</th><th scope="col">"Zone"</th><th scope="col">"IP"</th></tr></thead>
                                <tbody>
                                    {d.status.pods.iter().map(|p| view! {
                                        <tr>
                                            <td>{p.name.clone()}</td>
                                            <td>{if p.ready { "yes" } else { "no" }}</td>
                                            <td>{p.revision}</td>
                                            <td>{if p.node.is_empty() { "pending".to_string() } else { p.node.clone() }}</td>
                                            <td>{p.zone.clone()}</td>
                                            <td><code>{p.ip.clone()}</code></td>
                                        </tr>
                                    }).collect_view()}
                                </tbody>
                            </table>
                        }.into_any()
                    }}
                </section>
                <section aria-labelledby="revisions-title">
                    <h2 id="revisions-title">"Revisions"</h2>
                    <FormAlert errors=rollback_errors.clone()/>
                    <table>
                        <caption class="visually-hidden">"Revisions"</caption>
                        <thead><tr><th scope="col">"Revision"</th><th scope="col">"Cause"</th><th scope="col">"Image"</th><th scope="col">"When"</th><th scope="col">"Roll back"</th></tr></thead>
                        <tbody>
                            {revisions.into_iter().map(|r| {
                                let current = r.revision == d.template_revision;
                                let target = for_rollbacks.clone();
                                view! {
                                    <tr>
                                        <td>{r.revision}{current.then_some(" (running)")}</td>
                                        <td>{r.cause.clone()}</td>
                                        <td><code>{r.spec.image.to_string()}</code></td>
                                        <td>{ago(r.created_at)}</td>
                                        <td>
                                            {(!current).then(|| view! {
                                                <ActionForm action=rollback>
                                                    <Csrf/>
                                                    <TargetFields target=target.clone()/>
                                                    <input type="hidden" name="revision" value=r.revision.to_string()/>
                                                    <button type="submit" class="secondary" aria-label=format!("Roll back to revision {}", r.revision)>"Roll back"</button>
                                                </ActionForm>
                                            })}
                                        </td>
                                    </tr>
                                }
                            }).collect_view()}
                        </tbody>
                    </table>
                </section>
                <section class="card danger" aria-labelledby="delete-title">
                    <h2 id="delete-title">"Delete this deployment"</h2>
                    <p>"Its pods stop. This cannot be undone."</p>
                    <FormAlert errors=delete_errors.clone()/>
                    <ActionForm action=delete>
                        <Csrf/>
                        <TargetFields target=for_delete/>
                        <Field label=r#"Type the deployment's name to confirm"# name="confirm" autocomplete="off" required=true errors=delete_errors.clone()/>
                        <button type="submit" class="danger">"Delete deployment"</button>
                    </ActionForm>
                </section>
            }
            .into_any()
        })
    };
    let crumbs = vec![
        ("Projects".to_string(), "/projects".to_string()),
        (target.project.clone(), format!("/projects/{}", segment(&target.project))),
        (
            target.cluster.clone(),
            format!("/projects/{}/clusters/{}", segment(&target.project), segment(&target.cluster)),
        ),
        (target.namespace.clone(), workloads_path(&target.project, &target.cluster, &target.namespace)),
    ];
    view! {
        <Frame title=format!("Deployment {}", target.deployment) crumbs=crumbs>
            <Suspense fallback=|| ()>{content}</Suspense>
        </Frame>
    }
}

/// What a deployment action's `?done=` says (known values only: no link
/// can make the page say anything else).
fn done_message(done: &str) -> Option<&'static str> {
    Some(match done {
        "applied" => "The manifest was applied.",
        "scaled" => "Scaled.",
        "restarted" => "Restarting its pods.",
        "paused" => "Paused: changes wait until it is resumed.",
        "resumed" => "Resumed.",
        "rolled-back" => "Rolling back.",
        _ => return None,
    })
}
