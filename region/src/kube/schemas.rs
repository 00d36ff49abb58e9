//! The OpenAPI v3 schemas of the kinds served, as `kubectl explain` reads
//! them: Kubernetes' own (from `k8s-openapi`, with their field
//! descriptions), named as the API server names them
//! (`io.k8s.api.apps.v1.Deployment`), each served kind's schema marked
//! with its `x-kubernetes-group-version-kind`.

use k8s_openapi::api::{apps, authentication, authorization, coordination, core, rbac};
use k8s_openapi::schemars::JsonSchema;
use k8s_openapi::schemars::generate::{SchemaGenerator, SchemaSettings};
use serde_json::{Map, Value, json};

use super::resources::Kind;

/// Registers the schema of one served kind (and of everything it refers
/// to) with `generator`; none for a kind this server does not serve.
fn register(generator: &mut SchemaGenerator, kind: &Kind) -> Option<String> {
    fn add<T: JsonSchema>(generator: &mut SchemaGenerator) -> Option<String> {
        generator.subschema_for::<T>();
        Some(T::schema_name().into_owned())
    }
    match (kind.group, kind.kind) {
        ("", "Namespace") => add::<core::v1::Namespace>(generator),
        ("", "Node") => add::<core::v1::Node>(generator),
        ("", "Pod") => add::<core::v1::Pod>(generator),
        ("", "Service") => add::<core::v1::Service>(generator),
        ("", "Endpoints") => add::<core::v1::Endpoints>(generator),
        ("", "Secret") => add::<core::v1::Secret>(generator),
        ("", "Event") => add::<core::v1::Event>(generator),
        ("", "ConfigMap") => add::<core::v1::ConfigMap>(generator),
        ("apps", "Deployment") => add::<apps::v1::Deployment>(generator),
        ("apps", "ReplicaSet") => add::<apps::v1::ReplicaSet>(generator),
        ("coordination.k8s.io", "Lease") => add::<coordination::v1::Lease>(generator),
        ("rbac.authorization.k8s.io", "Role") => add::<rbac::v1::Role>(generator),
        ("rbac.authorization.k8s.io", "RoleBinding") => add::<rbac::v1::RoleBinding>(generator),
        ("rbac.authorization.k8s.io", "ClusterRole") => add::<rbac::v1::ClusterRole>(generator),
        ("rbac.authorization.k8s.io", "ClusterRoleBinding") => add::<rbac::v1::ClusterRoleBinding>(generator),
        ("authentication.k8s.io", "SelfSubjectReview") => add::<authentication::v1::SelfSubjectReview>(generator),
        ("authorization.k8s.io", "SelfSubjectAccessReview") => {
            add::<authorization::v1::SelfSubjectAccessReview>(generator)
        }
        _ => None,
    }
}

/// `components.schemas` of a group version's document: the schemas of
/// `kinds` and of every type they refer to.
pub fn components(kinds: &[&Kind]) -> Map<String, Value> {
    let mut generator = SchemaSettings::openapi3().into_generator();
    let served: Vec<(String, &Kind)> =
        kinds.iter().filter_map(|kind| register(&mut generator, kind).map(|name| (name, *kind))).collect();
    let mut schemas = generator.take_definitions(true);
    for (name, kind) in served {
        if let Some(schema) = schemas.get_mut(&name).and_then(Value::as_object_mut) {
            let gvk = json!([{ "group": kind.group, "version": kind.version, "kind": kind.kind }]);
            schema.insert("x-kubernetes-group-version-kind".into(), gvk);
        }
    }
    schemas
}
