//! The Kubernetes API of a simulated hosted cluster, as kubectl uses it:
//! discovery and the OpenAPI v3 index, then get, list, watch, create,
//! update (409 on a stale `resourceVersion`), patch (merge, JSON and
//! strategic merge) and delete of namespaces, configmaps and deployments
//! (with `scale`), read-only nodes and pods, self reviews, and Table output
//! for `kubectl get`. Authorization follows the client certificate's Moke
//! groups ([`rbac`]). Objects live in the cluster's [`KubeStore`], which
//! [`projection::sync`] keeps one with the simulated region: what Moke's API
//! made shows here, and what kubectl made runs there.

mod apply;
mod bindings;
mod events;
mod logs;
mod patch;
mod projection;
mod protobuf;
mod rbac;
mod replicasets;
mod resources;
mod schemas;
mod secrets;
mod services;
mod store;
mod system;
mod tables;
mod validate;

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use serde_json::{Value, json};

pub use projection::{
    SYSTEM_NAMESPACES, deployment_key, edited_workload, is_kubectl_workload, kubectl_namespaces, sync,
};
pub use secrets::{Kek, SealError};
pub use services::{conflict_lasts, move_out_of_mokes_ranges};
pub use store::KubeStore;

use crate::Simulated;
use resources::{Kind, Source};

/// The largest request body accepted (the API server's own limit).
pub const MAX_BODY_BYTES: usize = 3 * 1024 * 1024;
/// The most objects clients may make in one cluster (namespaces,
/// configmaps, deployments; pods and nodes are the region's).
pub const MAX_OBJECTS: usize = 1000;
/// The most watches open on one cluster, and of one user there.
pub const MAX_WATCHES_PER_CLUSTER: usize = 128;
pub const MAX_WATCHES_PER_USER: usize = 16;
/// How long a watch waits for a client that stopped reading before it ends.
const STALLED_WATCH: Duration = Duration::from_secs(30);
/// The longest a watch runs, whatever the client asks (kubectl asks less
/// and watches again).
pub const MAX_WATCH: Duration = Duration::from_secs(30 * 60);
/// How often a watch that asked for bookmarks gets one.
const BOOKMARK_EVERY: Duration = Duration::from_secs(20);

/// Who is calling: the client certificate's user and groups, and whether
/// the certificate still works (checked again while a watch runs: a
/// revocation or a firewall change ends it).
#[derive(Clone)]
pub struct Caller {
    pub user: String,
    pub groups: Vec<String>,
    pub still_allowed: Arc<dyn Fn() -> bool + Send + Sync>,
}

/// `vMAJOR.MINOR.PATCH` from a catalog version such as `1.33`.
pub fn git_version(version: &str) -> String {
    if version.split('.').count() >= 3 { format!("v{version}") } else { format!("v{version}.0") }
}

/// A `Status` answer, as the API server refuses.
pub fn status(code: StatusCode, reason: &str, message: &str) -> Response {
    (code, axum::Json(status_object(code, reason, message))).into_response()
}

fn status_object(code: StatusCode, reason: &str, message: &str) -> Value {
    json!({
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": message, "reason": reason, "code": code.as_u16(),
    })
}

/// A refusal on its way out of an operation.
struct Refusal(Box<Response>);

type Answer = Result<Response, Refusal>;

fn refuse(code: StatusCode, reason: &str, message: impl AsRef<str>) -> Refusal {
    Refusal(Box::new(status(code, reason, message.as_ref())))
}

fn not_found(kind: &Kind, name: &str) -> Refusal {
    refuse(StatusCode::NOT_FOUND, "NotFound", format!("{}{} \"{name}\" not found", kind.resource, group_suffix(kind)))
}

fn group_suffix(kind: &Kind) -> String {
    if kind.group.is_empty() { String::new() } else { format!(".{}", kind.group) }
}

fn invalid(kind: &Kind, name: &str, field: &str, why: &str) -> Refusal {
    let message = format!("{}{} \"{name}\" is invalid: {field}: {why}", kind.kind, group_suffix(kind));
    refuse(StatusCode::UNPROCESSABLE_ENTITY, "Invalid", message)
}

/// What a request path names.
enum Route {
    /// A discovery or OpenAPI document.
    Document(Value),
    Resource(Target),
    NotFound,
}

struct Target {
    kind: &'static Kind,
    /// Set for a namespaced path.
    namespace: Option<String>,
    name: Option<String>,
    subresource: Option<String>,
}

fn route(path: &str) -> Route {
    let segments: Vec<&str> = path.trim_matches('/').split('/').filter(|s| !s.is_empty()).collect();
    let (group, version, rest) = match segments.as_slice() {
        ["api"] => return Route::Document(resources::api_versions()),
        ["apis"] => return Route::Document(resources::api_groups()),
        ["openapi", "v3"] => return Route::Document(resources::openapi_index()),
        ["openapi", "v3", rest @ ..] => {
            return resources::openapi_document(&rest.join("/")).map_or(Route::NotFound, Route::Document);
        }
        ["api", version, rest @ ..] => ("", *version, rest),
        ["apis", group, version, rest @ ..] => (*group, *version, rest),
        _ => return Route::NotFound,
    };
    if rest.is_empty() {
        return resources::resource_list(group, version).map_or(Route::NotFound, Route::Document);
    }
    let namespaced = |resource: &str| resources::find(group, version, resource).is_some_and(|k| k.namespaced);
    let (namespace, rest) = match rest {
        ["namespaces", namespace, resource, tail @ ..] if namespaced(resource) => {
            (Some(namespace.to_string()), [&[*resource][..], tail].concat())
        }
        _ => (None, rest.to_vec()),
    };
    let (resource, name, subresource) = match rest.as_slice() {
        [resource] => (*resource, None, None),
        [resource, name] => (*resource, Some(name.to_string()), None),
        [resource, name, sub] => (*resource, Some(name.to_string()), Some(sub.to_string())),
        _ => return Route::NotFound,
    };
    let Some(kind) = resources::find(group, version, resource) else { return Route::NotFound };
    if kind.namespaced && namespace.is_none() && name.is_some() {
        return Route::NotFound;
    }
    if subresource.as_deref().is_some_and(|sub| !kind.subresources.contains(&sub)) {
        return Route::NotFound;
    }
    Route::Resource(Target { kind, namespace, name, subresource })
}

/// Serves one request of `caller` to the API of `cluster_id`.
pub async fn serve(
    provider: Arc<Mutex<Simulated>>,
    cluster_id: String,
    caller: Caller,
    request: axum::extract::Request,
) -> Response {
    let (parts, body) = request.into_parts();
    let target = match route(parts.uri.path()) {
        Route::Document(document) => return axum::Json(document).into_response(),
        Route::NotFound => {
            return status(StatusCode::NOT_FOUND, "NotFound", "the server could not find the requested resource");
        }
        Route::Resource(target) => target,
    };
    let query: HashMap<String, String> =
        axum::extract::Query::try_from_uri(&parts.uri).map(|q| q.0).unwrap_or_default();
    let watching = matches!(query.get("watch").map(String::as_str), Some("true" | "1"));
    let verb = match (&parts.method, target.name.is_some()) {
        (&Method::GET, true) => "get",
        (&Method::GET, false) if watching => "watch",
        (&Method::GET, false) => "list",
        (&Method::POST, false) => "create",
        (&Method::PUT, true) => "update",
        (&Method::PATCH, true) => "patch",
        (&Method::DELETE, true) => "delete",
        (&Method::DELETE, false) => "deletecollection",
        _ => return method_not_allowed(),
    };
    let attributes = rbac::Attributes {
        verb,
        group: target.kind.group,
        resource: target.kind.resource,
        subresource: target.subresource.as_deref().unwrap_or(""),
        namespace: target.namespace.as_deref().unwrap_or(""),
    };
    let name = target.name.as_deref().unwrap_or_default();
    if !rbac::allowed(&caller.groups, attributes) && !granted(&provider, &cluster_id, &caller, attributes, name) {
        return status(StatusCode::FORBIDDEN, "Forbidden", &rbac::forbidden_message(&caller.user, attributes));
    }
    let sub_verbs: &[&str] =
        if target.subresource.as_deref() == Some("log") { &["get"] } else { &["get", "update", "patch"] };
    let supported = match &target.subresource {
        Some(_) => sub_verbs.contains(&verb),
        None => target.kind.verbs().contains(&verb),
    };
    if !supported {
        return method_not_allowed();
    }
    let body = match axum::body::to_bytes(body, MAX_BODY_BYTES).await {
        Ok(body) => body,
        Err(_) => {
            let message = format!("the request body is larger than {MAX_BODY_BYTES} bytes");
            return status(StatusCode::PAYLOAD_TOO_LARGE, "RequestEntityTooLarge", &message);
        }
    };
    let request = Request { target, query, headers: parts.headers, body, caller };
    if target_source(&request) == Source::Review {
        let holds = |asked: rbac::Attributes<'_>| {
            rbac::allowed(&request.caller.groups, asked) || granted(&provider, &cluster_id, &request.caller, asked, "")
        };
        return review(&request, holds).unwrap_or_else(|Refusal(r)| *r);
    }
    if verb == "watch" {
        return watch(provider, cluster_id, request);
    }
    if request.target.subresource.as_deref() == Some("log") {
        return logs::serve(provider, cluster_id, request);
    }
    let answer = {
        let mut guard = provider.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let simulated = &mut *guard;
        if !simulated.state.kube.contains_key(&cluster_id) {
            projection::sync(&mut simulated.state, &cluster_id);
        }
        let before = simulated.state.kube.get(&cluster_id).map(|s| s.revision);
        let answer = if simulated.state.clusters.get(&cluster_id).is_none_or(|c| c.deleted) {
            Err(refuse(StatusCode::SERVICE_UNAVAILABLE, "ServiceUnavailable", "the cluster is being deleted"))
        } else {
            operate(&mut simulated.state, &cluster_id, verb, &request)
        };
        if simulated.state.kube.get(&cluster_id).map(|s| s.revision) != before {
            simulated.kube_changes.send_modify(|changes| *changes += 1);
        }
        answer
    };
    answer.unwrap_or_else(|Refusal(response)| *response)
}

/// Whether the cluster's RBAC bindings grant `caller` the request.
fn granted(
    provider: &Arc<Mutex<Simulated>>,
    cluster_id: &str,
    caller: &Caller,
    request: rbac::Attributes<'_>,
    name: &str,
) -> bool {
    let guard = provider.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    guard
        .state
        .kube
        .get(cluster_id)
        .is_some_and(|store| bindings::granted(store, &caller.user, &caller.groups, request, name))
}

fn method_not_allowed() -> Response {
    status(
        StatusCode::METHOD_NOT_ALLOWED,
        "MethodNotAllowed",
        "the server does not allow this method on the requested resource",
    )
}

/// One request, parsed.
struct Request {
    target: Target,
    query: HashMap<String, String>,
    headers: HeaderMap,
    body: Bytes,
    caller: Caller,
}

impl Request {
    fn name(&self) -> &str {
        self.target.name.as_deref().unwrap_or_default()
    }

    fn namespace(&self) -> &str {
        self.target.namespace.as_deref().unwrap_or_default()
    }

    fn dry_run(&self) -> bool {
        self.query.get("dryRun").is_some_and(|v| v == "All")
    }

    /// The body as JSON: sent as JSON, or in Kubernetes' protobuf encoding
    /// (kubectl's typed clients) for the objects [`protobuf`] reads.
    fn json(&self) -> Result<Value, Refusal> {
        if self.content_type().starts_with("application/vnd.kubernetes.protobuf") {
            return protobuf::decode(self.target.kind.resource, &self.body).ok_or_else(|| {
                let message = format!("the protobuf body of a {} could not be read; send JSON", self.target.kind.kind);
                refuse(StatusCode::UNSUPPORTED_MEDIA_TYPE, "UnsupportedMediaType", message)
            });
        }
        serde_json::from_slice(&self.body).map_err(|error| {
            refuse(StatusCode::BAD_REQUEST, "BadRequest", format!("the request body is not valid JSON: {error}"))
        })
    }

