//! Authorization inside a hosted cluster, from the groups of the client
//! certificate Moke issued: `moke:cluster-admins` are cluster-admin,
//! `moke:editors` get the default `edit` ClusterRole (every verb on
//! namespaced workload resources; namespaces and nodes only to read) and
//! `moke:viewers` the `view` ClusterRole (read, but not secrets or RBAC objects). Every
//! Moke role may read nodes, as `kubectl get nodes` is how a customer first
//! checks a cluster. Anyone authenticated may ask who they are and what
//! they may do.

pub const CLUSTER_ADMINS: &str = "moke:cluster-admins";
pub const EDITORS: &str = "moke:editors";
pub const VIEWERS: &str = "moke:viewers";

/// A request as authorization sees it.
#[derive(Debug, Clone, Copy)]
pub struct Attributes<'a> {
    pub verb: &'a str,
    pub group: &'a str,
    pub resource: &'a str,
    pub subresource: &'a str,
    /// Empty for a cluster-scoped resource or a request across namespaces.
    pub namespace: &'a str,
}

const READ_VERBS: &[&str] = &["get", "list", "watch"];

/// Whether `groups` may do what `request` asks.
pub fn allowed(groups: &[String], request: Attributes<'_>) -> bool {
    let member = |group: &str| groups.iter().any(|g| g == group);
    let reads = READ_VERBS.contains(&request.verb);
    if request.verb == "create"
        && matches!(request.resource, "selfsubjectreviews" | "selfsubjectaccessreviews" | "selfsubjectrulesreviews")
    {
        return true;
    }
    if member(CLUSTER_ADMINS) {
        return true;
    }
    let moke_role = member(EDITORS) || member(VIEWERS);
    if request.resource == "nodes" {
        return moke_role && reads;
    }
    if member(EDITORS) {
        return match request.resource {
            // Namespaces are the cluster admins' to make and remove.
            "namespaces" => reads,
            // RBAC stays with cluster admins: an editor could grant itself more.
            "roles" | "rolebindings" | "clusterroles" | "clusterrolebindings" => false,
            _ => true,
        };
    }
    if member(VIEWERS) {
        let hidden =
            matches!(request.resource, "secrets" | "roles" | "rolebindings" | "clusterroles" | "clusterrolebindings");
        return reads && !hidden;
    }
    false
}

/// The message of a 403, as the Kubernetes API server words it.
pub fn forbidden_message(user: &str, request: Attributes<'_>) -> String {
    let resource = if request.subresource.is_empty() {
        request.resource.to_string()
    } else {
        format!("{}/{}", request.resource, request.subresource)
    };
    let place = if request.namespace.is_empty() {
        "at the cluster scope".to_string()
    } else {
        format!("in the namespace \"{}\"", request.namespace)
    };
    format!(
        "{resource} is forbidden: User \"{user}\" cannot {} resource \"{resource}\" in API group \"{}\" {place}",
        request.verb, request.group
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ask<'a>(verb: &'a str, resource: &'a str) -> Attributes<'a> {
        Attributes { verb, group: "", resource, subresource: "", namespace: "default" }
    }

    #[test]
    fn each_moke_group_gets_its_default_cluster_role() {
        let viewer = vec![VIEWERS.to_string()];
        let editor = vec![EDITORS.to_string()];
        let admin = vec![CLUSTER_ADMINS.to_string()];
        assert!(allowed(&viewer, ask("list", "configmaps")));
        assert!(!allowed(&viewer, ask("create", "configmaps")));
        assert!(!allowed(&viewer, ask("get", "secrets")));
        assert!(!allowed(&viewer, ask("list", "rolebindings")), "who holds what is not for viewers");
        assert!(allowed(&viewer, ask("list", "nodes")));
        assert!(allowed(&editor, ask("create", "configmaps")));
        assert!(allowed(&editor, ask("delete", "deployments")));
        assert!(!allowed(&editor, ask("create", "namespaces")));
        assert!(!allowed(&editor, ask("create", "rolebindings")));
        assert!(allowed(&admin, ask("create", "namespaces")));
        assert!(!allowed(&[], ask("list", "pods")), "no Moke group, no access");
        assert!(allowed(&[], ask("create", "selfsubjectaccessreviews")));
    }

    #[test]
    fn a_refusal_reads_as_the_api_server_words_it() {
        let message = forbidden_message("usr_1", ask("create", "configmaps"));
        assert_eq!(
            message,
            "configmaps is forbidden: User \"usr_1\" cannot create resource \"configmaps\" in API group \"\" in the namespace \"default\""
        );
    }
}
