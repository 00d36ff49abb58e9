//! RBAC objects for grants finer than the Moke roles: Roles and
//! ClusterRoles hold rules, RoleBindings (in their namespace) and
//! ClusterRoleBindings (everywhere) grant them to users and groups. The
//! default ClusterRoles (`cluster-admin`, `admin`, `edit`, `view`) are
//! kept in every cluster, read-only, so bindings can name them.
//!
//! Nobody grants more than they hold: a Role, ClusterRole or binding may be
//! written only by someone who already holds every permission it would
//! grant, as the API server's escalation check has it.

use serde_json::{Value, json};

use super::rbac::Attributes;
use super::resources::{self, KINDS, Source};
use super::store::{self, KubeStore};

pub const GROUP: &str = "rbac.authorization.k8s.io";
/// The label of the default ClusterRoles, which stay as they are.
pub const BOOTSTRAP_LABEL: &str = "kubernetes.io/bootstrapping";
const EVERY_VERB: &[&str] = &["get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"];
const READ: &[&str] = &["get", "list", "watch"];
/// The most rules a role holds, and subjects a binding names: what every
/// authorization walks stays bounded.
const MAX_RULES: usize = 100;
const MAX_SUBJECTS: usize = 100;
/// The most entries in each list of a rule.
const MAX_RULE_ITEMS: usize = 16;
/// The most roles whose rules count for one subject.
pub const MAX_BOUND_ROLES: usize = 64;

fn kind(resource: &str) -> &'static resources::Kind {
    resources::find(GROUP, "v1", resource).expect("an RBAC resource")
}

/// Whether an object is one of the default ClusterRoles.
pub fn is_default(object: &Value) -> bool {
    object["metadata"]["labels"][BOOTSTRAP_LABEL] == "rbac-defaults"
}

/// The default ClusterRoles, with rules over the resources served.
pub fn default_cluster_roles() -> Vec<Value> {
    let namespaced = |excluded: &[&str]| -> Vec<Value> {
        KINDS
            .iter()
            .filter(|k| k.namespaced && k.source != Source::Review && !excluded.contains(&k.resource))
            .map(|k| {
                let verbs = if k.source == Source::Stored { EVERY_VERB } else { READ };
                json!({ "apiGroups": [k.group], "resources": [k.resource], "verbs": verbs })
            })
            .collect()
    };
    // Subresources, as Kubernetes' roles grant them: the writers scale, everyone reads logs.
    let subresources = |scale: &[&str]| {
        [
            json!({ "apiGroups": ["apps"], "resources": ["deployments/scale"], "verbs": scale }),
            json!({ "apiGroups": ["apps"], "resources": ["deployments/status"], "verbs": READ }),
            json!({ "apiGroups": [""], "resources": ["pods/log"], "verbs": READ }),
        ]
    };
    let mut admin = namespaced(&[]);
    admin.push(json!({ "apiGroups": [""], "resources": ["namespaces"], "verbs": READ }));
    admin.extend(subresources(&["get", "update", "patch"]));
    let mut edit = namespaced(&["roles", "rolebindings"]);
    edit.push(json!({ "apiGroups": [""], "resources": ["namespaces"], "verbs": READ }));
    edit.extend(subresources(&["get", "update", "patch"]));
    let view: Vec<Value> = KINDS
        .iter()
        .filter(|k| {
            k.namespaced && k.source != Source::Review && !matches!(k.resource, "secrets" | "roles" | "rolebindings")
        })
        .map(|k| json!({ "apiGroups": [k.group], "resources": [k.resource], "verbs": READ }))
        .chain([json!({ "apiGroups": [""], "resources": ["namespaces"], "verbs": READ })])
        .chain(subresources(READ))
        .collect();
    [
        ("cluster-admin", vec![json!({ "apiGroups": ["*"], "resources": ["*"], "verbs": ["*"] })]),
        ("admin", admin),
        ("edit", edit),
        ("view", view),
    ]
    .into_iter()
    .map(|(name, rules)| {
        json!({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": { "name": name, "labels": { BOOTSTRAP_LABEL: "rbac-defaults" },
                          "annotations": { "rbac.authorization.kubernetes.io/autoupdate": "true" } },
            "rules": rules,
        })
    })
    .collect()
}

