//! The gRPC surface over a real HTTP/2 connection on the REST port: the same
//! scenario as over REST must leave the same state, the same errors (as gRPC
//! codes with google.rpc details) and the same audit trail.

use moke_proto::v1::cluster_service_client::ClusterServiceClient;
use moke_proto::v1::node_pool_service_client::NodePoolServiceClient;
use moke_proto::v1::operation_service_client::OperationServiceClient;
use moke_proto::v1::project_service_client::ProjectServiceClient;
use moke_proto::v1::*;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use tonic::Code;
use tonic::metadata::MetadataValue;
use tonic::service::Interceptor;
use tonic::transport::Channel;
use tonic_types::StatusExt;

use crate::common::{Tenant, TestApp, bad_fields};

/// Adds the bearer token to every call.
#[derive(Clone)]
pub struct Bearer(pub MetadataValue<tonic::metadata::Ascii>);

impl Interceptor for Bearer {
    fn call(&mut self, mut request: tonic::Request<()>) -> Result<tonic::Request<()>, tonic::Status> {
        request.metadata_mut().insert("authorization", self.0.clone());
        Ok(request)
    }
}

type Authed = tonic::service::interceptor::InterceptedService<Channel, Bearer>;

struct Clients {
    projects: ProjectServiceClient<Authed>,
    clusters: ClusterServiceClient<Authed>,
    pools: NodePoolServiceClient<Authed>,
    operations: OperationServiceClient<Authed>,
}

async fn clients(t: &TestApp, tenant: &Tenant) -> Clients {
    let channel = Channel::from_shared(t.base.clone()).unwrap().connect().await.unwrap();
    let bearer = Bearer(format!("Bearer {}", tenant.token).parse().unwrap());
    Clients {
        projects: ProjectServiceClient::with_interceptor(channel.clone(), bearer.clone()),
        clusters: ClusterServiceClient::with_interceptor(channel.clone(), bearer.clone()),
        pools: NodePoolServiceClient::with_interceptor(channel.clone(), bearer.clone()),
        operations: OperationServiceClient::with_interceptor(channel, bearer),
    }
}

/// What an Operation is doing: its metadata, an `OperationMetadata` packed
/// as `google.longrunning.Operation` packs it.
pub fn metadata(op: &Operation) -> OperationMetadata {
    let any = op.metadata.as_ref().expect("every Operation has metadata");
    assert_eq!(any.type_url, "type.googleapis.com/moke.v1.OperationMetadata");
    prost::Message::decode(any.value.as_slice()).unwrap()
}

pub fn reason(status: &tonic::Status) -> String {
    status.get_error_details().error_info().map(|i| i.reason.clone()).unwrap_or_default()
}