    /// The field manager of a write: as asked (`fieldManager`), else the
    /// client's name from its user agent (`kubectl` of `kubectl/v1.33.1 …`).
    fn manager(&self) -> Result<String, Refusal> {
        let manager = match self.query.get("fieldManager").filter(|m| !m.is_empty()) {
            Some(manager) => manager.clone(),
            None => {
                let agent = self.headers.get(header::USER_AGENT).and_then(|v| v.to_str().ok()).unwrap_or_default();
                let name = agent.split('/').next().unwrap_or_default().trim();
                if name.is_empty() { "unknown".to_string() } else { name.chars().take(MAX_MANAGER_CHARS).collect() }
            }
        };
        if manager == "ancient-changes" {
            return Err(invalid(self.target.kind, self.name(), "fieldManager", "ancient-changes is the server's own"));
        }
        if manager.chars().count() > MAX_MANAGER_CHARS || manager.chars().any(char::is_control) {
            let why = format!("must be at most {MAX_MANAGER_CHARS} printable characters");
            return Err(invalid(self.target.kind, self.name(), "fieldManager", &why));
        }
        Ok(manager)
    }

    fn content_type(&self) -> &str {
        self.headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("application/json")
    }
}

fn target_source(request: &Request) -> Source {
    request.target.kind.source
}

/// The store of a cluster the request has synced.
fn store_of<'a>(state: &'a mut crate::sim::SimState, cluster_id: &str) -> &'a mut KubeStore {
    state.kube.entry(cluster_id.to_string()).or_default()
}

/// Runs a read or write against the cluster's store.
fn operate(state: &mut crate::sim::SimState, cluster_id: &str, verb: &str, request: &Request) -> Answer {
    let kind = request.target.kind;
    match (verb, request.target.subresource.as_deref()) {
        ("get", Some("scale")) => {
            let deployment = existing(store_of(state, cluster_id), request)?;
            Ok(json_answer(StatusCode::OK, scale_of(&deployment)))
        }
        ("get", _) => {
            let store = store_of(state, cluster_id);
            let object = existing(store, request)?;
            if tables::wanted(&request.headers) {
                return Ok(json_answer(StatusCode::OK, tables::table(kind.resource, &[&object], store.revision)));
            }
            Ok(json_answer(StatusCode::OK, object))
        }
        ("list", _) => {
            let selector = Selector::parse(&request.query)?;
            let page = Page::parse(&request.query)?;
            let store = store_of(state, cluster_id);
            let prefix = store::prefix(kind, request.target.namespace.as_deref());
            let mut matching = store
                .list(&prefix)
                .filter(|(key, _)| page.after.as_ref().is_none_or(|after| *key > after))
                .filter(|(_, object)| selector.matches(object));
            let items: Vec<(&String, &Value)> = matching.by_ref().take(page.limit.unwrap_or(usize::MAX)).collect();
            let remaining = matching.count();
            let revision = page.revision.unwrap_or(store.revision);
            let mut metadata = json!({ "resourceVersion": revision.to_string() });
            if remaining > 0
                && let Some((last, _)) = items.last()
            {
                metadata["continue"] = json!(Page::token(revision, last));
                metadata["remainingItemCount"] = json!(remaining);
            }
            // Written straight from the store: no object is copied.
            let items: Vec<&Value> = items.into_iter().map(|(_, object)| object).collect();
            if tables::wanted(&request.headers) {
                let mut table = tables::table(kind.resource, &items, revision);
                table["metadata"] = metadata;
                return Ok(json_answer(StatusCode::OK, table));
            }
            let list = ObjectList { kind: kind.list_kind(), api_version: kind.group_version(), metadata, items };
            Ok((StatusCode::OK, axum::Json(list)).into_response())
        }
        ("create", _) => {
            let object = request.json()?;
            create(state, cluster_id, request, object, Writer::Update(&request.manager()?))
        }
        ("update", Some("scale")) | ("patch", Some("scale")) => {
            let deployment = existing(store_of(state, cluster_id), request)?;
            let mut scale = scale_of(&deployment);
            if verb == "update" {
                scale = request.json()?;
            } else {
                apply_patch(&mut scale, request)?;
            }
            let Some(replicas) =
                scale["spec"]["replicas"].as_i64().filter(|r| (0..=validate::MAX_REPLICAS).contains(r))
            else {
                let why = format!("must be a whole number from 0 to {}", validate::MAX_REPLICAS);
                return Err(invalid(kind, request.name(), "spec.replicas", &why));
            };
            let mut changed = deployment.clone();
            changed["spec"]["replicas"] = json!(replicas);
            let precondition = if scale["metadata"]["resourceVersion"] == deployment["metadata"]["resourceVersion"] {
                Value::Null
            } else {
                scale["metadata"]["resourceVersion"].clone()
            };
            let writer = Writer::Update(&request.manager()?);
            let stored = replace(state, cluster_id, request, deployment, changed, &precondition, writer)?;
            Ok(json_answer(StatusCode::OK, scale_of(&stored)))
        }
        ("update", Some(_)) | ("patch", Some(_)) => Err(Refusal(Box::new(method_not_allowed()))),
        ("update", None) => {
            let current = existing(store_of(state, cluster_id), request)?;
            let changed = request.json()?;
            let precondition = changed["metadata"]["resourceVersion"].clone();
            let writer = Writer::Update(&request.manager()?);
            let stored = replace(state, cluster_id, request, current, changed, &precondition, writer)?;
            Ok(json_answer(StatusCode::OK, stored))
        }
        ("patch", None) if request.content_type().starts_with(APPLY_PATCH) => {
            server_side_apply(state, cluster_id, request)
        }
        ("patch", None) => {
            let current = existing(store_of(state, cluster_id), request)?;
            let mut changed = current.clone();
            apply_patch(&mut changed, request)?;
            // A patch that names a resourceVersion is a precondition on it.
            let precondition = if changed["metadata"]["resourceVersion"] == current["metadata"]["resourceVersion"] {
                Value::Null
            } else {
                changed["metadata"]["resourceVersion"].clone()
            };
            let writer = Writer::Update(&request.manager()?);
            let stored = replace(state, cluster_id, request, current, changed, &precondition, writer)?;
            Ok(json_answer(StatusCode::OK, stored))
        }
        ("delete", _) => {
            let store = store_of(state, cluster_id);
            let current = existing(store, request)?;
            deletable(store, kind, &current)?;
            delete_options(request, &current)?;
            if !request.dry_run() {
                delete(state, cluster_id, request.target.kind, std::slice::from_ref(&current));
            }
            Ok(success(kind, &current))
        }
        ("deletecollection", _) => {
            let selector = Selector::parse(&request.query)?;
            delete_options(request, &Value::Null)?;
            let store = &*store_of(state, cluster_id);
            let doomed: Vec<Value> = store
                .list(&store::prefix(kind, request.target.namespace.as_deref()))
                .map(|(_, object)| object)
                .filter(|object| selector.matches(object) && deletable(store, kind, object).is_ok())
                .cloned()
                .collect();
            if !request.dry_run() {
                delete(state, cluster_id, request.target.kind, &doomed);
            }
            Ok(json_answer(
                StatusCode::OK,
                json!({ "kind": kind.list_kind(), "apiVersion": kind.group_version(), "metadata": {}, "items": doomed }),
            ))
        }
        _ => Err(Refusal(Box::new(method_not_allowed()))),
    }
}

/// A list answer, borrowing its items from the store.
#[derive(serde::Serialize)]
struct ObjectList<'a> {
    kind: String,
    #[serde(rename = "apiVersion")]
    api_version: String,
    metadata: Value,
    items: Vec<&'a Value>,
}

fn json_answer(code: StatusCode, body: Value) -> Response {
    (code, axum::Json(body)).into_response()
}

/// The object the request names, or 404.
fn existing(store: &KubeStore, request: &Request) -> Result<Value, Refusal> {
    let key = store::key(request.target.kind, request.namespace(), request.name());
    store.get(&key).cloned().ok_or_else(|| not_found(request.target.kind, request.name()))
}

fn success(kind: &Kind, object: &Value) -> Response {
    json_answer(
        StatusCode::OK,
        json!({
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
            "details": { "name": object["metadata"]["name"], "group": kind.group, "kind": kind.resource,
                         "uid": object["metadata"]["uid"] },
        }),
    )
}

/// A Deployment's `scale` subresource.
fn scale_of(deployment: &Value) -> Value {
    let metadata = &deployment["metadata"];
    let selector = deployment["spec"]["selector"]["matchLabels"]
        .as_object()
        .map(|labels| {
            labels.iter().map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default())).collect::<Vec<_>>().join(",")
        })
        .unwrap_or_default();
    json!({
        "kind": "Scale", "apiVersion": "autoscaling/v1",
        "metadata": { "name": metadata["name"], "namespace": metadata["namespace"], "uid": metadata["uid"],
                      "resourceVersion": metadata["resourceVersion"], "creationTimestamp": metadata["creationTimestamp"] },
        "spec": { "replicas": deployment["spec"]["replicas"] },
        "status": { "replicas": deployment["status"]["replicas"].as_i64().unwrap_or(0), "selector": selector },
    })
}

fn apply_patch(target: &mut Value, request: &Request) -> Result<(), Refusal> {
    let content_type = request.content_type();
    let patch = || request.json();
    let result = match content_type.split(';').next().unwrap_or_default().trim() {
        "application/merge-patch+json" => {
            patch::merge(target, &patch()?);
            Ok(())
        }
        "application/strategic-merge-patch+json" => patch::strategic(target, &patch()?),
        "application/json-patch+json" => patch::json_patch(target, &patch()?, validate::MAX_OBJECT_BYTES),
        other => {
            let message = format!("the patch type {other:?} is not supported here (merge, JSON or strategic merge)");
            return Err(refuse(StatusCode::UNSUPPORTED_MEDIA_TYPE, "UnsupportedMediaType", message));
        }
    };
    result.map_err(|patch::PatchError(why)| {
        refuse(StatusCode::UNPROCESSABLE_ENTITY, "Invalid", format!("the patch could not be applied: {why}"))
    })
}

/// A DNS-1123 subdomain (at most 253 characters), as object names are.
fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 253
        && name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'.')
        && name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name.ends_with(|c: char| c.is_ascii_alphanumeric())
}

/// A DNS-1123 label (at most 63 characters), as namespace names are.
pub fn valid_label(name: &str) -> bool {
    valid_name(name) && name.len() <= 63 && !name.contains('.')
}

fn random_suffix() -> String {
    let id = uuid::Uuid::now_v7().simple().to_string();
    id.chars().rev().filter(|c| c.is_ascii_alphanumeric()).take(5).collect()
}

/// Checks what every write of an object of `kind` must hold.
fn check_object(kind: &Kind, object: &Value, name: &str) -> Result<(), Refusal> {
    if let Some(api_version) = object["apiVersion"].as_str()
        && (api_version != kind.group_version() || object["kind"].as_str().is_some_and(|k| k != kind.kind))
    {
        let message = format!("the object is a {api_version} {}, not a {}", object["kind"], kind.kind);
        return Err(refuse(StatusCode::BAD_REQUEST, "BadRequest", message));
    }
    let fits = if kind.resource == "namespaces" { valid_label(name) } else { valid_name(name) };
    if !fits {
        let why = "a lowercase RFC 1123 name must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
        return Err(invalid(kind, name, "metadata.name", why));
    }
    if projection::managed(object) {
        let why = format!("the label {} is Moke's: objects made through Moke's API carry it", projection::MANAGED_BY);
        return Err(invalid(kind, name, "metadata.labels", &why));
    }
    if bindings::is_default(object) {
        let why = format!("the label {} marks the default roles", bindings::BOOTSTRAP_LABEL);
        return Err(invalid(kind, name, "metadata.labels", &why));
    }
    if !projection::moke_id(object).is_empty() {
        let why = format!("the annotations {} and {} are Moke's", projection::DEPLOYMENT_ID, projection::SERVICE_ID);
        return Err(invalid(kind, name, "metadata.annotations", &why));
    }
    if kind.resource == "deployments" {
        let spec = &object["spec"];
        let selector = spec["selector"]["matchLabels"].as_object();
        let labels = spec["template"]["metadata"]["labels"].as_object();
        let Some(selector) = selector.filter(|s| !s.is_empty()) else {
            return Err(invalid(kind, name, "spec.selector", "Required value"));
        };
        if !selector.iter().all(|(k, v)| labels.and_then(|l| l.get(k)) == Some(v)) {
            return Err(invalid(
                kind,
                name,
                "spec.template.metadata.labels",
                "`selector` does not match template `labels`",
            ));
        }
        let containers = spec["template"]["spec"]["containers"].as_array();
        if containers.is_none_or(|c| c.is_empty() || c.iter().any(|c| c["name"].as_str().is_none_or(str::is_empty))) {
            return Err(invalid(kind, name, "spec.template.spec.containers", "Required value"));
        }
        if containers.is_some_and(|c| c.iter().any(|c| c["image"].as_str().is_none_or(str::is_empty))) {
            return Err(invalid(kind, name, "spec.template.spec.containers[0].image", "Required value"));
        }
    }
    Ok(())
}

