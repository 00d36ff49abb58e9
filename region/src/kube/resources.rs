//! The resources the simulated API server serves, and what discovery
//! (`/api`, `/apis`, each group version's resource list) and the OpenAPI v3
//! index say of them: enough for kubectl to find every resource by name,
//! short name and category, and to send server-side field validation.

use serde_json::{Value, json};

/// Where a resource's objects come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// Kept in the cluster's store; clients create and change them.
    Stored,
    /// Made from the simulated region (nodes, pods): read-only to clients.
    Projected,
    /// A review answered on the spot (`create` only), never kept.
    Review,
}

/// One resource of a group version.
#[derive(Debug)]
pub struct Kind {
    pub group: &'static str,
    pub version: &'static str,
    /// The plural name in paths (`deployments`).
    pub resource: &'static str,
    pub kind: &'static str,
    pub namespaced: bool,
    pub short: &'static [&'static str],
    pub categories: &'static [&'static str],
    /// Subresources served (`scale`, `status`).
    pub subresources: &'static [&'static str],
    pub source: Source,
}

const READ: &[&str] = &["get", "list", "watch"];
const ALL: &[&str] = &["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"];

impl Kind {
    /// `v1` or `apps/v1`.
    pub fn group_version(&self) -> String {
        if self.group.is_empty() { self.version.to_string() } else { format!("{}/{}", self.group, self.version) }
    }

    /// The kind of a list of these.
    pub fn list_kind(&self) -> String {
        format!("{}List", self.kind)
    }

    pub fn verbs(&self) -> &'static [&'static str] {
        match self.source {
            Source::Stored => ALL,
            Source::Projected => READ,
            Source::Review => &["create"],
        }
    }
}

/// Every resource served.
pub const KINDS: &[Kind] = &[
    Kind {
        group: "",
        version: "v1",
        resource: "namespaces",
        kind: "Namespace",
        namespaced: false,
        short: &["ns"],
        categories: &[],
        subresources: &[],
        source: Source::Stored,
    },
    Kind {
        group: "",
        version: "v1",
        resource: "nodes",
        kind: "Node",
        namespaced: false,
        short: &["no"],
        categories: &[],
        subresources: &[],
        source: Source::Projected,
    },
    Kind {
        group: "",
        version: "v1",
        resource: "pods",
        kind: "Pod",
        namespaced: true,
        short: &["po"],
        categories: &["all"],
        subresources: &["log"],
        source: Source::Projected,
    },
    Kind {
        group: "",
        version: "v1",
        resource: "services",
        kind: "Service",
        namespaced: true,
        short: &["svc"],
        categories: &["all"],
        subresources: &[],
        source: Source::Stored,
    },
    Kind {
        group: "",
        version: "v1",
        resource: "endpoints",
        kind: "Endpoints",
        namespaced: true,
        short: &["ep"],
        categories: &[],
        subresources: &[],
        source: Source::Projected,
    },
    Kind {
        group: "",
        version: "v1",
        resource: "secrets",
        kind: "Secret",
        namespaced: true,
        short: &[],
        categories: &[],
        subresources: &[],
        source: Source::Stored,
    },
    Kind {
        group: "",
        version: "v1",
        resource: "events",
        kind: "Event",
        namespaced: true,
        short: &["ev"],
        categories: &[],
        subresources: &[],
        source: Source::Projected,
    },
    Kind {
        group: "",
        version: "v1",
        resource: "configmaps",
        kind: "ConfigMap",
        namespaced: true,
        short: &["cm"],
        categories: &[],
        subresources: &[],
        source: Source::Stored,
    },
    Kind {
        group: "apps",
        version: "v1",
        resource: "deployments",
        kind: "Deployment",
        namespaced: true,
        short: &["deploy"],
        categories: &["all"],
        subresources: &["scale", "status"],
        source: Source::Stored,
    },
    Kind {
        group: "apps",
        version: "v1",
        resource: "replicasets",
        kind: "ReplicaSet",
        namespaced: true,
        short: &["rs"],
        categories: &["all"],
        subresources: &[],
        source: Source::Projected,
    },
    Kind {
        group: "coordination.k8s.io",
        version: "v1",
        resource: "leases",
        kind: "Lease",
        namespaced: true,
        short: &[],
        categories: &[],
        subresources: &[],
        source: Source::Projected,
    },
    Kind {
        group: "rbac.authorization.k8s.io",
        version: "v1",
        resource: "roles",
        kind: "Role",
        namespaced: true,
        short: &[],
        categories: &[],
        subresources: &[],
        source: Source::Stored,
    },
    Kind {
        group: "rbac.authorization.k8s.io",
        version: "v1",
        resource: "rolebindings",
        kind: "RoleBinding",
        namespaced: true,
        short: &[],
        categories: &[],
        subresources: &[],
        source: Source::Stored,
    },
    Kind {
        group: "rbac.authorization.k8s.io",
        version: "v1",
        resource: "clusterroles",
        kind: "ClusterRole",
        namespaced: false,
        short: &[],
        categories: &[],
        subresources: &[],
        source: Source::Stored,
    },
    Kind {
        group: "rbac.authorization.k8s.io",
        version: "v1",
        resource: "clusterrolebindings",
        kind: "ClusterRoleBinding",
        namespaced: false,
        short: &[],
        categories: &[],
        subresources: &[],
        source: Source::Stored,
    },
    Kind {
        group: "authentication.k8s.io",
        version: "v1",
        resource: "selfsubjectreviews",
        kind: "SelfSubjectReview",
        namespaced: false,
        short: &[],
        categories: &[],
        subresources: &[],
        source: Source::Review,
    },
    Kind {
        group: "authorization.k8s.io",
        version: "v1",
        resource: "selfsubjectaccessreviews",
        kind: "SelfSubjectAccessReview",
        namespaced: false,
        short: &[],
        categories: &[],
        subresources: &[],
        source: Source::Review,
    },
];