pub fn violations(status: &tonic::Status) -> Vec<String> {
    status
        .get_details_bad_request()
        .map(|b| b.field_violations.into_iter().map(|v| v.field).collect())
        .unwrap_or_default()
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn the_rest_scenario_over_grpc_ends_in_the_same_state(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let rest = t.tenant("rest").await;
    let grpc = t.tenant("grpc").await;
    let mut g = clients(&t, &grpc).await;

    let rest_run = crate::scenario::over_rest(&t, &rest).await;
    let (project, rest_op, stale, invalid) =
        (&rest_run.project, &rest_run.first_op, &rest_run.stale, &rest_run.invalid);

    // --- gRPC
    let created = g
        .projects
        .create_project(CreateProjectRequest { org: grpc.org.clone(), name: "web".into(), ..Default::default() })
        .await
        .unwrap()
        .into_inner();
    let create = CreateClusterRequest {
        project: created.id.clone(),
        name: "prod".into(),
        region: Some("eu-central-1".into()),
        kubernetes_version: Some("1.32".into()),
        control_plane_replicas: Some(1),
        request_id: "same".into(),
        ..Default::default()
    };
    let op = g.clusters.create_cluster(create.clone()).await.unwrap().into_inner();
    let meta = metadata(&op);
    assert_eq!((meta.kind.as_str(), meta.status.as_str(), op.done), ("cluster_create", "pending", false));
    assert_eq!((op.name.as_str(), op.result.is_none()), (meta.id.as_str(), true), "no result before it is done");
    let retry = g.clusters.create_cluster(create).await.unwrap().into_inner();
    assert_eq!(retry.name, op.name, "request_id makes the retry idempotent");
    g.clusters
        .create_cluster(CreateClusterRequest {
            project: "web".into(),
            name: "dev".into(),
            region: Some("eu-central-1".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    g.pools
        .create_node_pool(CreateNodePoolRequest {
            project: "web".into(),
            cluster: "prod".into(),
            name: "workers".into(),
            spec: Some(NodePoolSpec { machine_type: "bm.small".into(), count: 2, ..Default::default() }),
            ..Default::default()
        })
        .await
        .unwrap();
    let first = g
        .clusters
        .list_clusters(ListClustersRequest { project: "web".into(), page_size: 1, ..Default::default() })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(first.clusters.len(), 1);
    let second = g
        .clusters
        .list_clusters(ListClustersRequest { project: "web".into(), page_size: 1, page_token: first.next_page_token })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(second.clusters[0].name, "dev");
    let prod_ops = g
        .operations
        .list_operations(ListOperationsRequest { project: "web".into(), cluster: "prod".into(), ..Default::default() })
        .await
        .unwrap()
        .into_inner();
    let kinds: Vec<String> = prod_ops.operations.iter().map(|o| metadata(o).kind).collect();
    assert_eq!(kinds, ["node_pool_create", "cluster_create"], "the pool's work too, newest first");
    let priced = g
        .clusters
        .estimate_cluster(EstimateClusterRequest {
            project: "web".into(),
            cluster: Some(CreateClusterRequest {
                name: "priced".into(),
                region: Some("eu-central-1".into()),
                control_plane_replicas: Some(1),
                ..Default::default()
            }),
            node_pools: vec![CreateNodePoolRequest {
                name: "a".into(),
                spec: Some(NodePoolSpec { machine_type: "bm.small".into(), count: 2, ..Default::default() }),
                ..Default::default()
            }],
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!((priced.currency.as_str(), priced.monthly_total.as_str()), ("USD", "240.04"));
    let unpriced = g
        .clusters
        .estimate_cluster(EstimateClusterRequest { project: "web".into(), ..Default::default() })
        .await
        .unwrap_err();
    assert_eq!(unpriced.code(), Code::InvalidArgument);
    assert!(violations(&unpriced).contains(&"cluster.spec.region".to_string()), "{:?}", violations(&unpriced));
    let before = g
        .clusters
        .get_cluster(GetClusterRequest { project: "web".into(), cluster: "prod".into() })
        .await
        .unwrap()
        .into_inner();
    let relabel = |etag: String, tier: &str| UpdateClusterRequest {
        project: "web".into(),
        cluster: "prod".into(),
        labels: [("tier".to_string(), tier.to_string())].into(),
        update_mask: Some(prost_types::FieldMask { paths: vec!["labels".into()] }),
        etag,
        ..Default::default()
    };
    g.clusters.update_cluster(relabel(String::new(), "gold")).await.unwrap();
    let stale_grpc = g.clusters.update_cluster(relabel(before.etag.clone(), "lead")).await.unwrap_err();
    assert_eq!(stale_grpc.code(), Code::FailedPrecondition);
    assert_eq!(reason(&stale_grpc), stale["code"].as_str().unwrap());
    let invalid_grpc = g
        .clusters
        .create_cluster(CreateClusterRequest {
            project: "web".into(),
            name: "bad".into(),
            region: Some("mars-1".into()),
            control_plane_replicas: Some(2),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(invalid_grpc.code(), Code::InvalidArgument);
    assert_eq!(reason(&invalid_grpc), "invalid_request");
    assert_eq!(violations(&invalid_grpc), ["spec.region", "spec.control_plane_replicas"]);
    assert_eq!(bad_fields(invalid), ["spec.region", "spec.control_plane.replicas"]);
    g.pools
        .delete_node_pool(DeleteNodePoolRequest {
            project: "web".into(),
            cluster: "prod".into(),
            node_pool: "workers".into(),
            ..Default::default()
        })
        .await
        .unwrap();

    // A cross-tenant read is NOT_FOUND, exactly like REST's 404.
    let foreign = g
        .clusters
        .get_cluster(GetClusterRequest { project: project.to_string(), cluster: "prod".into() })
        .await
        .unwrap_err();
    assert_eq!((foreign.code(), reason(&foreign)), (Code::NotFound, "not_found".to_string()));
    let foreign_op = g
        .operations
        .get_operation(GetOperationRequest { operation: rest_op["id"].as_str().unwrap().into() })
        .await
        .unwrap_err();
    assert_eq!(foreign_op.code(), Code::NotFound);
    let no_token = ClusterServiceClient::connect(t.base.clone())
        .await
        .unwrap()
        .get_cluster(GetClusterRequest { project: "web".into(), cluster: "prod".into() })
        .await
        .unwrap_err();
    assert_eq!(no_token.code(), Code::Unauthenticated);

    crate::scenario::assert_same_outcome(&t, &rest, &grpc).await;

    // Waiting on an operation works over gRPC too.
    let waited = g
        .operations
        .wait_operation(WaitOperationRequest {
            operation: op.name,
            timeout: Some(prost_types::Duration { seconds: 1, nanos: 0 }),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(metadata(&waited).status, "pending");
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn the_address_limit_answers_as_grpc_does(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start_with(options, connect, |c| {
        (c.rate_limits.per_ip_per_second, c.rate_limits.per_ip_burst) = (1, 3);
    })
    .await;
    let acme = t.tenant("acme").await;
    let mut projects = clients(&t, &acme).await.projects;
    let mut refused = None;
    for _ in 0..10 {
        let listed = projects.list_projects(ListProjectsRequest { org: acme.org.clone(), ..Default::default() }).await;
        if let Err(status) = listed {
            refused = Some(status);
            break;
        }
    }
    // RESOURCE_EXHAUSTED with when to retry, not an HTTP 429 (which a gRPC
    // client reads as UNAVAILABLE, and retries at once).
    let status = refused.expect("the address limit refuses the fourth call in a second");
    assert_eq!(status.code(), Code::ResourceExhausted, "{status:?}");
    assert_eq!(reason(&status), "rate_limited");
    assert!(status.get_details_retry_info().is_some_and(|retry| retry.retry_delay.is_some()), "{status:?}");
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn a_violation_names_the_field_of_the_grpc_request(options: PgPoolOptions, connect: PgConnectOptions) {
    use moke_proto::v1::token_service_client::TokenServiceClient;
    let t = TestApp::start(options, connect).await;
    let acme = t.tenant("acme").await;
    let channel = Channel::from_shared(t.base.clone()).unwrap().connect().await.unwrap();
    let bearer = Bearer(format!("Bearer {}", acme.token).parse().unwrap());
    let mut tokens = TokenServiceClient::with_interceptor(channel, bearer);
    // REST's `expires_in_seconds` is this request's `expires_in`.
    let short = CreateTokenRequest {
        org: acme.org.clone(),
        name: "ci".into(),
        role: "viewer".into(),
        expires_in: Some(prost_types::Duration { seconds: 10, nanos: 0 }),
        ..Default::default()
    };
    let refused = tokens.create_token(short).await.unwrap_err();
    assert_eq!(refused.code(), Code::InvalidArgument);
    assert_eq!(violations(&refused), ["expires_in"]);
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn an_unknown_method_is_unimplemented(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let channel = Channel::from_shared(t.base.clone()).unwrap().connect().await.unwrap();
    let mut grpc = tonic::client::Grpc::new(channel);
    grpc.ready().await.unwrap();
    let path = http::uri::PathAndQuery::from_static("/moke.v1.NoSuchService/Get");
    let codec = tonic_prost::ProstCodec::<(), ()>::default();
    let answer = grpc.unary(tonic::Request::new(()), path, codec).await.unwrap_err();
    assert_eq!(answer.code(), Code::Unimplemented, "{answer:?}");
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn reflection_and_health_work_out_of_the_box(options: PgPoolOptions, connect: PgConnectOptions) {
    use tonic_health::pb::health_check_response::ServingStatus;
    use tonic_health::pb::{HealthCheckRequest, health_client::HealthClient};
    use tonic_reflection::pb::v1::ServerReflectionRequest;
    use tonic_reflection::pb::v1::server_reflection_client::ServerReflectionClient;
    use tonic_reflection::pb::v1::server_reflection_request::MessageRequest;
    use tonic_reflection::pb::v1::server_reflection_response::MessageResponse;

    let t = TestApp::start(options, connect).await;
    let channel = Channel::from_shared(t.base.clone()).unwrap().connect().await.unwrap();

    let mut health = HealthClient::new(channel.clone());
    let mut serving = None;
    for _ in 0..50 {
        let answer = health
            .check(HealthCheckRequest { service: "moke.v1.ClusterService".into() })
            .await
            .map(|r| r.into_inner().status);
        if answer.is_ok_and(|status| status == ServingStatus::Serving as i32) {
            serving = Some(());
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert!(serving.is_some(), "ClusterService reports SERVING");

    let mut reflection = ServerReflectionClient::new(channel);
    let request = ServerReflectionRequest {
        host: String::new(),
        message_request: Some(MessageRequest::ListServices(String::new())),
    };
    let mut answers = reflection.server_reflection_info(tokio_stream_once(request)).await.unwrap().into_inner();
    let answer = answers.message().await.unwrap().unwrap();
    let Some(MessageResponse::ListServicesResponse(list)) = answer.message_response else {
        panic!("unexpected reflection answer");
    };
    let names: Vec<String> = list.service.into_iter().map(|s| s.name).collect();
    for expected in ["moke.v1.ClusterService", "moke.v1.ProjectService", "grpc.health.v1.Health"] {
        assert!(names.contains(&expected.to_string()), "{expected} missing from {names:?}");
    }
    // Only the public API is described: not the gateway ↔ region messages.
    let request = ServerReflectionRequest {
        host: String::new(),
        message_request: Some(MessageRequest::FileContainingSymbol("moke.region.v1.Command".into())),
    };
    let mut answers = reflection.server_reflection_info(tokio_stream_once(request)).await.unwrap().into_inner();
    match answers.message().await {
        Err(status) => assert_eq!(status.code(), tonic::Code::NotFound, "{status:?}"),
        Ok(answer) => assert!(
            matches!(
                answer.as_ref().and_then(|a| a.message_response.as_ref()),
                Some(MessageResponse::ErrorResponse(_))
            ),
            "the region messages are not described: {answer:?}"
        ),
    }
}

/// A request stream of one message.
fn tokio_stream_once<T: Send + 'static>(item: T) -> impl futures::Stream<Item = T> + Send + 'static {
    futures::stream::iter([item])
}