/// Who writes an object, for its field ownership: a create, update or
/// patch by a manager, or a server-side apply (which has recorded it).
#[derive(Clone, Copy)]
enum Writer<'a> {
    Update(&'a str),
    Apply,
}

/// The content type of a server-side apply.
const APPLY_PATCH: &str = "application/apply-patch+yaml";
/// The longest field manager name the API server takes.
const MAX_MANAGER_CHARS: usize = 128;

fn create(
    state: &mut crate::sim::SimState,
    cluster_id: &str,
    request: &Request,
    mut object: Value,
    writer: Writer<'_>,
) -> Answer {
    let kind = request.target.kind;
    let given = object["metadata"]["name"].as_str().unwrap_or_default().to_string();
    validate::check(kind, &object).map_err(|(field, why)| invalid(kind, &given, &field, &why))?;
    if !kind.namespaced
        && let Some(metadata) = object["metadata"].as_object_mut()
    {
        metadata.remove("namespace");
    }
    let mut name = given;
    if name.is_empty()
        && let Some(prefix) = object["metadata"]["generateName"].as_str()
    {
        name = format!("{prefix}{}", random_suffix());
    }
    if name.is_empty() {
        return Err(invalid(kind, "", "metadata.name", "Required value: name or generateName is required"));
    }
    let namespace = request.namespace().to_string();
    if kind.namespaced {
        let given = object["metadata"]["namespace"].as_str().unwrap_or_default();
        if !given.is_empty() && given != namespace {
            let message = "the namespace of the provided object does not match the namespace sent on the request";
            return Err(refuse(StatusCode::BAD_REQUEST, "BadRequest", message));
        }
        object["metadata"]["namespace"] = json!(namespace);
    }
    object["metadata"]["name"] = json!(name);
    object["apiVersion"] = json!(kind.group_version());
    object["kind"] = json!(kind.kind);
    check_object(kind, &object, &name)?;
    let store = store_of(state, cluster_id);
    if kind.namespaced {
        let namespaces = resources::find("", "v1", "namespaces").expect("namespaces");
        if store.get(&store::key(namespaces, "", &namespace)).is_none() {
            return Err(not_found(namespaces, &namespace));
        }
    }
    let made: usize = resources::KINDS
        .iter()
        // ReplicaSets count too: each is a Deployment's template, kept.
        .filter(|k| k.source == Source::Stored || k.resource == "replicasets")
        .map(|k| store.list(&store::prefix(k, None)).filter(|(_, o)| !projection::made_by_system(o)).count())
        .sum();
    if made >= MAX_OBJECTS {
        let message =
            format!("the cluster holds {MAX_OBJECTS} objects made through its API, its limit; delete some first");
        return Err(refuse(StatusCode::FORBIDDEN, "Forbidden", message));
    }
    let key = store::key(kind, &namespace, &name);
    if store.get(&key).is_some() {
        let message = format!("{}{} \"{name}\" already exists", kind.resource, group_suffix(kind));
        return Err(refuse(StatusCode::CONFLICT, "AlreadyExists", message));
    }
    if let Some(metadata) = object["metadata"].as_object_mut() {
        for server_set in ["resourceVersion", "uid", "creationTimestamp", "deletionTimestamp", "generation"] {
            metadata.remove(server_set);
        }
        if let Writer::Update(_) = writer {
            metadata.remove("managedFields");
        }
    }
    object["metadata"]["uid"] = json!(uuid::Uuid::now_v7().to_string());
    object["metadata"]["creationTimestamp"] = json!(projection::now());
    match kind.resource {
        "namespaces" => {
            object["metadata"]["labels"]["kubernetes.io/metadata.name"] = json!(name);
            object["spec"] = json!({ "finalizers": ["kubernetes"] });
            object["status"] = json!({ "phase": "Active" });
        }
        "services" => {
            services::prepare(store, &mut object, None).map_err(|(field, why)| invalid(kind, &name, &field, &why))?;
        }
        "roles" | "rolebindings" | "clusterroles" | "clusterrolebindings" => {
            no_escalation(store, request, &object, None)?
        }
        "secrets" => secrets::prepare(&mut object, None).map_err(|(field, why)| invalid(kind, &name, &field, &why))?,
        "deployments" => {
            default_deployment(&mut object);
            object["metadata"]["generation"] = json!(1);
            object["metadata"]["annotations"][projection::REVISION] = json!("1");
            object["status"] = json!({});
        }
        _ => {}
    }
    if let Writer::Update(manager) = writer {
        apply::record_update(None, &mut object, manager, &kind.group_version(), &projection::now())
            .map_err(|_| too_many_fields(kind, &name))?;
    }
    if !apply::ownership_fits(&object) {
        return Err(too_many_fields(kind, &name));
    }
    if request.dry_run() {
        return Ok(json_answer(StatusCode::CREATED, object));
    }
    let stored = store.put(&key, object);
    match kind.resource {
        "deployments" => run_deployment(state, cluster_id, &stored),
        "services" => {
            projection::sync(state, cluster_id);
        }
        _ => {}
    }
    Ok(json_answer(StatusCode::CREATED, stored))
}

/// The defaults the API server fills into a Deployment.
fn default_deployment(object: &mut Value) {
    let spec = &mut object["spec"];
    if spec["replicas"].is_null() {
        spec["replicas"] = json!(1);
    }
    if spec["strategy"]["type"].is_null() {
        spec["strategy"]["type"] = json!("RollingUpdate");
    }
    if spec["strategy"]["type"] == "RollingUpdate" {
        let rolling = &mut spec["strategy"]["rollingUpdate"];
        for field in ["maxSurge", "maxUnavailable"] {
            if rolling[field].is_null() {
                rolling[field] = json!("25%");
            }
        }
    }
    for (field, default) in [("revisionHistoryLimit", 10), ("progressDeadlineSeconds", 600)] {
        if spec[field].is_null() {
            spec[field] = json!(default);
        }
    }
}

/// Replaces `current` with `changed` (an update, a patch, a scale): the
/// precondition on `resourceVersion` holds, Moke's objects stay Moke's, and
/// what the server owns (identity, status, generation) is kept.
fn replace(
    state: &mut crate::sim::SimState,
    cluster_id: &str,
    request: &Request,
    current: Value,
    mut changed: Value,
    precondition: &Value,
    writer: Writer<'_>,
) -> Result<Value, Refusal> {
    let kind = request.target.kind;
    let name = request.name();
    let moke_object = projection::managed(&current).then(|| projection::moke_id(&current).to_string());
    // Only a Deployment of Moke's takes edits (as drift); its label and id stay.
    if let Some(id) = &moke_object
        && (kind.resource != "deployments"
            || !projection::managed(&changed)
            || projection::deployment_id(&changed) != id.as_str())
    {
        let message = format!(
            "Operation cannot be fulfilled on {}{} \"{name}\": it is managed by Moke ({id}); its {} and {} stay; change it through Moke's API",
            kind.resource,
            group_suffix(kind),
            projection::MANAGED_BY,
            if kind.resource == "deployments" { projection::DEPLOYMENT_ID } else { "spec" },
        );
        return Err(refuse(StatusCode::CONFLICT, "Conflict", message));
    }
    if bindings::is_default(&current) {
        let message = format!(
            "clusterroles.{} \"{name}\" is one of the default roles, which stay; copy it under another name to change it",
            bindings::GROUP
        );
        return Err(refuse(StatusCode::CONFLICT, "Conflict", message));
    }
    if projection::made_by_system(&current) && moke_object.is_none() && kind.resource != "namespaces" {
        let message =
            format!("{}{} \"{name}\" is the cluster's own and stays as it is", kind.resource, group_suffix(kind));
        return Err(refuse(StatusCode::CONFLICT, "Conflict", message));
    }
    if !precondition.is_null() && !precondition.is_string() {
        return Err(invalid(kind, name, "metadata.resourceVersion", "must be a string"));
    }
    if let Some(version) = precondition.as_str().filter(|v| !v.is_empty())
        && Some(version) != current["metadata"]["resourceVersion"].as_str()
    {
        let message = format!(
            "Operation cannot be fulfilled on {}{} \"{name}\": the object has been modified; please apply your changes to the latest version and try again",
            kind.resource,
            group_suffix(kind)
        );
        return Err(refuse(StatusCode::CONFLICT, "Conflict", message));
    }
    validate::check(kind, &changed).map_err(|(field, why)| invalid(kind, name, &field, &why))?;
    if !kind.namespaced
        && let Some(metadata) = changed["metadata"].as_object_mut()
    {
        metadata.remove("namespace");
    }
    let given_name = changed["metadata"]["name"].as_str().unwrap_or(name);
    if given_name != name {
        let message = format!("the name of the object ({given_name}) does not match the name on the URL ({name})");
        return Err(refuse(StatusCode::BAD_REQUEST, "BadRequest", message));
    }
    changed["metadata"]["name"] = json!(name);
    if kind.namespaced {
        changed["metadata"]["namespace"] = json!(request.namespace());
    }
    changed["apiVersion"] = json!(kind.group_version());
    changed["kind"] = json!(kind.kind);
    if moke_object.is_none() {
        check_object(kind, &changed, name)?;
    }
    for server_set in ["uid", "creationTimestamp"] {
        changed["metadata"][server_set] = current["metadata"][server_set].clone();
    }
    match kind.resource {
        "services" => {
            let store = store_of(state, cluster_id);
            services::prepare(store, &mut changed, Some(&current))
                .map_err(|(field, why)| invalid(kind, name, &field, &why))?;
        }
        "roles" | "rolebindings" | "clusterroles" | "clusterrolebindings" => {
            no_escalation(store_of(state, cluster_id), request, &changed, Some(&current))?;
        }
        "secrets" => {
            secrets::prepare(&mut changed, Some(&current)).map_err(|(field, why)| invalid(kind, name, &field, &why))?;
        }
        "namespaces" => {
            changed["status"] = current["status"].clone();
            changed["metadata"]["labels"]["kubernetes.io/metadata.name"] = json!(name);
        }
        "deployments" => {
            default_deployment(&mut changed);
            changed["status"] = current["status"].clone();
            let generation = current["metadata"]["generation"].as_i64().unwrap_or(1);
            let spec_changed = changed["spec"] != current["spec"];
            changed["metadata"]["generation"] = json!(generation + i64::from(spec_changed));
            let revision: i64 = current["metadata"]["annotations"][projection::REVISION]
                .as_str()
                .and_then(|r| r.parse().ok())
                .unwrap_or(1);
            let template_changed = changed["spec"]["template"] != current["spec"]["template"];
            changed["metadata"]["annotations"][projection::REVISION] =
                json!((revision + i64::from(template_changed)).to_string());
        }
        _ => {}
    }
    if let Writer::Update(manager) = writer {
        changed["metadata"]["managedFields"] = current["metadata"]["managedFields"].clone();
        apply::record_update(Some(&current), &mut changed, manager, &kind.group_version(), &projection::now())
            .map_err(|_| too_many_fields(kind, name))?;
    }
    if !apply::ownership_fits(&changed) {
        return Err(too_many_fields(kind, name));
    }
    if request.dry_run() {
        return Ok(changed);
    }
    let stored = store_of(state, cluster_id).put(&store::key(kind, request.namespace(), name), changed);
    match kind.resource {
        "deployments" if moke_object.is_some() => {
            note_drift(state, cluster_id, &current, &stored, &request.caller);
        }
        "deployments" => run_deployment(state, cluster_id, &stored),
        "services" => {
            projection::sync(state, cluster_id);
        }
        _ => {}
    }
    Ok(stored)
}

