//! Every REST operation is on gRPC and GraphQL too, or says why it is not:
//! `openapi/surfaces.toml` maps each operationId of the OpenAPI document to
//! its gRPC method and GraphQL field, and this test checks the mapping
//! against what the server itself announces (gRPC reflection, GraphQL
//! introspection), in the manner of omicron's `unauthorized_coverage`.

use std::collections::{BTreeMap, BTreeSet};

use prost::Message as _;
use serde::Deserialize;
use serde_json::{Value, json};
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use tonic::transport::Channel;
use tonic_reflection::pb::v1::ServerReflectionRequest;
use tonic_reflection::pb::v1::server_reflection_client::ServerReflectionClient;
use tonic_reflection::pb::v1::server_reflection_request::MessageRequest;
use tonic_reflection::pb::v1::server_reflection_response::MessageResponse;

use crate::common::TestApp;

/// Where an operation is besides REST.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    grpc: Option<String>,
    graphql: Option<String>,
    rest_only: Option<String>,
}

/// The only operations that may stay on REST alone: browser sign-up,
/// login and SSO flows, and the deploy-hook endpoint CI systems call.
const REST_ONLY: &[&str] = &[
    "account_create",
    "account_confirm",
    "email_verify",
    "session_create",
    "session_refresh",
    "session_delete",
    "password_reset_request",
    "password_reset_confirm",
    "device_authorization_create",
    "device_authorization_confirm",
    "device_authorization_deny",
    "device_token_create",
    "sso_login_start",
    "sso_login_finish",
    "sso_link_confirm",
    "sso_link_mail_confirm",
    "hook_delivery_create",
];

fn repository_file(path: &str) -> String {
    let path = format!("{}/../{path}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn operation_ids() -> BTreeSet<String> {
    let document: Value = serde_json::from_str(&repository_file("openapi/moke.json")).unwrap();
    let mut ids = BTreeSet::new();
    for item in document["paths"].as_object().unwrap().values() {
        for operation in item.as_object().unwrap().values() {
            if let Some(id) = operation["operationId"].as_str() {
                ids.insert(id.to_string());
            }
        }
    }
    ids
}

/// Every `package.Service/Method` the server's reflection announces.
async fn grpc_methods(t: &TestApp) -> BTreeSet<String> {
    let channel = Channel::from_shared(t.base.clone()).unwrap().connect().await.unwrap();
    let mut reflection = ServerReflectionClient::new(channel);
    let ask = |message| ServerReflectionRequest { host: String::new(), message_request: Some(message) };
    let answer = |response: Option<MessageResponse>| response.expect("a reflection answer");
    let mut stream = reflection
        .server_reflection_info(futures::stream::iter([ask(MessageRequest::ListServices(String::new()))]))
        .await
        .unwrap()
        .into_inner();
    let Some(MessageResponse::ListServicesResponse(list)) = stream.message().await.unwrap().unwrap().message_response
    else {
        panic!("reflection did not list the services");
    };
    let services: Vec<String> = list.service.into_iter().map(|s| s.name).filter(|s| s.starts_with("moke.")).collect();
    let requests = services.iter().map(|s| ask(MessageRequest::FileContainingSymbol(s.clone()))).collect::<Vec<_>>();
    let mut stream = reflection.server_reflection_info(futures::stream::iter(requests)).await.unwrap().into_inner();
    let mut methods = BTreeSet::new();
    while let Some(reply) = stream.message().await.unwrap() {
        let MessageResponse::FileDescriptorResponse(files) = answer(reply.message_response) else {
            panic!("reflection did not describe a service");
        };
        for bytes in files.file_descriptor_proto {
            let file = prost_types::FileDescriptorProto::decode(bytes.as_slice()).unwrap();
            for service in &file.service {
                for method in &service.method {
                    methods.insert(format!("{}.{}/{}", file.package(), service.name(), method.name()));
                }
            }
        }
    }
    methods
}

/// Every `Type.field` of the GraphQL schema, as introspection shows it.
async fn graphql_fields(t: &TestApp) -> BTreeSet<String> {
    let tenant = t.tenant("surfaces").await;
    let (status, body) = t
        .send(
            t.request(reqwest::Method::POST, "/graphql", &tenant.token)
                .json(&json!({ "query": "{ __schema { types { name fields { name } } } }" })),
        )
        .await;
    assert_eq!(status, reqwest::StatusCode::OK, "{body}");
    let mut fields = BTreeSet::new();
    for object in body["data"]["__schema"]["types"].as_array().expect("introspection answers") {
        for field in object["fields"].as_array().into_iter().flatten() {
            fields.insert(format!("{}.{}", object["name"].as_str().unwrap(), field["name"].as_str().unwrap()));
        }
    }
    fields
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn every_operation_is_on_every_surface_or_says_why_not(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let mapping: BTreeMap<String, Entry> = toml::from_str(&repository_file("openapi/surfaces.toml")).unwrap();
    let operations = operation_ids();
    let methods = grpc_methods(&t).await;
    let fields = graphql_fields(&t).await;

    let mut problems = Vec::new();
    for id in &operations {
        let Some(entry) = mapping.get(id) else {
            problems.push(format!("{id}: no entry in openapi/surfaces.toml"));
            continue;
        };
        match (&entry.rest_only, &entry.grpc, &entry.graphql) {
            (Some(reason), None, None) => {
                if !REST_ONLY.contains(&id.as_str()) {
                    problems.push(format!("{id}: only browser sign-in flows and the hook endpoint may stay REST-only"));
                }
                if reason.trim().len() < 10 {
                    problems.push(format!("{id}: rest_only needs a reason"));
                }
            }
            (None, Some(method), Some(field)) => {
                if !methods.contains(method) {
                    problems.push(format!("{id}: the server has no gRPC method {method}"));
                }
                if !fields.contains(field) {
                    problems.push(format!("{id}: the schema has no field {field}"));
                }
            }
            _ => problems.push(format!("{id}: give either rest_only, or both grpc and graphql")),
        }
    }
    for id in mapping.keys().filter(|id| !operations.contains(*id)) {
        problems.push(format!("{id}: not an operation of openapi/moke.json"));
    }
    assert!(problems.is_empty(), "the surfaces mapping is wrong:\n{}", problems.join("\n"));
}
