//! Spec history of clusters and node pools: a revision per generation, who
//! made it and how, and the diff between two, on REST, GraphQL and gRPC.

use moke_api::model::{ClusterRevisionView, NodePoolRevisionView, OperationView, Page, SpecDiff};
use moke_proto::v1::DiffNodePoolRevisionsRequest;
use moke_proto::v1::node_pool_service_client::NodePoolServiceClient;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};

use crate::common::TestApp;

/// `(path, before, after)` of each change of a diff.
fn changes(diff: &SpecDiff) -> Vec<(&str, Option<&Value>, Option<&Value>)> {
    diff.changes.iter().map(|c| (c.path.as_str(), c.before.as_ref(), c.after.as_ref())).collect()
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn every_spec_change_leaves_a_revision_to_compare(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let tenant = t.tenant("acme").await;
    let owner = t.client(&tenant);
    let project = owner.create_project("web").await.id.to_string();
    let (cluster, created) =
        owner.create_cluster(&project, "prod", json!({ "region": "eu-central-1", "kubernetes_version": "1.32" })).await;
    let path = format!("/v1/projects/{project}/clusters/{}", cluster.id);

    // Two spec changes make two revisions; a label change makes none.
    let protect: OperationView =
        owner.patch(&path, json!({ "spec": { "deletion_protection": true } })).await.expect(StatusCode::ACCEPTED);
    let _: OperationView =
        owner.patch(&path, json!({ "labels": { "team": "web" } })).await.expect(StatusCode::ACCEPTED);
    let upgrade: OperationView = owner
        .post(&format!("{path}/upgrade"), json!({ "kubernetes_version": "1.33" }))
        .await
        .expect(StatusCode::ACCEPTED);

    let revisions: Page<ClusterRevisionView> = owner.get(&format!("{path}/revisions")).await.expect(StatusCode::OK);
    let summary: Vec<_> = revisions
        .items
        .iter()
        .map(|r| (r.generation, r.cause.as_deref(), r.operation_id.map(|id| id.to_string())))
        .collect();
    assert_eq!(
        summary,
        [
            (3, Some("cluster_upgrade"), Some(upgrade.id.to_string())),
            (2, Some("cluster_update"), Some(protect.id.to_string())),
            (1, Some("cluster_create"), Some(created.id.to_string())),
        ],
        "newest first, each with the Operation that made it"
    );
    for revision in &revisions.items {
        // (the tenant's token is a service account's)
        assert!(revision.created_by.as_deref().is_some_and(|by| by.starts_with("sa_")), "{revision:?}");
    }
    assert_eq!(revisions.items[0].spec.kubernetes_version, "1.33");
    assert_eq!(revisions.items[2].spec.kubernetes_version, "1.32");
    assert!(!revisions.items[2].spec.deletion_protection);
    owner.walk_pages(&format!("{path}/revisions")).await;

    // What changed at a generation: against the one before, or any other.
    let diff: SpecDiff = owner.get(&format!("{path}/revisions/3/diff")).await.expect(StatusCode::OK);
    assert_eq!((diff.from, diff.to), (2, 3));
    assert_eq!(changes(&diff), [("/kubernetes_version", Some(&json!("1.32")), Some(&json!("1.33")))]);
    let diff: SpecDiff = owner.get(&format!("{path}/revisions/3/diff?from=1")).await.expect(StatusCode::OK);
    assert_eq!(
        changes(&diff),
        [
            ("/deletion_protection", Some(&json!(false)), Some(&json!(true))),
            ("/kubernetes_version", Some(&json!("1.32")), Some(&json!("1.33"))),
        ]
    );
    // The first revision is compared with nothing: everything was set then.
    let diff: SpecDiff = owner.get(&format!("{path}/revisions/1/diff")).await.expect(StatusCode::OK);
    assert_eq!(diff.from, 0);
    assert!(diff.changes.iter().all(|c| c.before.is_none()), "{diff:?}");
    assert!(diff.changes.iter().any(|c| c.path == "/region" && c.after == Some(json!("eu-central-1"))), "{diff:?}");
    // Generations the cluster never had are not found.
    for missing in ["4/diff", "0/diff", "two/diff", "3/diff?from=9"] {
        owner
            .get::<SpecDiff>(&format!("{path}/revisions/{missing}"))
            .await
            .refused_with(StatusCode::NOT_FOUND, "not_found");
    }

    // A node pool's: a scale is one revision, named by its path.
    let (pool, _) = owner.create_node_pool(&project, &cluster.id.to_string(), "workers", 1).await;
    let pool_path = format!("{path}/node-pools/{}", pool.id);
    let scale: OperationView =
        owner.patch(&pool_path, json!({ "spec": { "count": 2 } })).await.expect(StatusCode::ACCEPTED);
    let pool_revisions: Page<NodePoolRevisionView> =
        owner.get(&format!("{pool_path}/revisions")).await.expect(StatusCode::OK);
    let generations: Vec<_> = pool_revisions.items.iter().map(|r| (r.generation, r.spec.count)).collect();
    assert_eq!(generations, [(2, 2), (1, 1)]);
    assert_eq!(pool_revisions.items[0].operation_id, Some(scale.id));
    let diff: SpecDiff = owner.get(&format!("{pool_path}/revisions/2/diff")).await.expect(StatusCode::OK);
    assert_eq!(changes(&diff), [("/count", Some(&json!(1)), Some(&json!(2)))]);

    // The same over GraphQL and gRPC.
    let (status, answer) = t
        .send(t.request(Method::POST, "/graphql", &tenant.token).json(&json!({
            "query": "query($p: String!, $c: String!) {
                clusterRevisions(project: $p, cluster: $c, first: 1) { edges { node { generation cause } } }
                clusterRevisionDiff(project: $p, cluster: $c, generation: 3) { from to changes { path before after } } }",
            "variables": { "p": project, "c": cluster.id.to_string() },
        })))
        .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(
        answer["data"]["clusterRevisions"]["edges"][0]["node"],
        json!({ "generation": 3, "cause": "cluster_upgrade" })
    );
    assert_eq!(
        answer["data"]["clusterRevisionDiff"],
        json!({ "from": 2, "to": 3, "changes": [{ "path": "/kubernetes_version", "before": "1.32", "after": "1.33" }] })
    );
    let channel = tonic::transport::Channel::from_shared(t.base.clone()).unwrap().connect().await.unwrap();
    let mut pools = NodePoolServiceClient::new(channel);
    let mut request = tonic::Request::new(DiffNodePoolRevisionsRequest {
        project: project.clone(),
        cluster: cluster.id.to_string(),
        node_pool: "workers".into(),
        generation: 2,
        from_generation: 0,
    });
    request.metadata_mut().insert("authorization", format!("Bearer {}", tenant.token).parse().unwrap());
    let diff = pools.diff_node_pool_revisions(request).await.unwrap().into_inner();
    assert_eq!((diff.from_generation, diff.to_generation), (1, 2));
    assert_eq!(diff.changes.len(), 1);
    assert_eq!(
        (diff.changes[0].path.as_str(), diff.changes[0].before_json.as_str(), diff.changes[0].after_json.as_str()),
        ("/count", "1", "2")
    );

    // Another organization sees none of it.
    let other = t.tenant("globex").await;
    let stranger = t.client(&other);
    stranger.get::<Value>(&format!("{path}/revisions")).await.refused_with(StatusCode::NOT_FOUND, "not_found");
}