/// A server-side apply: the object is made from the configuration when it
/// does not exist (which takes the right to create it), else the
/// configuration is applied to it as its field manager, who must name
/// themselves; a conflict with another manager is a 409 naming each field,
/// unless forced.
fn server_side_apply(state: &mut crate::sim::SimState, cluster_id: &str, request: &Request) -> Answer {
    let kind = request.target.kind;
    let name = request.name();
    let Some(manager) = request.query.get("fieldManager").filter(|m| !m.is_empty()).cloned() else {
        let message =
            "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch";
        return Err(refuse(StatusCode::UNPROCESSABLE_ENTITY, "Invalid", message));
    };
    let manager = request.manager().map(|_| manager)?;
    let force = request.query.get("force").is_some_and(|f| f == "true");
    // kubectl sends JSON; YAML is read too, but without anchors and
    // aliases, whose expansion has no bound.
    let applied: Value = match serde_json::from_slice(&request.body) {
        Ok(applied) => applied,
        Err(_) if request.body.iter().any(|b| matches!(b, b'&' | b'*')) => {
            let message = "YAML anchors and aliases (& and *) are not accepted in an apply configuration; send JSON";
            return Err(refuse(StatusCode::BAD_REQUEST, "BadRequest", message));
        }
        Err(_) => serde_norway::from_slice(&request.body).map_err(|error| {
            refuse(StatusCode::BAD_REQUEST, "BadRequest", format!("the apply configuration does not parse: {error}"))
        })?,
    };

    validate::check(kind, &applied).map_err(|(field, why)| invalid(kind, name, &field, &why))?;
    if applied["apiVersion"].as_str().is_none() || applied["kind"].as_str().is_none() {
        return Err(invalid(
            kind,
            name,
            "apiVersion",
            "Required value: an apply configuration names its apiVersion and kind",
        ));
    }
    if let Some(given) = applied["metadata"]["name"].as_str()
        && given != name
    {
        let message = format!("the name of the object ({given}) does not match the name on the URL ({name})");
        return Err(refuse(StatusCode::BAD_REQUEST, "BadRequest", message));
    }
    let now = projection::now();
    let conflicted = |error: apply::ApplyError| match error {
        apply::ApplyError::Conflicts(conflicts) => {
            let (message, details) = apply::conflict_status(&conflicts);
            let mut body = status_object(StatusCode::CONFLICT, "Conflict", &message);
            body["details"] = details;
            Refusal(Box::new(json_answer(StatusCode::CONFLICT, body)))
        }
        apply::ApplyError::TooManyFields => too_many_fields(kind, name),
        apply::ApplyError::TooManyManagers => {
            let why = format!("at most {} field managers apply to one object", apply::MAX_APPLY_MANAGERS);
            invalid(kind, name, "fieldManager", &why)
        }
    };
    let live = store_of(state, cluster_id).get(&store::key(kind, request.namespace(), name)).cloned();
    match live {
        None => {
            let attributes = rbac::Attributes {
                verb: "create",
                group: kind.group,
                resource: kind.resource,
                subresource: "",
                namespace: request.namespace(),
            };
            let caller = &request.caller;
            let store = store_of(state, cluster_id);
            if !rbac::allowed(&caller.groups, attributes)
                && !bindings::granted(store, &caller.user, &caller.groups, attributes, name)
            {
                let message = rbac::forbidden_message(&request.caller.user, attributes);
                return Err(refuse(StatusCode::FORBIDDEN, "Forbidden", message));
            }
            let mut object = apply::apply(None, &applied, &manager, force, &now).map_err(conflicted)?;
            object["metadata"]["name"] = json!(name);
            create(state, cluster_id, request, object, Writer::Apply)
        }
        Some(current) => {
            let changed = apply::apply(Some(&current), &applied, &manager, force, &now).map_err(conflicted)?;
            let precondition = applied["metadata"]["resourceVersion"].clone();
            let stored = replace(state, cluster_id, request, current, changed, &precondition, Writer::Apply)?;
            Ok(json_answer(StatusCode::OK, stored))
        }
    }
}

/// Starts or changes the simulated workload behind a Deployment made with
/// kubectl, and writes its status back.
fn run_deployment(state: &mut crate::sim::SimState, cluster_id: &str, deployment: &Value) {
    let namespace = deployment["metadata"]["namespace"].as_str().unwrap_or_default();
    let name = deployment["metadata"]["name"].as_str().unwrap_or_default();
    let revision =
        deployment["metadata"]["annotations"][projection::REVISION].as_str().and_then(|r| r.parse().ok()).unwrap_or(1);
    let generation = deployment["metadata"]["generation"].as_i64().unwrap_or(1);
    let spec = projection::workload_spec(deployment, revision);
    let id = projection::workload_id(cluster_id, namespace, name);
    let workload = state
        .workloads
        .entry(id)
        .or_insert_with(|| crate::workloads::SimWorkload::new(cluster_id, generation, spec.clone()));
    workload.generation = generation;
    workload.deleted = false;
    workload.spec = spec;
    // The gateway lists it (in its cluster's report) from the next tick.
    workload.report_due = true;
    projection::sync(state, cluster_id);
}

fn too_many_fields(kind: &Kind, name: &str) -> Refusal {
    let why = format!(
        "the object has more than {} fields, or its field ownership more than {} bytes: the most tracked",
        apply::MAX_FIELDS,
        apply::MAX_OWNERSHIP_BYTES
    );
    invalid(kind, name, "metadata.managedFields", &why)
}

/// Refuses an RBAC object that is malformed, or that would grant what its
/// writer does not hold (a cluster admin holds everything).
fn no_escalation(
    store: &KubeStore,
    request: &Request,
    object: &Value,
    previous: Option<&Value>,
) -> Result<(), Refusal> {
    let kind = request.target.kind;
    let name = request.name();
    bindings::check(object).map_err(|(field, why)| invalid(kind, name, &field, &why))?;
    if let Some(previous) = previous
        && previous["roleRef"] != object["roleRef"]
    {
        return Err(invalid(kind, name, "roleRef", "Invalid value: cannot change roleRef"));
    }
    let caller = &request.caller;
    if caller.groups.iter().any(|g| g == rbac::CLUSTER_ADMINS) {
        return Ok(());
    }
    let namespace = request.namespace();
    let forbidden = |why: String| {
        let message = format!(
            "{}.{} \"{name}\" is forbidden: user \"{}\" is attempting to grant RBAC permissions not currently held: {why}",
            kind.resource, kind.group, caller.user
        );
        refuse(StatusCode::FORBIDDEN, "Forbidden", message)
    };
    let is_binding = !matches!(object["kind"].as_str(), Some("Role" | "ClusterRole"));
    if is_binding && bindings::rules_of(store, object, namespace).is_none() {
        return Err(forbidden(
            "the role it names does not exist (only cluster admins bind a role before it exists)".into(),
        ));
    }
    let rules = bindings::rules_granted(store, object, namespace);
    let here = bindings::bound_rules(store, &caller.user, &caller.groups, namespace);
    let cluster_wide = bindings::bound_rules(store, &caller.user, &caller.groups, "");
    let holds = |asked: rbac::Attributes<'_>| {
        let bound = if asked.namespace.is_empty() { &cluster_wide } else { &here };
        rbac::allowed(&caller.groups, asked) || bindings::any_allows(bound, asked, "")
    };
    match bindings::escalation(&rules, namespace, holds) {
        None => Ok(()),
        Some(missing) => Err(forbidden(missing)),
    }
}

/// Records a change made with kubectl to a Deployment Moke manages on its
/// workload, for the gateway to hear of; the next sync puts Moke's spec
/// back (and watchers see both).
fn note_drift(state: &mut crate::sim::SimState, cluster_id: &str, before: &Value, after: &Value, caller: &Caller) {
    let user = caller.user.as_str();
    let mut fields: Vec<String> = Vec::new();
    for part in ["spec", "metadata"] {
        let keys: std::collections::BTreeSet<&String> = [&before[part], &after[part]]
            .into_iter()
            .filter_map(Value::as_object)
            .flat_map(|fields| fields.keys())
            .collect();
        let ignored = ["resourceVersion", "generation", "managedFields", "uid", "creationTimestamp"];
        fields.extend(
            keys.into_iter()
                .filter(|key| {
                    !ignored.contains(&key.as_str()) && before[part][key.as_str()] != after[part][key.as_str()]
                })
                .map(|key| format!("{part}.{key}")),
        );
    }
    // Field names are the client's: only plain ones are reported, and few.
    fields.retain(|field| {
        field.len() <= 80 && field.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_' | b'/'))
    });
    if fields.is_empty() {
        return;
    }
    if fields.len() > 10 {
        fields.truncate(10);
        fields.push("…".into());
    }
    let id = projection::deployment_id(after).to_string();
    let tick = state.tick;
    let Some(workload) = state.workloads.get_mut(&id).filter(|w| w.cluster_id == cluster_id) else { return };
    // An edit Moke's spec can hold waits for the gateway, when the workload
    // adopts them and the editor's Moke role (not a binding made in the
    // cluster) may change deployments: Moke's API would let them too.
    let moke_role_may = rbac::allowed(
        &caller.groups,
        rbac::Attributes {
            verb: "update",
            group: "apps",
            resource: "deployments",
            subresource: "",
            namespace: &workload.spec.namespace,
        },
    );
    let waiting = workload.drift.as_ref().is_some_and(|d| d.adopting());
    // Only the editor's own change: an object that already held an edit
    // not proposed (one a binding allowed, not yet put back) is put back.
    let base = workload.drift.as_ref().and_then(|d| d.proposed.as_ref()).unwrap_or(&workload.spec);
    let clean = projection::edited_workload(&workload.spec, before) == *base;
    let proposed = (workload.spec.adopt_cluster_edits && moke_role_may && clean)
        .then(|| projection::edited_workload(&workload.spec, after))
        // An edit back to Moke's spec while another waits is proposed too,
        // so the earlier one, once adopted, is undone.
        .filter(|edited| *edited != workload.spec || waiting);
    let outcome = if proposed.is_some() { "Moke takes it as a new revision" } else { "Moke puts its spec back" };
    let mut superseded = Vec::new();
    if let Some(earlier) = workload.drift.take().filter(|d| d.adopting() && proposed.is_some()) {
        // A second edit before the gateway answered: one proposal naming both.
        for field in &earlier.fields {
            if !fields.contains(field) && fields.len() < 10 {
                fields.push(field.clone());
            }
        }
        superseded = earlier.superseded;
        superseded.extend(earlier.proposed);
        let excess = superseded.len().saturating_sub(crate::workloads::MAX_SUPERSEDED);
        superseded.drain(..excess);
    }
    workload.drift = Some(crate::workloads::Drift {
        by: user.to_string(),
        at: projection::now(),
        fields,
        proposed,
        since_tick: tick,
        superseded,
    });
    workload.report_due = true;
    let drift = workload.drift.as_ref().map(|d| d.fields.join(", ")).unwrap_or_default();
    let message = format!("{user} changed {drift} through the cluster's API; {outcome}");
    events::record(store_of(state, cluster_id), after, true, "Drifted", &message, "moke");
}

/// Makes `name` one of Moke's namespaces in `cluster_id`'s API (Moke's
/// `namespace_create`, whose id it keeps as `moke.dev/namespace-id`): made
/// and labelled as Moke's, or, when kubectl made it first, labelled so from
/// now on. Applying it twice changes nothing.
pub fn apply_moke_namespace(state: &mut crate::sim::SimState, cluster_id: &str, name: &str, id: &str) {
    projection::sync(state, cluster_id);
    let Some(store) = state.kube.get_mut(cluster_id) else { return };
    let key = store::key(namespaces(), "", name);
    let mut object = store.get(&key).cloned().unwrap_or_else(|| projection::namespace_object(name, true));
    object["metadata"]["labels"][projection::MANAGED_BY] = json!("moke");
    object["metadata"]["annotations"][projection::NAMESPACE_ID] = json!(id);
    projection::upsert(store, &key, object);
}