/// The groups beside the core group, in discovery order.
const GROUPS: &[&str] =
    &["apps", "coordination.k8s.io", "rbac.authorization.k8s.io", "authentication.k8s.io", "authorization.k8s.io"];

/// The resource at `group`/`version` named `resource`.
pub fn find(group: &str, version: &str, resource: &str) -> Option<&'static Kind> {
    KINDS.iter().find(|k| k.group == group && k.version == version && k.resource == resource)
}

/// `/api`.
pub fn api_versions() -> Value {
    json!({
        "kind": "APIVersions", "versions": ["v1"],
        "serverAddressByClientCIDRs": [{ "clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1" }],
    })
}

/// `/apis`.
pub fn api_groups() -> Value {
    let groups: Vec<Value> = GROUPS
        .iter()
        .map(|group| {
            let version = json!({ "groupVersion": format!("{group}/v1"), "version": "v1" });
            json!({ "name": group, "versions": [version], "preferredVersion": version })
        })
        .collect();
    json!({ "kind": "APIGroupList", "apiVersion": "v1", "groups": groups })
}

/// A group version's resources (`/api/v1`, `/apis/apps/v1`), with their subresources.
pub fn resource_list(group: &str, version: &str) -> Option<Value> {
    let kinds: Vec<&Kind> = KINDS.iter().filter(|k| k.group == group && k.version == version).collect();
    if kinds.is_empty() {
        return None;
    }
    let mut resources = Vec::new();
    for kind in &kinds {
        resources.push(json!({
            "name": kind.resource, "singularName": kind.kind.to_lowercase(), "namespaced": kind.namespaced,
            "kind": kind.kind, "verbs": kind.verbs(), "shortNames": kind.short, "categories": kind.categories,
        }));
        for sub in kind.subresources {
            let (sub_kind, group, version) = match *sub {
                "scale" => ("Scale", "autoscaling", "v1"),
                _ => (kind.kind, kind.group, kind.version),
            };
            let verbs: &[&str] = if *sub == "log" { &["get"] } else { &["get", "patch", "update"] };
            resources.push(json!({
                "name": format!("{}/{sub}", kind.resource), "singularName": "", "namespaced": kind.namespaced,
                "group": group, "version": version, "kind": sub_kind, "verbs": verbs,
            }));
        }
    }
    let group_version = if group.is_empty() { version.to_string() } else { format!("{group}/{version}") };
    Some(
        json!({ "kind": "APIResourceList", "apiVersion": "v1", "groupVersion": group_version, "resources": resources }),
    )
}

