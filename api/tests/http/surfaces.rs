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

/// The surfaces a parity scenario runs over.
#[derive(Clone, Copy, Debug)]
enum Surface {
    Rest,
    Grpc,
    Graphql,
}

/// IAM on every surface: a service account made (a bad name refused first,
/// by the same field), given a token that works, then deleted, after which
/// the token is refused. Each surface leaves the same state and writes the
/// same audit trail.
#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn a_service_account_lives_and_dies_alike_on_every_surface(options: PgPoolOptions, connect: PgConnectOptions) {
    use moke_api::model::{AuditEventView, Page, ServiceAccountView, TokenCreated};
    use moke_proto::v1::service_account_service_client::ServiceAccountServiceClient;
    use moke_proto::v1::{CreateServiceAccountRequest, CreateServiceAccountTokenRequest, DeleteServiceAccountRequest};

    let t = TestApp::start(options, connect).await;
    let acme = t.tenant("acme").await;
    let owner = t.client(&acme);
    let channel = Channel::from_shared(t.base.clone()).unwrap().connect().await.unwrap();
    let bearer = crate::grpc::Bearer(format!("Bearer {}", acme.token).parse().unwrap());
    let mut grpc = ServiceAccountServiceClient::with_interceptor(channel, bearer);
    let graphql = async |query: &str, variables: Value| {
        let request = t.request(reqwest::Method::POST, "/graphql", &acme.token);
        let (status, body) = t.send(request.json(&json!({ "query": query, "variables": variables }))).await;
        assert_eq!(status, reqwest::StatusCode::OK, "{body}");
        body
    };

    let started = chrono::Utc::now();
    for surface in [Surface::Rest, Surface::Grpc, Surface::Graphql] {
        let name = format!("ci-{surface:?}").to_lowercase();
        // (the refused field, the account's id, the token's secret)
        let (refused, account, secret) = match surface {
            Surface::Rest => {
                let bad = owner
                    .post::<Value>(
                        &owner.org_path("/service-accounts"),
                        json!({ "name": "Bad Name", "role": "viewer" }),
                    )
                    .await
                    .refused(reqwest::StatusCode::BAD_REQUEST);
                let made: ServiceAccountView = owner
                    .post(&owner.org_path("/service-accounts"), json!({ "name": name, "role": "viewer" }))
                    .await
                    .expect(reqwest::StatusCode::CREATED);
                let token: TokenCreated = owner
                    .post(&owner.org_path(&format!("/service-accounts/{}/tokens", made.id)), json!({ "name": "ci" }))
                    .await
                    .expect(reqwest::StatusCode::CREATED);
                (bad.fields().join(","), made.id.to_string(), token.token)
            }
            Surface::Grpc => {
                let create = |name: &str| CreateServiceAccountRequest {
                    org: acme.org.clone(),
                    name: name.into(),
                    role: "viewer".into(),
                    ..Default::default()
                };
                let bad = grpc.create_service_account(create("Bad Name")).await.unwrap_err();
                assert_eq!(bad.code(), tonic::Code::InvalidArgument);
                let made = grpc.create_service_account(create(&name)).await.unwrap().into_inner();
                let token = grpc
                    .create_service_account_token(CreateServiceAccountTokenRequest {
                        org: acme.org.clone(),
                        service_account: made.id.clone(),
                        name: "ci".into(),
                        ..Default::default()
                    })
                    .await
                    .unwrap()
                    .into_inner();
                (crate::grpc::violations(&bad).join(","), made.id, token.secret)
            }
            Surface::Graphql => {
                let create = "mutation($org: ID!, $name: String!) { createServiceAccount(org: $org, \
                              input: { name: $name, role: \"viewer\" }) { id } }";
                let bad = graphql(create, json!({ "org": acme.org, "name": "Bad Name" })).await;
                let fields: Vec<&str> = bad["errors"][0]["extensions"]["fields"]
                    .as_array()
                    .map(|f| f.iter().filter_map(|f| f["field"].as_str()).collect())
                    .unwrap_or_default();
                let made = graphql(create, json!({ "org": acme.org, "name": name })).await;
                let id = made["data"]["createServiceAccount"]["id"].as_str().expect("made").to_string();
                let token = graphql(
                    "mutation($org: ID!, $sa: ID!) { createServiceAccountToken(org: $org, serviceAccount: $sa, \
                     input: { name: \"ci\" }) { secret } }",
                    json!({ "org": acme.org, "sa": id }),
                )
                .await;
                let secret = token["data"]["createServiceAccountToken"]["secret"].as_str().expect("a secret");
                (fields.join(","), id, secret.to_string())
            }
        };
        assert_eq!(refused, "name", "{surface:?} names the bad field");
        let robot = owner.with_token(&secret);
        robot.get::<Value>("/v1/me").await.expect(reqwest::StatusCode::OK);
        match surface {
            Surface::Rest => {
                owner
                    .delete::<Value>(&owner.org_path(&format!("/service-accounts/{account}")))
                    .await
                    .expect(reqwest::StatusCode::NO_CONTENT);
            }
            Surface::Grpc => {
                let delete = DeleteServiceAccountRequest { org: acme.org.clone(), service_account: account.clone() };
                grpc.delete_service_account(delete).await.unwrap();
            }
            Surface::Graphql => {
                let deleted = graphql(
                    "mutation($org: ID!, $sa: ID!) { deleteServiceAccount(org: $org, serviceAccount: $sa) }",
                    json!({ "org": acme.org, "sa": account }),
                )
                .await;
                assert_eq!(deleted["data"]["deleteServiceAccount"], json!(true), "{deleted}");
            }
        }
        robot.get::<Value>("/v1/me").await.refused(reqwest::StatusCode::UNAUTHORIZED);
    }

    // The same state: none of the three accounts is left.
    let left: Page<ServiceAccountView> =
        owner.get(&owner.org_path("/service-accounts")).await.expect(reqwest::StatusCode::OK);
    assert!(left.items.iter().all(|a| !a.name.starts_with("ci-")), "{left:?}");
    // The same audit trail, surface after surface.
    let events: Page<AuditEventView> =
        owner.get(&owner.org_path("/audit-events?limit=500")).await.expect(reqwest::StatusCode::OK);
    let trail: Vec<&str> = events
        .items
        .iter()
        .filter(|e| e.occurred_at >= started)
        .map(|e| e.action.as_str())
        .filter(|a| a.starts_with("service_account") || a.starts_with("token"))
        .collect();
    assert_eq!(trail.len() % 3, 0, "{trail:?}");
    let each = trail.len() / 3;
    assert!(each >= 3, "made, token, deleted: {trail:?}");
    assert_eq!(trail[..each], trail[each..2 * each], "REST and gRPC: {trail:?}");
    assert_eq!(trail[..each], trail[2 * each..], "REST and GraphQL: {trail:?}");
}