/// Deletes Moke's namespace `name` (the one `id` names) of `cluster_id`
/// with Moke's objects in it (Moke's `namespace_delete`). One holding what
/// kubectl made stays, no longer Moke's: its objects are the customer's,
/// and the refusal says how many.
pub fn delete_moke_namespace(
    state: &mut crate::sim::SimState,
    cluster_id: &str,
    name: &str,
    id: &str,
) -> Result<(), String> {
    let key = store::key(namespaces(), "", name);
    let Some(store) = state.kube.get_mut(cluster_id) else { return Ok(()) };
    let Some(mut object) = store.get(&key).cloned() else { return Ok(()) };
    // Only Moke's, and not one made again through Moke since (nor one kubectl made).
    let held = object["metadata"]["annotations"][projection::NAMESPACE_ID].as_str();
    if !projection::managed(&object) || held.is_some_and(|held| held != id) {
        return Ok(());
    }
    let customers = store
        .list("")
        .filter(|(_, o)| o["metadata"]["namespace"] == *name && !projection::made_by_system(o) && !derived(o))
        .count();
    if customers > 0 {
        if let Some(labels) = object["metadata"]["labels"].as_object_mut() {
            labels.remove(projection::MANAGED_BY);
        }
        if let Some(annotations) = object["metadata"]["annotations"].as_object_mut() {
            annotations.remove(projection::NAMESPACE_ID);
        }
        store.put(&key, object);
        return Err(format!(
            "namespace {name:?} holds {customers} object(s) made with kubectl; it stays in the cluster as yours"
        ));
    }
    delete(state, cluster_id, namespaces(), &[object]);
    Ok(())
}

/// Makes or changes Moke's Service `id` in `cluster_id`'s API (Moke's
/// `service_create` and `service_update`) as the gateway allocated it; see
/// [`put_moke_service`].
pub fn apply_moke_service(
    state: &mut crate::sim::SimState,
    cluster_id: &str,
    id: &str,
    service: &moke_proto::region::ServiceSpec,
) -> Result<(), (&'static str, String)> {
    projection::sync(state, cluster_id);
    let Some(store) = state.kube.get_mut(cluster_id) else { return Ok(()) };
    put_moke_service(store, id, service)
}

/// Writes Moke's Service `id` over whatever Moke Service held its name (the
/// caller has found this change the name's latest). Refused, leaving what
/// was there, while its namespace is not in the cluster or a Service made
/// with kubectl holds its name, address or a node port.
pub fn put_moke_service(
    store: &mut KubeStore,
    id: &str,
    service: &moke_proto::region::ServiceSpec,
) -> Result<(), (&'static str, String)> {
    if store.get(&store::key(namespaces(), "", &service.namespace)).is_none() {
        return Err(("namespace_missing", format!("namespace {} is not in the cluster", service.namespace)));
    }
    let key = store::key(services_kind(), &service.namespace, &service.name);
    let desired = services::moke_service(id, service);
    if let Some(conflict) = services::moke_service_conflict(store, &key, &desired) {
        return Err(conflict);
    }
    projection::upsert(store, &key, desired);
    services::endpoints(store);
    Ok(())
}

/// Deletes whichever of Moke's Services holds `namespace`/`name` in
/// `cluster_id`'s API (Moke's `service_delete`, found the name's latest
/// change: any Moke Service there is older); one made with kubectl stays.
pub fn delete_moke_service(state: &mut crate::sim::SimState, cluster_id: &str, namespace: &str, name: &str) {
    let Some(store) = state.kube.get_mut(cluster_id) else { return };
    let key = store::key(services_kind(), namespace, name);
    if store.get(&key).is_some_and(projection::managed) {
        store.remove(&key);
        services::endpoints(store);
    }
}

fn services_kind() -> &'static Kind {
    resources::find("", "v1", "services").expect("services are served")
}

/// Objects the cluster keeps for others (events, a Service's Endpoints, a
/// Deployment's ReplicaSets and pods): they go with what they are about.
fn derived(object: &Value) -> bool {
    matches!(object["kind"].as_str(), Some("Event" | "Endpoints" | "ReplicaSet" | "Pod"))
}

fn namespaces() -> &'static Kind {
    resources::find("", "v1", "namespaces").expect("namespaces are served")
}

/// Reads a delete's options (in the body, as kubectl sends them, or the
/// query): its preconditions must hold, and its propagation be one this
/// server carries out. Background and Foreground both remove what the
/// object owns with it (a Deployment's ReplicaSets and pods, a namespace's
/// objects); Orphan would leave a Deployment's pods running on their own,
/// which a simulated workload cannot, so it is refused for Deployments.
fn delete_options(request: &Request, current: &Value) -> Result<(), Refusal> {
    let kind = request.target.kind;
    let sent_json = !request.body.is_empty() && !request.content_type().contains("protobuf");
    let options: Value = if sent_json { request.json()? } else { json!({}) };
    let policy = options["propagationPolicy"]
        .as_str()
        .or(request.query.get("propagationPolicy").map(String::as_str))
        .unwrap_or("Background");
    let orphan = options["orphanDependents"] == true || policy == "Orphan";
    if !matches!(policy, "Background" | "Foreground" | "Orphan") {
        let why =
            format!("Unsupported value: {policy:?}: supported values: \"Background\", \"Foreground\", \"Orphan\"");
        return Err(invalid(kind, request.name(), "propagationPolicy", &why));
    }
    if orphan && kind.resource == "deployments" {
        let why = "Orphan is not supported for Deployments here: their ReplicaSets and pods go with them";
        return Err(invalid(kind, request.name(), "propagationPolicy", why));
    }
    let preconditions = &options["preconditions"];
    for field in ["uid", "resourceVersion"] {
        if let Some(wanted) = preconditions[field].as_str()
            && current["metadata"][field].as_str() != Some(wanted)
        {
            let message = format!(
                "Precondition failed: {field} in precondition: {wanted}, {field} in object meta: {}",
                current["metadata"][field].as_str().unwrap_or_default()
            );
            return Err(refuse(StatusCode::CONFLICT, "Conflict", message));
        }
    }
    Ok(())
}

/// Refuses to delete what stays: Moke's objects, the system namespaces and
/// a namespace holding Moke's deployments.
fn deletable(store: &KubeStore, kind: &Kind, object: &Value) -> Result<(), Refusal> {
    let name = object["metadata"]["name"].as_str().unwrap_or_default();
    if bindings::is_default(object) {
        let message = format!("clusterroles.{} \"{name}\" is one of the default roles, which stay", bindings::GROUP);
        return Err(refuse(StatusCode::CONFLICT, "Conflict", message));
    }
    if projection::managed(object) {
        let message = format!(
            "Operation cannot be fulfilled on {}{} \"{name}\": it is managed by Moke; delete it through Moke's API",
            kind.resource,
            group_suffix(kind)
        );
        return Err(refuse(StatusCode::CONFLICT, "Conflict", message));
    }
    if kind.resource == "services" && projection::made_by_system(object) {
        let message = format!("services \"{name}\" is the cluster's own and stays");
        return Err(refuse(StatusCode::CONFLICT, "Conflict", message));
    }
    if kind.resource == "namespaces" {
        if projection::SYSTEM_NAMESPACES.contains(&name) {
            let message = format!("namespaces \"{name}\" is forbidden: this namespace may not be deleted");
            return Err(refuse(StatusCode::FORBIDDEN, "Forbidden", message));
        }
        let holds_moke = store.list("").any(|(_, o)| o["metadata"]["namespace"] == *name && projection::managed(o));
        if holds_moke {
            let message = format!(
                "Operation cannot be fulfilled on namespaces \"{name}\": it holds deployments or services Moke manages; delete them through Moke's API first"
            );
            return Err(refuse(StatusCode::CONFLICT, "Conflict", message));
        }
    }
    Ok(())
}

/// Deletes `objects` of `kind`, each found [`deletable`] (a namespace with
/// everything in it; a Deployment's pods go with its simulated workload),
/// then brings the projections up to date once.
fn delete(state: &mut crate::sim::SimState, cluster_id: &str, kind: &Kind, objects: &[Value]) {
    let store = store_of(state, cluster_id);
    let mut doomed = Vec::new();
    let namespaces: Vec<&str> = if kind.resource == "namespaces" {
        objects.iter().filter_map(|o| o["metadata"]["name"].as_str()).collect()
    } else {
        Vec::new()
    };
    for object in objects {
        let name = object["metadata"]["name"].as_str().unwrap_or_default();
        let namespace = object["metadata"]["namespace"].as_str().unwrap_or_default();
        doomed.push(store::key(kind, namespace, name));
    }
    if !namespaces.is_empty() {
        let inside = store.list("").filter(|(_, o)| {
            o["metadata"]["namespace"].as_str().is_some_and(|namespace| namespaces.contains(&namespace))
        });
        doomed.extend(inside.map(|(key, _)| key.clone()));
    }
    let mut stopped = Vec::new();
    for key in &doomed {
        if let Some(gone) = store.remove(key)
            && gone["kind"] == "Deployment"
        {
            let namespace = gone["metadata"]["namespace"].as_str().unwrap_or_default();
            let name = gone["metadata"]["name"].as_str().unwrap_or_default();
            stopped.push(projection::workload_id(cluster_id, namespace, name));
        }
    }
    for id in stopped {
        if let Some(workload) = state.workloads.get_mut(&id) {
            workload.deleted = true;
            workload.report_due = true;
        }
    }
    projection::sync(state, cluster_id);
}

/// A list's page (`limit`, `continue`), as kubectl asks for 500 at a time:
/// the continue token carries the revision of the first page and the key
/// the page ended at, and the next page starts after it.
struct Page {
    limit: Option<usize>,
    after: Option<String>,
    revision: Option<u64>,
}

impl Page {
    fn parse(query: &HashMap<String, String>) -> Result<Page, Refusal> {
        let limit = match query.get("limit").map(|l| l.parse::<usize>()) {
            None | Some(Ok(0)) => None,
            Some(Ok(limit)) => Some(limit),
            Some(Err(_)) => {
                return Err(refuse(StatusCode::BAD_REQUEST, "BadRequest", "limit must be a whole number"));
            }
        };
        let Some(token) = query.get("continue").filter(|t| !t.is_empty()) else {
            return Ok(Page { limit, after: None, revision: None });
        };
        let invalid_token =
            || refuse(StatusCode::BAD_REQUEST, "BadRequest", "continue key is not valid: list again from the start");
        let decoded = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(token).map_err(|_| invalid_token())?;
        let text = String::from_utf8(decoded).map_err(|_| invalid_token())?;
        let (revision, after) = text.split_once(':').ok_or_else(invalid_token)?;
        let revision = revision.parse().map_err(|_| invalid_token())?;
        Ok(Page { limit, after: Some(after.to_string()), revision: Some(revision) })
    }

    fn token(revision: u64, last_key: &str) -> String {
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(format!("{revision}:{last_key}"))
    }
}