/// Keeps the default ClusterRoles as they are.
pub fn sync_defaults(store: &mut KubeStore) {
    for role in default_cluster_roles() {
        let key = store::key(kind("clusterroles"), "", role["metadata"]["name"].as_str().unwrap_or_default());
        super::projection::upsert(store, &key, role);
    }
}

fn contains(list: &Value, wanted: &str) -> bool {
    list.as_array().is_some_and(|items| items.iter().any(|i| i == "*" || i == wanted))
}

/// Whether `rule` allows the request on the object `name` ("" for a collection).
fn rule_allows(rule: &Value, request: Attributes<'_>, resource: &str, name: &str) -> bool {
    let names_ok = rule["resourceNames"]
        .as_array()
        .is_none_or(|names| names.is_empty() || (!name.is_empty() && names.iter().any(|n| n == name)));
    contains(&rule["verbs"], request.verb)
        && contains(&rule["apiGroups"], request.group)
        && contains(&rule["resources"], resource)
        && names_ok
}

/// Whether a binding's subjects include the caller.
fn binds(binding: &Value, user: &str, groups: &[String]) -> bool {
    binding["subjects"].as_array().is_some_and(|subjects| {
        subjects.iter().any(|subject| {
            let name = subject["name"].as_str().unwrap_or_default();
            match subject["kind"].as_str() {
                Some("User") => name == user,
                Some("Group") => name == "system:authenticated" || groups.iter().any(|g| g == name),
                _ => false,
            }
        })
    })
}

/// The rules a binding's `roleRef` names (a Role in `namespace`, or a ClusterRole).
pub fn rules_of<'a>(store: &'a KubeStore, binding: &Value, namespace: &str) -> Option<&'a Value> {
    let role_ref = &binding["roleRef"];
    let name = role_ref["name"].as_str()?;
    let key = match role_ref["kind"].as_str()? {
        "Role" if !namespace.is_empty() => store::key(kind("roles"), namespace, name),
        "ClusterRole" => store::key(kind("clusterroles"), "", name),
        _ => return None,
    };
    store.get(&key).map(|role| &role["rules"])
}

/// The rules the cluster's bindings give the caller where `namespace` is
/// ("" for the cluster scope): every ClusterRoleBinding's, and the
/// namespace's RoleBindings'.
pub fn bound_rules<'a>(store: &'a KubeStore, user: &str, groups: &[String], namespace: &str) -> Vec<&'a Value> {
    let mut rules = Vec::new();
    // Each role counts once however many bindings name it, and only the
    // first MAX_BOUND_ROLES of them: what one request walks stays bounded.
    let mut roles = std::collections::BTreeSet::new();
    let mut take = |binding: &Value, namespace: &str| {
        let role_ref = &binding["roleRef"];
        let scope = if role_ref["kind"] == "Role" { namespace } else { "" };
        let role = format!("{}/{scope}/{}", role_ref["kind"], role_ref["name"]);
        if roles.len() < MAX_BOUND_ROLES
            && !roles.contains(&role)
            && binds(binding, user, groups)
            && let Some(found) = rules_of(store, binding, namespace).and_then(Value::as_array)
        {
            roles.insert(role);
            rules.extend(found.iter());
        }
    };
    for (_, binding) in store.list(&store::prefix(kind("clusterrolebindings"), None)) {
        take(binding, "");
    }
    if !namespace.is_empty() {
        for (_, binding) in store.list(&store::prefix(kind("rolebindings"), Some(namespace))) {
            take(binding, namespace);
        }
    }
    rules
}

/// Whether any of `rules` allows the request on `name`.
pub fn any_allows(rules: &[&Value], request: Attributes<'_>, name: &str) -> bool {
    let resource = if request.subresource.is_empty() {
        request.resource.to_string()
    } else {
        format!("{}/{}", request.resource, request.subresource)
    };
    rules.iter().any(|rule| rule_allows(rule, request, &resource, name))
}

/// Whether the cluster's bindings grant the caller the request on `name`.
pub fn granted(store: &KubeStore, user: &str, groups: &[String], request: Attributes<'_>, name: &str) -> bool {
    any_allows(&bound_rules(store, user, groups, request.namespace), request, name)
}