/// The OpenAPI v3 index (`/openapi/v3`): one document per group version,
/// each at a URL naming its content's hash, so that clients' caches of an
/// older document are never read for it.
pub fn openapi_index() -> Value {
    let mut paths = serde_json::Map::new();
    for path in std::iter::once("api/v1".to_string()).chain(GROUPS.iter().map(|g| format!("apis/{g}/v1"))) {
        let hash = openapi_documents().get(&path).map(|(_, hash)| *hash).unwrap_or_default();
        let url = format!("/openapi/v3/{path}?hash={hash:016X}");
        paths.insert(path, json!({ "serverRelativeURL": url }));
    }
    json!({ "paths": paths })
}

/// A group version's OpenAPI v3 document (`/openapi/v3/apis/apps/v1`),
/// made once.
pub fn openapi_document(path: &str) -> Option<Value> {
    openapi_documents().get(path).map(|(document, _)| document.clone())
}

/// Every group version's document and its hash, by path (`api/v1`).
fn openapi_documents() -> &'static std::collections::HashMap<String, (Value, u64)> {
    static DOCUMENTS: std::sync::OnceLock<std::collections::HashMap<String, (Value, u64)>> = std::sync::OnceLock::new();
    DOCUMENTS.get_or_init(|| {
        std::iter::once("api/v1".to_string())
            .chain(GROUPS.iter().map(|g| format!("apis/{g}/v1")))
            .filter_map(|path| {
                let document = build_openapi_document(&path)?;
                let mut hasher = std::hash::DefaultHasher::new();
                std::hash::Hash::hash(&document.to_string(), &mut hasher);
                Some((path, (document, std::hash::Hasher::finish(&hasher))))
            })
            .collect()
    })
}

/// A group version's OpenAPI v3 document: each object's path and its
/// operations, which say the server takes `fieldValidation`, with the
/// group, version and kind kubectl looks for, and the kinds' schemas.
fn build_openapi_document(path: &str) -> Option<Value> {
    let (group, version) = match path.split('/').collect::<Vec<_>>()[..] {
        ["api", version] => ("", version),
        ["apis", group, version] => (group, version),
        _ => return None,
    };
    let kinds: Vec<&Kind> = KINDS.iter().filter(|k| k.group == group && k.version == version).collect();
    if kinds.is_empty() {
        return None;
    }
    let mut paths = serde_json::Map::new();
    let schemas = super::schemas::components(&kinds);
    for kind in kinds {
        let prefix = if group.is_empty() { format!("/api/{version}") } else { format!("/apis/{group}/{version}") };
        let scope = if kind.namespaced { "/namespaces/{namespace}" } else { "" };
        let gvk = json!({ "group": group, "version": version, "kind": kind.kind });
        let validation = json!({ "name": "fieldValidation", "in": "query", "schema": { "type": "string" } });
        let operation = |id: String| {
            json!({ "operationId": id, "x-kubernetes-group-version-kind": gvk, "parameters": [validation],
                    "responses": { "200": { "description": "OK" } } })
        };
        let item = match kind.source {
            Source::Stored => json!({
                "get": operation(format!("read{}", kind.kind)),
                "put": operation(format!("replace{}", kind.kind)),
                "patch": operation(format!("patch{}", kind.kind)),
                "delete": operation(format!("delete{}", kind.kind)),
            }),
            Source::Projected => json!({ "get": operation(format!("read{}", kind.kind)) }),
            Source::Review => json!({}),
        };
        let collection = match kind.source {
            Source::Stored | Source::Review => json!({ "post": operation(format!("create{}", kind.kind)) }),
            Source::Projected => json!({ "get": operation(format!("list{}", kind.kind)) }),
        };
        paths.insert(format!("{prefix}{scope}/{}", kind.resource), collection);
        paths.insert(format!("{prefix}{scope}/{}/{{name}}", kind.resource), item);
    }
    Some(json!({
        "openapi": "3.0.0",
        "info": { "title": "Kubernetes", "version": "v1.33.0" },
        "paths": paths,
        "components": { "schemas": schemas },
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_group_is_discoverable_and_documented() {
        for group in GROUPS {
            assert!(resource_list(group, "v1").is_some(), "{group}");
            assert!(openapi_document(&format!("apis/{group}/v1")).is_some(), "{group}");
        }
        let core = resource_list("", "v1").unwrap();
        let names: Vec<&str> =
            core["resources"].as_array().unwrap().iter().filter_map(|r| r["name"].as_str()).collect();
        assert!(names.contains(&"configmaps") && names.contains(&"namespaces"), "{names:?}");
        assert_eq!(find("apps", "v1", "deployments").map(|k| k.kind), Some("Deployment"));
    }
}