/// `SelfSubjectReview` (`kubectl auth whoami`) and `SelfSubjectAccessReview` (`kubectl auth can-i`).
fn review(request: &Request, holds: impl Fn(rbac::Attributes<'_>) -> bool) -> Answer {
    let caller = &request.caller;
    match request.target.kind.resource {
        "selfsubjectreviews" => {
            let mut groups = caller.groups.clone();
            groups.push("system:authenticated".into());
            Ok(json_answer(
                StatusCode::CREATED,
                json!({
                    "kind": "SelfSubjectReview", "apiVersion": "authentication.k8s.io/v1",
                    "metadata": { "creationTimestamp": null },
                    "status": { "userInfo": { "username": caller.user, "groups": groups } },
                }),
            ))
        }
        _ => {
            let review = request.json()?;
            if !review.is_object() {
                return Err(refuse(StatusCode::BAD_REQUEST, "BadRequest", "the request body must be an object"));
            }
            let asked = &review["spec"]["resourceAttributes"];
            let text = |field: &str| asked[field].as_str().unwrap_or_default().to_string();
            let (verb, group, resource) = (text("verb"), text("group"), text("resource"));
            let (subresource, mut namespace) = (text("subresource"), text("namespace"));
            // A cluster-scoped resource is asked of at the cluster scope, whatever namespace is named.
            if resources::KINDS.iter().any(|k| k.group == group && k.resource == resource && !k.namespaced) {
                namespace.clear();
            }
            let attributes = rbac::Attributes {
                verb: &verb,
                group: &group,
                resource: &resource,
                subresource: &subresource,
                namespace: &namespace,
            };
            let allowed = !resource.is_empty() && holds(attributes);
            let mut answered = review.clone();
            answered["apiVersion"] = json!("authorization.k8s.io/v1");
            answered["kind"] = json!("SelfSubjectAccessReview");
            answered["status"] = json!({
                "allowed": allowed,
                "reason": if allowed { "allowed by the caller's Moke role or an RBAC binding" } else { "" },
            });
            Ok(json_answer(StatusCode::CREATED, answered))
        }
    }
}

/// Label and field selectors of a list or watch.
struct Selector {
    labels: Vec<Requirement>,
    fields: Vec<(String, bool, String)>,
}

enum Requirement {
    Equals(String, String),
    NotEquals(String, String),
    Exists(String),
    Absent(String),
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
}

impl Selector {
    fn parse(query: &HashMap<String, String>) -> Result<Selector, Refusal> {
        let bad = |what: &str, text: &str| {
            refuse(StatusCode::BAD_REQUEST, "BadRequest", format!("unable to parse the {what} selector {text:?}"))
        };
        let mut labels = Vec::new();
        if let Some(text) = query.get("labelSelector").filter(|t| !t.trim().is_empty()) {
            for term in split_terms(text) {
                let term = term.trim();
                let set = |rest: &str| -> Option<Vec<String>> {
                    let inner = rest.trim().strip_prefix('(')?.strip_suffix(')')?;
                    Some(inner.split(',').map(|v| v.trim().to_string()).filter(|v| !v.is_empty()).collect())
                };
                let requirement = if let Some((key, rest)) = term.split_once(" notin ") {
                    Requirement::NotIn(key.trim().into(), set(rest).ok_or_else(|| bad("label", text))?)
                } else if let Some((key, rest)) = term.split_once(" in ") {
                    Requirement::In(key.trim().into(), set(rest).ok_or_else(|| bad("label", text))?)
                } else if let Some((key, value)) = term.split_once("!=") {
                    Requirement::NotEquals(key.trim().into(), value.trim().into())
                } else if let Some((key, value)) = term.split_once("==").or_else(|| term.split_once('=')) {
                    Requirement::Equals(key.trim().into(), value.trim().into())
                } else if let Some(key) = term.strip_prefix('!') {
                    Requirement::Absent(key.trim().into())
                } else if !term.is_empty() && !term.contains(' ') {
                    Requirement::Exists(term.into())
                } else {
                    return Err(bad("label", text));
                };
                labels.push(requirement);
            }
        }
        let mut fields = Vec::new();
        if let Some(text) = query.get("fieldSelector").filter(|t| !t.trim().is_empty()) {
            for term in text.split(',') {
                let (path, equal, value) = if let Some((p, v)) = term.split_once("!=") {
                    (p, false, v)
                } else if let Some((p, v)) = term.split_once("==").or_else(|| term.split_once('=')) {
                    (p, true, v)
                } else {
                    return Err(bad("field", text));
                };
                fields.push((path.trim().to_string(), equal, value.trim().to_string()));
            }
        }
        Ok(Selector { labels, fields })
    }

    fn matches(&self, object: &Value) -> bool {
        let labels = &object["metadata"]["labels"];
        let label = |key: &str| labels[key].as_str().map(str::to_string);
        let labels_match = self.labels.iter().all(|requirement| match requirement {
            Requirement::Equals(k, v) => label(k).as_deref() == Some(v),
            Requirement::NotEquals(k, v) => label(k).as_deref() != Some(v),
            Requirement::Exists(k) => label(k).is_some(),
            Requirement::Absent(k) => label(k).is_none(),
            Requirement::In(k, values) => label(k).is_some_and(|v| values.contains(&v)),
            Requirement::NotIn(k, values) => label(k).is_none_or(|v| !values.contains(&v)),
        });
        labels_match
            && self.fields.iter().all(|(path, equal, value)| {
                let found = path.split('.').fold(object, |at, part| &at[part]);
                let text = match found {
                    Value::String(s) => s.clone(),
                    Value::Null => String::new(),
                    other => other.to_string(),
                };
                (text == *value) == *equal
            })
    }
}

/// A selector's terms: split at commas outside parentheses.
fn split_terms(text: &str) -> Vec<&str> {
    let (mut terms, mut depth, mut start) = (Vec::new(), 0, 0);
    for (at, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                terms.push(&text[start..at]);
                start = at + 1;
            }
            _ => {}
        }
    }
    terms.push(&text[start..]);
    terms
}

/// Open watches by cluster, and by user within it.
static WATCHES: std::sync::LazyLock<Mutex<HashMap<String, HashMap<String, usize>>>> =
    std::sync::LazyLock::new(Default::default);

/// A watch's place in [`WATCHES`], given back when the watch ends.
struct WatchSlot {
    cluster_id: String,
    user: String,
}

impl WatchSlot {
    fn take(cluster_id: &str, user: &str) -> Result<WatchSlot, Refusal> {
        let mut watches = WATCHES.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let cluster = watches.entry(cluster_id.to_string()).or_default();
        let (all, mine) = (cluster.values().sum::<usize>(), cluster.get(user).copied().unwrap_or(0));
        if all >= MAX_WATCHES_PER_CLUSTER || mine >= MAX_WATCHES_PER_USER {
            let message = format!(
                "too many watches: at most {MAX_WATCHES_PER_USER} of one user and {MAX_WATCHES_PER_CLUSTER} on a cluster"
            );
            return Err(refuse(StatusCode::TOO_MANY_REQUESTS, "TooManyRequests", message));
        }
        *cluster.entry(user.to_string()).or_default() += 1;
        Ok(WatchSlot { cluster_id: cluster_id.to_string(), user: user.to_string() })
    }
}

impl Drop for WatchSlot {
    fn drop(&mut self) {
        let mut watches = WATCHES.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(cluster) = watches.get_mut(&self.cluster_id) {
            if let Some(count) = cluster.get_mut(&self.user) {
                *count = count.saturating_sub(1);
                if *count == 0 {
                    cluster.remove(&self.user);
                }
            }
            if cluster.is_empty() {
                watches.remove(&self.cluster_id);
            }
        }
    }
}

/// A watch: the objects as they are (when no `resourceVersion` or `0` is
/// given), then every change after it, one JSON event per line, until the
/// client's `timeoutSeconds` (at most [`MAX_WATCH`]). A `resourceVersion`
/// whose changes are no longer kept ends at once with a 410 `Expired`
/// event, on which clients list again. Watches are capped per cluster and
/// per user (429); one whose client stops reading for [`STALLED_WATCH`], or
/// whose certificate stops working, ends.
fn watch(provider: Arc<Mutex<Simulated>>, cluster_id: String, request: Request) -> Response {
    let selector = match Selector::parse(&request.query) {
        Ok(selector) => selector,
        Err(Refusal(response)) => return *response,
    };
    let slot = match WatchSlot::take(&cluster_id, &request.caller.user) {
        Ok(slot) => slot,
        Err(Refusal(response)) => return *response,
    };
    let kind = request.target.kind;
    let table = tables::wanted(&request.headers);
    let bookmarks = request.query.get("allowWatchBookmarks").is_some_and(|v| v == "true");
    let timeout = request
        .query
        .get("timeoutSeconds")
        .and_then(|t| t.parse().ok())
        .map_or(MAX_WATCH, Duration::from_secs)
        .min(MAX_WATCH);
    let asked: Option<u64> = request.query.get("resourceVersion").and_then(|v| v.parse().ok()).filter(|v| *v > 0);
    let prefix = match &request.target.name {
        // A watch of one object (`kubectl get x -w`) is one of its kind with a name selector.
        Some(_) => store::key(kind, request.namespace(), request.name()),
        None => store::prefix(kind, request.target.namespace.as_deref()),
    };
    // A key is a prefix of longer names' keys too (`web` of `web-2`).
    let named = request.target.name.is_some();
    let exact_key = prefix.clone();
    let watched = move |key: &str| !named || key == exact_key;
    let still_allowed = request.caller.still_allowed.clone();
    let started = {
        let mut guard = provider.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let simulated = &mut *guard;
        if simulated.state.clusters.get(&cluster_id).is_none_or(|c| c.deleted) {
            None
        } else {
            if !simulated.state.kube.contains_key(&cluster_id) {
                projection::sync(&mut simulated.state, &cluster_id);
            }
            let changes = simulated.kube_changes.subscribe();
            simulated.state.kube.get(&cluster_id).map(|store| match asked {
                Some(revision) => (changes, revision, Vec::new()),
                None => {
                    let initial: Vec<Value> = store
                        .list(&prefix)
                        .filter(|(key, o)| watched(key) && selector.matches(o))
                        .map(|(_, o)| o)
                        .map(|o| event("ADDED", o.clone(), kind, table))
                        .collect();
                    (changes, store.revision, initial)
                }
            })
        }
    };
    let Some((mut changes, start, initial)) = started else {
        return status(StatusCode::SERVICE_UNAVAILABLE, "ServiceUnavailable", "the cluster is being deleted");
    };
    let (sender, receiver) = futures::channel::mpsc::channel::<Result<Bytes, Infallible>>(64);
    tokio::spawn(async move {
        let _slot = slot;
        let mut sender = sender;
        let deadline = tokio::time::Instant::now() + timeout;
        // Sends one event, unless the client stopped reading or the watch is over.
        let mut send = async move |value: &Value| -> bool {
            use futures::SinkExt;
            let mut bytes = serde_json::to_vec(value).unwrap_or_default();
            bytes.push(b'\n');
            let until = deadline.min(tokio::time::Instant::now() + STALLED_WATCH);
            matches!(tokio::time::timeout_at(until, sender.send(Ok(Bytes::from(bytes)))).await, Ok(Ok(())))
        };
        for value in &initial {
            if !send(value).await {
                return;
            }
        }
        let mut last = start;
        let mut bookmark = tokio::time::interval_at(tokio::time::Instant::now() + BOOKMARK_EVERY, BOOKMARK_EVERY);
        loop {
            if !still_allowed() {
                return;
            }
            let read = {
                let mut guard = provider.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                match guard.state.kube.get_mut(&cluster_id) {
                    Some(store) => store.changes_since(last, &prefix).map(|seen| Some((seen, store.revision))),
                    // The cluster was deleted: the watch ends.
                    None => Ok(None),
                }
            };
            match read {
                Err(store::Gone) => {
                    let expired =
                        status_object(StatusCode::GONE, "Expired", &format!("too old resource version: {last}"));
                    send(&json!({ "type": "ERROR", "object": expired })).await;
                    return;
                }
                Ok(None) => return,
                Ok(Some((seen, revision))) => {
                    let wanted =
                        |c: &store::Change| watched(&c.key) && (c.kind == "DELETED" || selector.matches(&c.object));
                    for change in seen.into_iter().filter(wanted) {
                        if !send(&event(change.kind, change.object, kind, table)).await {
                            return;
                        }
                    }
                    last = revision.max(last);
                }
            }
            tokio::select! {
                changed = changes.changed() => if changed.is_err() { return },
                _ = tokio::time::sleep_until(deadline) => return,
                _ = bookmark.tick(), if bookmarks => {
                    let marker = json!({ "type": "BOOKMARK", "object": {
                        "kind": kind.kind, "apiVersion": kind.group_version(),
                        "metadata": { "resourceVersion": last.to_string() } } });
                    if !send(&marker).await {
                        return;
                    }
                }
            }
        }
    });
    Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from_stream(receiver))
        .unwrap_or_else(|_| status(StatusCode::INTERNAL_SERVER_ERROR, "InternalError", "could not start the watch"))
}