/// The rules an RBAC object would grant: its own (a Role, a ClusterRole),
/// or those of the role a binding names.
pub fn rules_granted(store: &KubeStore, object: &Value, namespace: &str) -> Vec<Value> {
    match object["kind"].as_str() {
        Some("Role" | "ClusterRole") => object["rules"].as_array().cloned().unwrap_or_default(),
        _ => rules_of(store, object, namespace).and_then(Value::as_array).cloned().unwrap_or_default(),
    }
}

/// The first permission `rules` would grant that the writer does not hold
/// (`holds`), or any grant only a cluster admin may make: a wildcard group
/// or resource (it would cover resources served later), or a resource,
/// subresource or verb this server does not know.
pub fn escalation(rules: &[Value], namespace: &str, holds: impl Fn(Attributes<'_>) -> bool) -> Option<String> {
    let mut needed: std::collections::BTreeSet<(&str, String, &str)> = std::collections::BTreeSet::new();
    for rule in rules {
        let texts = |field: &str| -> Vec<String> {
            let distinct: std::collections::BTreeSet<String> =
                rule[field].as_array().into_iter().flatten().filter_map(|v| v.as_str().map(str::to_string)).collect();
            distinct.into_iter().collect()
        };
        let (groups, resources, verbs) = (texts("apiGroups"), texts("resources"), texts("verbs"));
        if groups.iter().chain(&resources).any(|g| g == "*") {
            return Some("every resource (*), which only cluster admins grant".into());
        }
        let verbs: Vec<&str> = if verbs.iter().any(|v| v == "*") {
            EVERY_VERB.to_vec()
        } else {
            match verbs.iter().find(|v| !EVERY_VERB.contains(&v.as_str())) {
                Some(unknown) => return Some(format!("the verb {unknown}, which only cluster admins grant")),
                None => EVERY_VERB.iter().copied().filter(|v| verbs.iter().any(|w| w == v)).collect(),
            }
        };
        for group in &groups {
            for resource in &resources {
                let (base, sub) = resource.split_once('/').unwrap_or((resource, ""));
                let served = KINDS.iter().find(|k| k.group == group.as_str() && k.resource == base);
                let Some(served) = served.filter(|k| sub.is_empty() || k.subresources.contains(&sub)) else {
                    return Some(format!("{resource} in group {group:?}, which only cluster admins grant"));
                };
                for verb in &verbs {
                    needed.insert((served.group, resource.clone(), verb));
                }
            }
        }
    }
    for (group, resource, verb) in needed {
        let (base, sub) = resource.split_once('/').unwrap_or((&resource, ""));
        let namespaced = KINDS.iter().any(|k| k.group == group && k.resource == base && k.namespaced);
        let request = Attributes {
            verb,
            group,
            resource: base,
            subresource: sub,
            namespace: if namespaced { namespace } else { "" },
        };
        if !holds(request) {
            let group = if group.is_empty() { "core" } else { group };
            return Some(format!("{verb} {resource}.{group}"));
        }
    }
    None
}

/// Checks the shape of an RBAC object; the field at fault and why.
pub fn check(object: &Value) -> Result<(), (String, String)> {
    match object["kind"].as_str() {
        Some("Role" | "ClusterRole") => {
            let rules = object["rules"].as_array().map(Vec::as_slice).unwrap_or_default();
            if rules.len() > MAX_RULES {
                return Err((
                    "rules".into(),
                    format!("Too many: {}: must have at most {MAX_RULES} items", rules.len()),
                ));
            }
            for (index, rule) in rules.iter().enumerate() {
                for field in ["apiGroups", "resources", "verbs", "resourceNames", "nonResourceURLs"] {
                    let fine = rule[field].is_null()
                        || rule[field].as_array().is_some_and(|items| {
                            items.len() <= MAX_RULE_ITEMS
                                && items.iter().all(|item| item.as_str().is_some_and(|text| text.len() <= 253))
                        });
                    if !fine {
                        let why =
                            format!("must be a list of at most {MAX_RULE_ITEMS} strings of at most 253 characters");
                        return Err((format!("rules[{index}].{field}"), why));
                    }
                }
                if rule["verbs"].as_array().is_none_or(|v| v.is_empty()) {
                    return Err((
                        format!("rules[{index}].verbs"),
                        "Required value: verbs must contain at least one value".into(),
                    ));
                }
            }
            Ok(())
        }
        _ => {
            let role_ref = &object["roleRef"];
            let kinds_ok = matches!(role_ref["kind"].as_str(), Some("Role" | "ClusterRole"));
            if !kinds_ok || role_ref["name"].as_str().is_none_or(str::is_empty) || role_ref["apiGroup"] != GROUP {
                return Err((
                    "roleRef".into(),
                    format!("Required value: kind Role or ClusterRole, apiGroup {GROUP} and a name"),
                ));
            }
            if object["kind"] == "ClusterRoleBinding" && role_ref["kind"] == "Role" {
                return Err((
                    "roleRef.kind".into(),
                    "Unsupported value: \"Role\": supported values: \"ClusterRole\"".into(),
                ));
            }
            let subjects = object["subjects"].as_array().map(Vec::as_slice).unwrap_or_default();
            if subjects.len() > MAX_SUBJECTS {
                let why = format!("Too many: {}: must have at most {MAX_SUBJECTS} items", subjects.len());
                return Err(("subjects".into(), why));
            }
            for (index, subject) in subjects.iter().enumerate() {
                if !matches!(subject["kind"].as_str(), Some("User" | "Group" | "ServiceAccount"))
                    || subject["name"].as_str().is_none_or(str::is_empty)
                {
                    return Err((
                        format!("subjects[{index}]"),
                        "a subject is a User, Group or ServiceAccount with a name".into(),
                    ));
                }
            }
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ask<'a>(verb: &'a str, resource: &'a str, namespace: &'a str) -> Attributes<'a> {
        Attributes { verb, group: "", resource, subresource: "", namespace }
    }

    #[test]
    fn a_binding_grants_its_roles_rules_to_its_subjects_only() {
        let mut store = KubeStore::default();
        sync_defaults(&mut store);
        let role = json!({ "kind": "Role", "metadata": { "name": "cm-reader", "namespace": "shop" },
                           "rules": [{ "apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"], "resourceNames": ["settings"] }] });
        store.put(&store::key(kind("roles"), "shop", "cm-reader"), role);
        let binding = json!({ "kind": "RoleBinding", "metadata": { "name": "ann", "namespace": "shop" },
                              "roleRef": { "apiGroup": GROUP, "kind": "Role", "name": "cm-reader" },
                              "subjects": [{ "kind": "User", "name": "usr_ann" }] });
        store.put(&store::key(kind("rolebindings"), "shop", "ann"), binding);
        let view = json!({ "kind": "ClusterRoleBinding", "metadata": { "name": "team" },
                           "roleRef": { "apiGroup": GROUP, "kind": "ClusterRole", "name": "view" },
                           "subjects": [{ "kind": "Group", "name": "team-a" }] });
        store.put(&store::key(kind("clusterrolebindings"), "", "team"), view);

        assert!(granted(&store, "usr_ann", &[], ask("get", "configmaps", "shop"), "settings"));
        assert!(!granted(&store, "usr_ann", &[], ask("get", "configmaps", "shop"), "other"));
        assert!(!granted(&store, "usr_ann", &[], ask("get", "configmaps", "default"), "settings"));
        assert!(!granted(&store, "usr_bob", &[], ask("get", "configmaps", "shop"), "settings"));
        let team = vec!["team-a".to_string()];
        assert!(granted(&store, "usr_bob", &team, ask("list", "pods", "default"), ""));
        assert!(!granted(&store, "usr_bob", &team, ask("delete", "pods", "default"), "p"));
        assert!(!granted(&store, "usr_bob", &team, ask("get", "secrets", "default"), "s"));
    }

    #[test]
    fn granting_what_one_does_not_hold_is_an_escalation() {
        let wildcard = [json!({ "apiGroups": ["*"], "resources": ["*"], "verbs": ["*"] })];
        let reads_only = |request: Attributes<'_>| READ.contains(&request.verb);
        assert!(escalation(&wildcard, "shop", |_| true).is_some(), "wildcards are for cluster admins");
        let scale = [json!({ "apiGroups": ["apps"], "resources": ["deployments/scale"], "verbs": ["update"] })];
        assert!(escalation(&scale, "shop", reads_only).is_some(), "subresources are checked");
        let unknown = [json!({ "apiGroups": [""], "resources": ["widgets"], "verbs": ["get"] })];
        assert!(escalation(&unknown, "shop", |_| true).is_some());
        let reads = [json!({ "apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list"] })];
        assert_eq!(escalation(&reads, "shop", reads_only), None);
    }
}
