//! The checked-in API descriptions (OpenAPI, GraphQL SDL) must match what
//! the code generates.

#[test]
fn checked_in_openapi_matches_the_code() {
    let generated = moke_api::http::openapi().to_pretty_json().unwrap();
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../openapi/moke.json");
    let checked_in = std::fs::read_to_string(path).unwrap_or_default();
    if checked_in.trim_end() != generated.trim_end() {
        panic!("openapi/moke.json is out of date with the code; regenerate it with: cargo xtask schemas");
    }
}

#[test]
fn operation_ids_follow_resource_action() {
    let spec = serde_json::to_value(moke_api::http::openapi()).unwrap();
    // Standard methods, and the few custom ones (AIP-136) the auth flows, deployments and prices need.
    let allowed = [
        "list", "create", "view", "update", "delete", "refresh", "verify", "request", "confirm", "exchange", "start",
        "finish", "accept", "revoke", "rotate", "scale", "pause", "resume", "restart", "rollback", "export", "deny",
        "estimate", "upgrade", "recycle", "restore", "diff", "cancel", "approve", "reject",
    ];
    for (path, item) in spec["paths"].as_object().unwrap() {
        for (method, operation) in item.as_object().unwrap() {
            let id = operation["operationId"].as_str().unwrap_or_else(|| panic!("{method} {path} has no id"));
            let action = id.rsplit('_').next().unwrap();
            assert!(allowed.contains(&action), "{method} {path}: operation id {id} is not resource_action");
        }
    }
    assert_eq!(spec["openapi"], "3.1.0");
}

/// Generators stop at a reference to a schema the document does not hold.
#[test]
fn every_schema_reference_resolves() {
    let spec = serde_json::to_value(moke_api::http::openapi()).unwrap();
    let text = spec.to_string();
    let schemas = spec["components"]["schemas"].as_object().unwrap();
    for reference in text.split("\"#/components/schemas/").skip(1) {
        let name = reference.split('"').next().unwrap();
        assert!(schemas.contains_key(name), "#/components/schemas/{name} is referenced but not defined");
    }
}

#[test]
fn checked_in_graphql_schema_matches_the_code() {
    let generated = moke_api::graphql::sdl();
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../graphql/schema.graphql");
    let checked_in = std::fs::read_to_string(path).unwrap_or_default();
    if checked_in.trim_end() != generated.trim_end() {
        panic!("graphql/schema.graphql is out of date with the code; regenerate it with: cargo xtask schemas");
    }
}