/// A watch event; as a one-row Table when the client prints tables.
fn event(kind_of_change: &str, object: Value, kind: &Kind, table: bool) -> Value {
    let object = if table {
        let revision = object["metadata"]["resourceVersion"].as_str().and_then(|r| r.parse().ok()).unwrap_or(0);
        tables::table(kind.resource, &[&object], revision)
    } else {
        object
    };
    json!({ "type": kind_of_change, "object": object })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(path: &str) -> (String, Option<String>, Option<String>, Option<String>) {
        match route(path) {
            Route::Resource(t) => (t.kind.resource.to_string(), t.namespace, t.name, t.subresource),
            Route::Document(_) => ("document".into(), None, None, None),
            Route::NotFound => ("none".into(), None, None, None),
        }
    }

    #[test]
    fn paths_name_resources_as_the_api_server_reads_them() {
        let some = |s: &str| Some(s.to_string());
        assert_eq!(target("/api/v1/namespaces"), ("namespaces".into(), None, None, None));
        assert_eq!(target("/api/v1/namespaces/shop"), ("namespaces".into(), None, some("shop"), None));
        assert_eq!(target("/api/v1/namespaces/shop/configmaps"), ("configmaps".into(), some("shop"), None, None));
        assert_eq!(
            target("/apis/apps/v1/namespaces/shop/deployments/web/scale"),
            ("deployments".into(), some("shop"), some("web"), some("scale"))
        );
        assert_eq!(target("/apis/apps/v1/deployments"), ("deployments".into(), None, None, None));
        assert_eq!(target("/apis/apps/v1").0, "document");
        assert_eq!(target("/api/v1/configmaps/x").0, "none", "a namespaced object needs its namespace");
        assert_eq!(target("/apis/apps/v1/namespaces/shop/deployments/web/exec").0, "none");
    }

    #[test]
    fn selectors_select_as_kubectl_writes_them() {
        let object = json!({ "metadata": { "name": "web", "labels": { "app": "web", "tier": "front" } } });
        let select = |labels: &str, fields: &str| {
            let query = HashMap::from([
                ("labelSelector".to_string(), labels.to_string()),
                ("fieldSelector".to_string(), fields.to_string()),
            ]);
            Selector::parse(&query).ok().expect("parses").matches(&object)
        };
        assert!(select("app=web,tier in (front, back)", "metadata.name=web"));
        assert!(select("!gone,app", ""));
        assert!(!select("app!=web", ""));
        assert!(!select("", "metadata.name=other"));
        assert!(select("tier notin (back)", "metadata.name!=other"));
    }

    /// A one-zone region running cluster `cl_1` ("prod", one API server).
    fn region_with_a_cluster() -> (crate::sim::RegionLayout, crate::sim::SimState) {
        use moke_proto::region::{self as pb, CommandKind};
        let layout = crate::sim::RegionLayout::for_zones(vec!["z-a".into()]);
        let mut state = crate::sim::SimState::default();
        let create = pb::Command {
            kind: CommandKind::ClusterCreate as i32,
            operation_id: "op".into(),
            cluster_id: "cl_1".into(),
            name: "prod".into(),
            generation: 1,
            cluster: Some(pb::ClusterSpec { control_plane_replicas: 1, ..Default::default() }),
            ..Default::default()
        };
        state.apply(&layout, &create);
        (layout, state)
    }

    #[test]
    fn moke_namespaces_reach_the_api_and_kubectl_namespaces_are_reported() {
        use moke_proto::region::{self as pb, CommandKind};
        let (layout, mut state) = region_with_a_cluster();
        let command = |kind: CommandKind, operation: &str, namespace: &str| pb::Command {
            kind: kind as i32,
            operation_id: operation.into(),
            cluster_id: "cl_1".into(),
            name: "prod".into(),
            namespace: namespace.into(),
            namespace_id: format!("id-{namespace}"),
            ..Default::default()
        };
        let outcome = |reports: &crate::sim::Reports, operation: &str| {
            reports.iter().find_map(|r| match r {
                pb::status::Message::Progress(p) if p.operation_id == operation && p.progress == 100 => {
                    Some((p.status.clone(), p.error_code.clone()))
                }
                _ => None,
            })
        };
        let namespaces = resources::find("", "v1", "namespaces").expect("namespaces");
        let key = |name: &str| store::key(namespaces, "", name);

        // Made through Moke: labelled as Moke's; twice is one change.
        let made = state.apply(&layout, &command(CommandKind::NamespaceApply, "op-team", "team"));
        assert_eq!(outcome(&made, "op-team"), Some(("succeeded".into(), String::new())));
        let team = state.kube["cl_1"].get(&key("team")).cloned().expect("team is in the API");
        assert!(projection::managed(&team), "{team}");
        state.apply(&layout, &command(CommandKind::NamespaceApply, "op-team", "team"));
        assert_eq!(state.kube["cl_1"].get(&key("team")), Some(&team), "applied twice, changed once");

        // Made with kubectl: reported at the next tick, and only then.
        let store = state.kube.get_mut("cl_1").expect("the cluster's API");
        projection::upsert(store, &key("tools"), projection::namespace_object("tools", false));
        let reported = |reports: &crate::sim::Reports| {
            reports.iter().find_map(|r| match r {
                pb::status::Message::Observation(o) if o.resource_type == "cluster" => Some(o.namespaces.clone()),
                _ => None,
            })
        };
        let ticked = state.tick(&layout, chrono::Utc::now());
        assert_eq!(reported(&ticked), Some(vec!["tools".to_string()]));
        assert_eq!(reported(&state.tick(&layout, chrono::Utc::now())), None, "nothing new, nothing reported");
        // Moke's namespace_create of kubectl's: Moke's from then on, no longer reported as kubectl's.
        let taken = state.apply(&layout, &command(CommandKind::NamespaceApply, "op-tools", "tools"));
        assert_eq!(reported(&taken), Some(vec![]));
        assert!(projection::managed(state.kube["cl_1"].get(&key("tools")).expect("tools stays")));

        // A delete of an earlier namespace of the name leaves the one made since.
        let earlier =
            pb::Command { namespace_id: "id-before".into(), ..command(CommandKind::NamespaceDelete, "op-old", "team") };
        state.apply(&layout, &earlier);
        assert!(state.kube["cl_1"].get(&key("team")).is_some(), "a delete names the namespace it is about");
        // What kubectl made in it is the customer's: the namespace stays, theirs now.
        let configmaps = resources::find("", "v1", "configmaps").expect("configmaps");
        let settings =
            json!({ "apiVersion": "v1", "kind": "ConfigMap", "metadata": { "name": "s", "namespace": "team" } });
        let settings_key = store::key(configmaps, "team", "s");
        state.kube.get_mut("cl_1").expect("the API").put(&settings_key, settings);
        let kept = state.apply(&layout, &command(CommandKind::NamespaceDelete, "op-kept", "team"));
        assert_eq!(outcome(&kept, "op-kept"), Some(("failed".into(), "not_empty".into())));
        let team = state.kube["cl_1"].get(&key("team")).expect("team stays");
        assert!(!projection::managed(team) && state.kube["cl_1"].get(&settings_key).is_some(), "{team}");
        assert!(reported(&state.tick(&layout, chrono::Utc::now())).is_some_and(|n| n.contains(&"team".into())));
        // Empty of the customer's objects, it goes.
        state.kube.get_mut("cl_1").expect("the API").remove(&settings_key);
        // A make delivered again after its delete makes nothing; one made again (a new id) is Moke's.
        state.apply(&layout, &command(CommandKind::NamespaceApply, "op-team", "team"));
        assert!(!projection::managed(state.kube["cl_1"].get(&key("team")).expect("team")));
        let again = |kind: CommandKind, operation: &str| pb::Command {
            namespace_id: "id-team-2".into(),
            ..command(kind, operation, "team")
        };
        state.apply(&layout, &again(CommandKind::NamespaceApply, "op-team-again"));
        assert!(projection::managed(state.kube["cl_1"].get(&key("team")).expect("team")));
        let deleted = state.apply(&layout, &again(CommandKind::NamespaceDelete, "op-gone"));
        assert_eq!(outcome(&deleted, "op-gone"), Some(("succeeded".into(), String::new())));
        assert!(state.kube["cl_1"].get(&key("team")).is_none());
        // The system's namespaces and bad names are refused.
        let system = state.apply(&layout, &command(CommandKind::NamespaceDelete, "op-system", "kube-system"));
        assert_eq!(outcome(&system, "op-system"), Some(("failed".into(), "invalid_namespace".into())));
        assert!(state.kube["cl_1"].get(&key("kube-system")).is_some());
        let refused = state.apply(&layout, &command(CommandKind::NamespaceApply, "op-bad", "Not_A_Name"));
        assert_eq!(outcome(&refused, "op-bad"), Some(("failed".into(), "invalid_namespace".into())));
    }

    #[test]
    fn moke_services_reach_the_api_as_the_gateway_allocated_them() {
        use crate::sim::SimState;
        use moke_proto::region::{self as pb, CommandKind};
        let (layout, mut state) = region_with_a_cluster();
        projection::sync(&mut state, "cl_1");
        let shop = store::key(namespaces(), "", "shop");
        state.kube.get_mut("cl_1").expect("the API").put(&shop, projection::namespace_object("shop", true));
        let web = |name: &str, node_port: i32| pb::ServiceSpec {
            namespace: "shop".into(),
            name: name.into(),
            r#type: "NodePort".into(),
            selector: [("app".to_string(), "web".to_string())].into(),
            ports: vec![pb::ServicePort {
                name: "http".into(),
                port: 80,
                target_port: 8080,
                protocol: "TCP".into(),
                node_port,
            }],
            cluster_ip: "10.96.0.10".into(),
            labels: [("tier".to_string(), "front".to_string())].into(),
            version: 1,
        };
        // `rank` is the command's outbox number: the order the gateway made the changes in.
        let command = |kind: CommandKind, rank: i64, id: &str, service: pb::ServiceSpec| pb::Command {
            id: rank,
            kind: kind as i32,
            operation_id: format!("op-{rank}"),
            cluster_id: "cl_1".into(),
            name: "prod".into(),
            service_id: id.into(),
            service: Some(service),
            ..Default::default()
        };
        let last = |reports: &crate::sim::Reports, rank: i64| {
            reports.iter().rev().find_map(|r| match r {
                pb::status::Message::Progress(p) if p.operation_id == format!("op-{rank}") => {
                    Some((p.status.clone(), p.error_code.clone(), p.step.clone()))
                }
                _ => None,
            })
        };
        let outcome = |reports: &crate::sim::Reports, rank: i64| last(reports, rank).map(|(s, code, _)| (s, code));
        let done = Some(("succeeded".to_string(), String::new()));
        let key = |name: &str| store::key(services_kind(), "shop", name);
        let stored = |state: &SimState, name: &str| state.kube["cl_1"].get(&key(name)).cloned();
        let node_port =
            |state: &SimState, name: &str| stored(state, name).expect(name)["spec"]["ports"][0]["nodePort"].clone();
        let tick = |state: &mut SimState| state.tick(&layout, chrono::Utc::now());

        // Made through Moke: labelled as Moke's, with the gateway's address and node port.
        let made = state.apply(&layout, &command(CommandKind::ServiceApply, 10, "svc-a", web("web", 30000)));
        assert_eq!(outcome(&made, 10), done);
        let service = stored(&state, "web").expect("web is in the API");
        assert!(projection::managed(&service) && projection::moke_id(&service) == "svc-a", "{service}");
        assert_eq!(service["metadata"]["labels"]["tier"], "front");
        assert_eq!(service["spec"]["clusterIP"], "10.96.0.10");
        assert_eq!(service["spec"]["ports"][0]["targetPort"], 8080);

        // A change moves it; an older one delivered late changes nothing.
        state.apply(&layout, &command(CommandKind::ServiceApply, 12, "svc-a", web("web", 30001)));
        state.apply(&layout, &command(CommandKind::ServiceApply, 10, "svc-a", web("web", 30000)));
        assert_eq!(node_port(&state, "web"), 30001);

        // A Service made with kubectl takes the upper half of the range and
        // node ports from the top; one holding a node port Moke then asks
        // for holds Moke's apply up, its Operation running and saying why,
        // until it lets the port go; what was there stays meanwhile.
        let mut theirs = json!({ "apiVersion": "v1", "kind": "Service",
                                 "metadata": { "name": "admin", "namespace": "shop" },
                                 "spec": { "type": "NodePort", "ports": [{ "port": 81, "nodePort": 30500 }] } });
        services::prepare(&state.kube["cl_1"], &mut theirs, None).expect("a valid Service");
        assert_eq!(theirs["spec"]["clusterIP"], "10.104.0.1");
        state.kube.get_mut("cl_1").expect("the API").put(&key("admin"), theirs);
        let held = state.apply(&layout, &command(CommandKind::ServiceApply, 13, "svc-a", web("web", 30500)));
        let (status, _, why) = last(&held, 13).expect("reported");
        assert!(status == "running" && why.contains("node port 30500"), "{status}: {why}");
        assert_eq!(node_port(&state, "web"), 30001);
        assert_eq!(outcome(&tick(&mut state), 13), None, "still held up");
        // A name kubectl holds is theirs while they keep it.
        let waiting = state.apply(&layout, &command(CommandKind::ServiceApply, 14, "svc-b", web("admin", 30002)));
        assert!(last(&waiting, 14).is_some_and(|(status, _, why)| status == "running" && why.contains("shop/admin")));
        // A delete of a service whose apply waits ends that wait at the next
        // tick, though nothing in the cluster changed.
        state.apply(&layout, &command(CommandKind::ServiceApply, 40, "svc-z", web("zed", 30500)));
        state.apply(&layout, &command(CommandKind::ServiceDelete, 41, "svc-z", web("zed", 0)));
        assert_eq!(outcome(&tick(&mut state), 40), Some(("failed".into(), "superseded".into())));
        // Once kubectl's Service is gone, both go in at the next tick.
        state.kube.get_mut("cl_1").expect("the API").remove(&key("admin"));
        let ticked = tick(&mut state);
        assert_eq!((outcome(&ticked, 13), outcome(&ticked, 14)), (done.clone(), done.clone()));
        assert_eq!(node_port(&state, "web"), 30500);
        assert!(projection::managed(&stored(&state, "admin").expect("Moke's now")));

        // A held-up apply that a later change overtakes fails as superseded.
        let mut blocker = json!({ "apiVersion": "v1", "kind": "Service",
                                  "metadata": { "name": "blocker", "namespace": "shop" },
                                  "spec": { "type": "NodePort", "ports": [{ "port": 81, "nodePort": 30600 }] } });
        services::prepare(&state.kube["cl_1"], &mut blocker, None).expect("a valid Service");
        state.kube.get_mut("cl_1").expect("the API").put(&key("blocker"), blocker);
        state.apply(&layout, &command(CommandKind::ServiceApply, 15, "svc-a", web("web", 30600)));
        state.apply(&layout, &command(CommandKind::ServiceApply, 16, "svc-a", web("web", 30001)));
        assert_eq!(outcome(&tick(&mut state), 15), Some(("failed".into(), "superseded".into())));
        assert_eq!(node_port(&state, "web"), 30001);

        // Deleted, then made again under the same name by another service:
        // the delete and the earlier service's applies delivered late change nothing.
        state.apply(&layout, &command(CommandKind::ServiceDelete, 17, "svc-a", web("web", 0)));
        assert!(stored(&state, "web").is_none());
        state.apply(&layout, &command(CommandKind::ServiceApply, 16, "svc-a", web("web", 30001)));
        assert!(stored(&state, "web").is_none(), "an apply delivered again after the delete makes nothing");
        state.apply(&layout, &command(CommandKind::ServiceApply, 18, "svc-c", web("web", 30000)));
        state.apply(&layout, &command(CommandKind::ServiceDelete, 17, "svc-a", web("web", 0)));
        state.apply(&layout, &command(CommandKind::ServiceApply, 16, "svc-a", web("web", 30001)));
        assert_eq!(stored(&state, "web").map(|s| projection::moke_id(&s).to_string()), Some("svc-c".into()));
        // svc-c deleted (19, still on its way), svc-y made (20, held up by
        // nothing here but lost) and deleted (21): the latest delete of the
        // name takes out the earlier service still there, and 19 changes nothing.
        state.apply(&layout, &command(CommandKind::ServiceDelete, 21, "svc-y", web("web", 0)));
        assert!(stored(&state, "web").is_none());
        state.apply(&layout, &command(CommandKind::ServiceDelete, 19, "svc-c", web("web", 0)));
        state.apply(&layout, &command(CommandKind::ServiceApply, 20, "svc-y", web("web", 30000)));
        assert!(stored(&state, "web").is_none());

        // A namespace that is not in the cluster holds an apply up; bad names are refused.
        let elsewhere = pb::ServiceSpec { namespace: "gone".into(), ..web("web", 30003) };
        let waiting = state.apply(&layout, &command(CommandKind::ServiceApply, 21, "svc-d", elsewhere));
        assert!(
            last(&waiting, 21).is_some_and(|(status, _, why)| status == "running" && why.contains("namespace gone"))
        );
        let bad = pb::ServiceSpec { name: "Not_A_Name".into(), ..web("web", 30000) };
        let refused = state.apply(&layout, &command(CommandKind::ServiceApply, 22, "svc-bad", bad));
        assert_eq!(outcome(&refused, 22), Some(("failed".into(), "invalid_service".into())));
        let system = pb::ServiceSpec { namespace: "kube-system".into(), ..web("web", 30000) };
        let refused = state.apply(&layout, &command(CommandKind::ServiceApply, 23, "svc-sys", system));
        assert_eq!(outcome(&refused, 23), Some(("failed".into(), "invalid_service".into())));
        // The cluster's own `kubernetes` Service never lets its name go: an
        // apply of that name fails at once rather than wait for ever.
        let own = pb::ServiceSpec { namespace: "default".into(), name: "kubernetes".into(), ..web("web", 30004) };
        let refused = state.apply(&layout, &command(CommandKind::ServiceApply, 24, "svc-k", own));
        assert_eq!(outcome(&refused, 24), Some(("failed".into(), "name_reserved".into())));
        assert_eq!(
            state.kube["cl_1"].get(&store::key(services_kind(), "default", "kubernetes")).map(projection::managed),
            Some(false)
        );
    }

    #[test]
    fn waiting_applies_are_tried_again_only_when_a_service_or_namespace_changed() {
        use moke_proto::region::{self as pb, CommandKind};
        let (layout, mut state) = region_with_a_cluster();
        projection::sync(&mut state, "cl_1");
        fn api(state: &mut crate::sim::SimState) -> &mut KubeStore {
            state.kube.get_mut("cl_1").expect("the API")
        }
        let mut theirs = json!({ "apiVersion": "v1", "kind": "Service",
                                 "metadata": { "name": "admin", "namespace": "default" },
                                 "spec": { "type": "NodePort", "ports": [{ "port": 81, "nodePort": 30000 }] } });
        services::prepare(&state.kube["cl_1"], &mut theirs, None).expect("a valid Service");
        api(&mut state).put(&store::key(services_kind(), "default", "admin"), theirs);
        let service = pb::ServiceSpec {
            namespace: "default".into(),
            name: "web".into(),
            r#type: "NodePort".into(),
            selector: [("app".to_string(), "web".to_string())].into(),
            ports: vec![pb::ServicePort { port: 80, protocol: "TCP".into(), node_port: 30000, ..Default::default() }],
            cluster_ip: "10.96.0.10".into(),
            ..Default::default()
        };
        let apply = pb::Command {
            id: 7,
            kind: CommandKind::ServiceApply as i32,
            operation_id: "op-web".into(),
            cluster_id: "cl_1".into(),
            service_id: "svc-web".into(),
            service: Some(service),
            ..Default::default()
        };
        state.apply(&layout, &apply);
        state.tick(&layout, chrono::Utc::now());
        let tried_at = state.clusters["cl_1"].blocked_tried_at;
        // A ConfigMap written moves the cluster's revision, but neither holds nor frees the apply.
        let configmaps = resources::find("", "v1", "configmaps").expect("configmaps are served");
        let config =
            json!({ "apiVersion": "v1", "kind": "ConfigMap", "metadata": { "name": "c", "namespace": "default" } });
        api(&mut state).put(&store::key(configmaps, "default", "c"), config);
        state.tick(&layout, chrono::Utc::now());
        assert_eq!(state.clusters["cl_1"].blocked_tried_at, tried_at, "not tried again");
        assert_eq!(state.clusters["cl_1"].blocked_services.len(), 1);
        // A Service's change is tried: the node port let go, the apply goes
        // in, though the agent restarted in between (what changed is not saved).
        api(&mut state).remove(&store::key(services_kind(), "default", "admin"));
        let saved = serde_json::to_value(&state).expect("serializes");
        let mut state: crate::sim::SimState = serde_json::from_value(saved).expect("loads");
        state.loaded();
        let ticked = state.tick(&layout, chrono::Utc::now());
        let succeeded = ticked.iter().any(
            |r| matches!(r, pb::status::Message::Progress(p) if p.operation_id == "op-web" && p.status == "succeeded"),
        );
        assert!(succeeded, "{ticked:?}");
    }

    #[test]
    fn a_state_saved_before_the_split_moves_kubectl_services_out_of_what_moke_hands_out() {
        use moke_proto::region::{self as pb, CommandKind};
        let (layout, mut state) = region_with_a_cluster();
        projection::sync(&mut state, "cl_1");
        let key = store::key(services_kind(), "default", "old");
        let old = json!({ "apiVersion": "v1", "kind": "Service",
                          "metadata": { "name": "old", "namespace": "default" },
                          "spec": { "type": "NodePort", "clusterIP": "10.96.0.10", "clusterIPs": ["10.96.0.10"],
                                    "ports": [{ "port": 80, "protocol": "TCP", "nodePort": 30001 }] } });
        state.kube.get_mut("cl_1").expect("the API").put(&key, old);
        let service = pb::ServiceSpec {
            namespace: "default".into(),
            name: "web".into(),
            r#type: "ClusterIP".into(),
            selector: [("app".to_string(), "web".to_string())].into(),
            ports: vec![pb::ServicePort { port: 80, protocol: "TCP".into(), ..Default::default() }],
            cluster_ip: "10.96.0.10".into(),
            ..Default::default()
        };
        let apply = |id: i64| pb::Command {
            id,
            kind: CommandKind::ServiceApply as i32,
            operation_id: format!("op-{id}"),
            cluster_id: "cl_1".into(),
            service_id: "svc-web".into(),
            service: Some(service.clone()),
            ..Default::default()
        };
        let outcome = |reports: &crate::sim::Reports, id: i64| {
            reports.iter().rev().find_map(|r| match r {
                pb::status::Message::Progress(p) if p.operation_id == format!("op-{id}") => {
                    Some((p.status.clone(), p.error_code.clone()))
                }
                _ => None,
            })
        };
        // An address a Service holds stays held while it lives: such an apply fails at once.
        let refused = state.apply(&layout, &apply(2));
        assert_eq!(outcome(&refused, 2), Some(("failed".into(), "address_taken".into())));
        let saved = serde_json::to_value(&state).expect("serializes");
        let mut saved = saved.as_object().expect("an object").clone();
        saved.remove("shape");
        let mut loaded: crate::sim::SimState = serde_json::from_value(saved.into()).expect("an older state loads");
        loaded.loaded();
        let moved = loaded.kube["cl_1"].get(&key).expect("kept").clone();
        assert_eq!(
            (&moved["spec"]["clusterIP"], &moved["spec"]["clusterIPs"][0]),
            (&json!("10.104.0.1"), &json!("10.104.0.1"))
        );
        assert_eq!(moved["spec"]["ports"][0]["nodePort"], 32767, "to the cluster's side of the node ports");
        let events = loaded.kube["cl_1"].list("/events/default/").map(|(_, e)| e.clone()).collect::<Vec<_>>();
        let told = events.iter().find(|e| e["reason"] == "MovedForMoke").expect("an event on the Service");
        assert_eq!(told["involvedObject"]["name"], "old");
        let message = told["message"].as_str().unwrap_or_default();
        assert!(message.contains("10.96.0.10 to 10.104.0.1") && message.contains("30001 to 32767"), "{message}");
        let own = loaded.kube["cl_1"].get(&store::key(services_kind(), "default", "kubernetes")).expect("kept");
        assert_eq!(own["spec"]["clusterIP"], "10.96.0.1");
        // Once: a state in the current shape is not touched again, nor one a newer agent saved.
        let before = loaded.kube["cl_1"].revision;
        loaded.loaded();
        assert_eq!(loaded.kube["cl_1"].revision, before);
        loaded.shape = 7;
        loaded.loaded();
        assert_eq!(loaded.shape, 7);
        // Moke's service at the address it freed goes in.
        let made = loaded.apply(&layout, &apply(3));
        assert_eq!(outcome(&made, 3), Some(("succeeded".into(), String::new())));
    }
}
