//! Dry runs (`?dry_run=true`, gRPC `moke-validate-only`, GraphQL `dryRun`):
//! each answers what would change and writes nothing (the rows of every
//! table stay as they were), and is refused exactly as the real call.

use std::collections::BTreeMap;

use moke_api::model::{ClusterView, DryRunView, OperationView};
use moke_proto::v1::cluster_service_client::ClusterServiceClient;
use moke_proto::v1::{ClusterSpec as PbClusterSpec, UpdateClusterRequest};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};

use moke_region::{AgentConfig, Transport};

use crate::common::{BackgroundAgent, TestApp, bad_fields, zones};

/// Rows of every table, by table.
async fn row_counts(t: &TestApp) -> BTreeMap<String, i64> {
    let tables: Vec<String> = sqlx::query_scalar(
        "SELECT table_name::text FROM information_schema.tables
         WHERE table_schema = 'public' AND table_type = 'BASE TABLE' AND table_name <> '_sqlx_migrations'",
    )
    .fetch_all(&t.pool)
    .await
    .unwrap();
    let mut counts = BTreeMap::new();
    for table in tables {
        counts.insert(table.clone(), t.count(&format!("\"{table}\"")).await);
    }
    counts
}

/// Tables the region's reports and the gateway's jobs write with nobody
/// asking (heartbeats, usage): a dry run is judged on every other table.
const WRITTEN_BY_THE_REGION: [&str; 6] =
    ["region_status", "region_health", "usage_samples", "usage_records", "usage_daily", "cluster_events"];

/// The tables whose rows differ between `before` and `after`, but those
/// [`WRITTEN_BY_THE_REGION`].
fn changed(before: &BTreeMap<String, i64>, after: &BTreeMap<String, i64>) -> Vec<String> {
    after
        .iter()
        .filter(|(table, rows)| before.get(*table) != Some(rows) && !WRITTEN_BY_THE_REGION.contains(&table.as_str()))
        .map(|(table, rows)| format!("{table}: {:?} -> {rows}", before.get(table)))
        .collect()
}

/// The simulated region, taking its commands as they come.
fn region(t: &TestApp) -> BackgroundAgent {
    BackgroundAgent::start(AgentConfig::new("eu-central-1", zones("eu-central-1")), Transport::Postgres(t.pool.clone()))
}

/// Project `web` and its cluster `prod` on Kubernetes 1.32, running.
async fn running_cluster(owner: &crate::common::Client<'_>) -> (String, ClusterView) {
    let project = owner.create_project("web").await.id.to_string();
    let (cluster, created) =
        owner.create_cluster(&project, "prod", json!({ "region": "eu-central-1", "kubernetes_version": "1.32" })).await;
    owner.succeeds(&created).await;
    (project, cluster)
}

fn dry(path: &str) -> String {
    format!("{path}?dry_run=true")
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn a_dry_run_answers_what_would_change_and_writes_nothing(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let _region = region(&t);
    let tenant = t.tenant("acme").await;
    let owner = t.client(&tenant);
    let (project, cluster) = running_cluster(&owner).await;
    let cluster_path = format!("/v1/projects/{project}/clusters/{}", cluster.id);
    let (pool, pool_op) = owner.create_node_pool(&project, &cluster.id.to_string(), "workers", 2).await;
    owner.succeeds(&pool_op).await;
    let pool_path = format!("{cluster_path}/node-pools/{}", pool.id);
    let before = row_counts(&t).await;

    // An upgrade: the version's diff and the blue-green steps.
    let upgrade: DryRunView = owner
        .post(&dry(&format!("{cluster_path}/upgrade")), json!({ "kubernetes_version": "1.33" }))
        .await
        .expect(StatusCode::OK);
    assert!(upgrade.dry_run);
    assert_eq!(upgrade.changes.iter().map(|c| c.action.as_str()).collect::<Vec<_>>(), ["cluster.upgrade"]);
    let [operation] = upgrade.operations.as_slice() else { panic!("one Operation: {upgrade:?}") };
    assert_eq!(operation.kind, "cluster_upgrade");
    assert_eq!(operation.target.id, cluster.id.to_string());
    assert_eq!(operation.target.generation, 2, "the generation it would bring about");
    let diff: Vec<_> = operation.diff.iter().map(|c| (c.path.as_str(), c.before.clone(), c.after.clone())).collect();
    assert_eq!(diff, [("/kubernetes_version", Some(json!("1.32")), Some(json!("1.33")))]);
    assert!(operation.steps.iter().any(|s| s.contains("traffic switched")), "{:?}", operation.steps);

    // A pool change: its diff and surge steps; labels alone: nothing reaches the region.
    let resize: DryRunView = owner
        .patch(&dry(&pool_path), json!({ "spec": { "machine_type": "bm.medium", "count": 3 } }))
        .await
        .expect(StatusCode::OK);
    let paths: Vec<&str> = resize.operations[0].diff.iter().map(|c| c.path.as_str()).collect();
    assert_eq!(paths, ["/count", "/machine_type"], "{resize:?}");
    assert!(resize.operations[0].steps.iter().any(|s| s.contains("drained")), "{resize:?}");
    let labels: DryRunView =
        owner.patch(&dry(&cluster_path), json!({ "labels": { "team": "web" } })).await.expect(StatusCode::OK);
    assert!(!labels.operations[0].needs_region && labels.operations[0].diff.is_empty(), "{labels:?}");

    // Creates: the resource they would make, and no secret.
    let new_cluster: DryRunView = owner
        .post(
            &dry(&format!("/v1/projects/{project}/clusters")),
            json!({ "name": "staging", "spec": { "region": "eu-central-1" } }),
        )
        .await
        .expect(StatusCode::OK);
    assert_eq!(new_cluster.operations[0].kind, "cluster_create");
    assert!(new_cluster.operations[0].diff.iter().any(|c| c.path == "/region"), "{new_cluster:?}");
    let token = owner
        .post::<Value>(&dry(&owner.org_path("/tokens")), json!({ "name": "ci", "role": "member" }))
        .await
        .expect(StatusCode::OK);
    // (an organization token is a service account's, made with it)
    let actions: Vec<&str> =
        token["changes"].as_array().unwrap().iter().map(|c| c["action"].as_str().unwrap()).collect();
    assert_eq!(actions, ["service_account.create", "token.create"], "{token}");
    assert!(!token.to_string().contains("moke_sat_"), "a dry run shows no secret: {token}");
    let _: DryRunView =
        owner.post(&dry(&owner.org_path("/projects")), json!({ "name": "data" })).await.expect(StatusCode::OK);
    let invite: DryRunView = owner
        .post(&dry(&owner.org_path("/invitations")), json!({ "email": "new@acme.test", "role": "member" }))
        .await
        .expect(StatusCode::OK);
    assert_eq!(invite.changes[0].action, "invitation.create", "{invite:?}");

    // A kubeconfig credential: Vault signs nothing.
    let credential: DryRunView =
        owner.call(Method::POST, &dry(&format!("{cluster_path}/credentials")), None).await.expect(StatusCode::OK);
    assert_eq!(credential.changes[0].action, "cluster.credentials_issue", "{credential:?}");

    // Deletes, and a workload.
    let delete: DryRunView = owner.delete(&dry(&pool_path)).await.expect(StatusCode::OK);
    assert_eq!(delete.operations[0].kind, "node_pool_delete");
    let deployment: DryRunView = owner
        .post(
            &dry(&format!("{cluster_path}/namespaces/default/deployments")),
            json!({ "name": "api", "spec": { "image": "nginx:1.27", "replicas": 2 } }),
        )
        .await
        .expect(StatusCode::OK);
    assert_eq!(deployment.operations[0].kind, "deployment_create", "{deployment:?}");
    let delete: DryRunView = owner.delete(&dry(&cluster_path)).await.expect(StatusCode::OK);
    assert_eq!(delete.changes[0].action, "cluster.delete", "{delete:?}");

    // An estimate writes nothing to begin with: an empty plan.
    let estimate: DryRunView = owner
        .post(
            &dry(&format!("/v1/projects/{project}/clusters/estimate")),
            json!({ "cluster": { "name": "x", "spec": { "region": "eu-central-1" } } }),
        )
        .await
        .expect(StatusCode::OK);
    assert!(estimate.changes.is_empty() && estimate.operations.is_empty(), "{estimate:?}");

    let after = row_counts(&t).await;
    assert_eq!(changed(&before, &after), Vec::<String>::new(), "dry runs wrote rows");
    let view: ClusterView = owner.get(&cluster_path).await.expect(StatusCode::OK);
    assert_eq!(view.spec.kubernetes_version, "1.32");
    assert!(view.labels.is_empty() && view.deletion_requested_at.is_none(), "{view:?}");

    // A dry run neither takes an idempotency key nor replays one: the real
    // call with the same key acts.
    let key = "upgrade-to-1.33";
    let planned = owner
        .send::<Value>(
            owner
                .request(Method::POST, &dry(&format!("{cluster_path}/upgrade")))
                .header("idempotency-key", key)
                .json(&json!({ "kubernetes_version": "1.33" })),
        )
        .await
        .expect(StatusCode::OK);
    assert_eq!(planned["dry_run"], true);
    let real: OperationView = owner
        .send(
            owner
                .request(Method::POST, &format!("{cluster_path}/upgrade"))
                .header("idempotency-key", key)
                .json(&json!({ "kubernetes_version": "1.33" })),
        )
        .await
        .expect(StatusCode::ACCEPTED);
    assert_eq!(real.kind, "cluster_upgrade");
    // Not the stored answer: judged afresh, against the spec now.
    owner
        .send::<Value>(
            owner
                .request(Method::POST, &dry(&format!("{cluster_path}/upgrade")))
                .header("idempotency-key", key)
                .json(&json!({ "kubernetes_version": "1.33" })),
        )
        .await
        .refused_with(StatusCode::CONFLICT, "already_at_version");

    // A credential limited to one project learns nothing of the others from
    // a plan: revoking it revokes its cluster access in every cluster of the
    // organization, which the plan counts and does not name.
    let data = owner.create_project("data").await.id.to_string();
    let (hidden, _) = owner.create_cluster(&data, "hidden", json!({ "region": "eu-central-1" })).await;
    let (_, session) = t.member(&tenant, "dev@acme.test", "admin").await;
    let person = owner.with_token(&session);
    let scoped: Value =
        person.post("/v1/me/tokens", json!({ "name": "web only", "project": "web" })).await.expect(StatusCode::CREATED);
    let scoped_client = owner.with_token(scoped["token"].as_str().unwrap());
    let token_id = scoped["id"].as_str().unwrap();
    let plan: Value = scoped_client.delete(&dry(&format!("/v1/me/tokens/{token_id}"))).await.expect(StatusCode::OK);
    let text = plan.to_string();
    assert!(!text.contains(&hidden.id.to_string()) && !text.contains("hidden"), "{text}");
    let revocations = plan["changes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["action"] == "cluster.principal_credentials_revoke")
        .unwrap_or_else(|| panic!("the revocation is counted: {text}"));
    assert_eq!(
        (revocations["resource_id"].clone(), revocations["details"]["count"].clone()),
        (Value::Null, json!(2)),
        "{text}"
    );
    // GET has no dry run (a kubeconfig's read signs a certificate).
    let read = owner.get::<Value>(&dry(&cluster_path)).await;
    assert_eq!((read.status, bad_fields(&read.body)), (StatusCode::BAD_REQUEST, vec!["dry_run".to_string()]));
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn a_dry_run_is_refused_as_the_real_call_is(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start_with(options, connect, |c| c.quotas.max_clusters = 1).await;
    let _region = region(&t);
    let tenant = t.tenant("acme").await;
    let owner = t.client(&tenant);
    let project = owner.create_project("web").await.id.to_string();
    let (cluster, created) =
        owner.create_cluster(&project, "prod", json!({ "region": "eu-central-1", "deletion_protection": true })).await;
    owner.succeeds(&created).await;
    let cluster_path = format!("/v1/projects/{project}/clusters/{}", cluster.id);
    let (_, viewer) = t.member(&tenant, "viewer@acme.test", "viewer").await;
    let viewer = owner.with_token(&viewer);
    let other = t.tenant("other").await;
    let stranger = t.client(&other);
    let before = row_counts(&t).await;

    // Each refusal, real and dry, side by side.
    let cases: Vec<(&crate::common::Client<'_>, Method, String, Option<Value>)> = vec![
        (&owner, Method::DELETE, cluster_path.clone(), None),
        (&viewer, Method::PATCH, cluster_path.clone(), Some(json!({ "labels": { "a": "b" } }))),
        (&stranger, Method::PATCH, cluster_path.clone(), Some(json!({ "labels": { "a": "b" } }))),
        (
            &owner,
            Method::POST,
            format!("/v1/projects/{project}/clusters"),
            Some(json!({ "name": "second", "spec": { "region": "eu-central-1" } })),
        ),
        (
            &owner,
            Method::POST,
            format!("/v1/projects/{project}/clusters"),
            Some(json!({ "name": "Bad Name", "spec": { "region": "nowhere", "control_plane": { "replicas": 2 } } })),
        ),
        (&owner, Method::POST, format!("{cluster_path}/upgrade"), Some(json!({ "kubernetes_version": "1.20" }))),
    ];
    for (caller, method, path, body) in &cases {
        let real = caller.call::<Value>(method.clone(), path, body.as_ref()).await;
        let dry_run = caller.call::<Value>(method.clone(), &dry(path), body.as_ref()).await;
        assert!(!real.status.is_success(), "{method} {path}: {real:?}");
        assert_eq!(dry_run.status, real.status, "{method} {path}: {dry_run:?} against {real:?}");
        assert_eq!(dry_run.body["code"], real.body["code"], "{method} {path}");
        assert_eq!(bad_fields(&dry_run.body), bad_fields(&real.body), "{method} {path}");
    }
    assert_eq!(changed(&before, &row_counts(&t).await), Vec::<String>::new());

    // A value that is not a boolean, and an operation without a dry run.
    let typo = owner.call::<Value>(Method::DELETE, &format!("{cluster_path}?dry_run=yes"), None).await;
    assert_eq!(typo.status, StatusCode::BAD_REQUEST, "{typo:?}");
    assert_eq!(bad_fields(&typo.body), ["dry_run"]);
    let (status, body) =
        t.post_public("/v1/auth/login?dry_run=true", json!({ "email": "someone@acme.test", "password": "x" })).await;
    assert_eq!((status, bad_fields(&body)), (StatusCode::BAD_REQUEST, vec!["dry_run".to_string()]), "{body}");
    let (status, body) = t.post_public("/v1/hooks/hk_0190a8b2c3d47e8f9a0b1c2d3e4f5a6b?dry_run=true", json!({})).await;
    assert_eq!((status, bad_fields(&body)), (StatusCode::BAD_REQUEST, vec!["dry_run".to_string()]), "{body}");
    // `false` is the real call.
    let real: OperationView = owner
        .patch(&format!("{cluster_path}?dry_run=false"), json!({ "labels": { "team": "web" } }))
        .await
        .expect(StatusCode::ACCEPTED);
    assert_eq!(real.kind, "cluster_update");
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn grpc_validate_only_and_graphql_dry_run_answer_the_plan(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let _region = region(&t);
    let tenant = t.tenant("acme").await;
    let owner = t.client(&tenant);
    let (project, cluster) = running_cluster(&owner).await;
    let before = row_counts(&t).await;

    // gRPC: the method's message at its defaults, the plan in a trailer.
    let channel = tonic::transport::Channel::from_shared(t.base.clone()).unwrap().connect().await.unwrap();
    let mut clusters = ClusterServiceClient::new(channel);
    let mut request = tonic::Request::new(UpdateClusterRequest {
        project: project.clone(),
        cluster: cluster.id.to_string(),
        spec: Some(PbClusterSpec { deletion_protection: true, ..Default::default() }),
        update_mask: Some(prost_types::FieldMask { paths: vec!["spec.deletion_protection".into()] }),
        ..Default::default()
    });
    request.metadata_mut().insert("authorization", format!("Bearer {}", tenant.token).parse().unwrap());
    request.metadata_mut().insert("moke-validate-only", "true".parse().unwrap());
    let answer = clusters.update_cluster(request).await.expect("a dry run succeeds");
    assert_eq!(answer.get_ref().name, "", "no Operation was made");
    let plan = answer.metadata().get_bin("moke-dry-run-bin").expect("the plan's trailer").to_bytes().unwrap();
    let plan: DryRunView = serde_json::from_slice(&plan).unwrap();
    assert_eq!(plan.operations[0].diff[0].path, "/deletion_protection", "{plan:?}");

    // gRPC refusals are the real call's.
    let mut request = tonic::Request::new(UpdateClusterRequest {
        project: project.clone(),
        cluster: "nope".into(),
        update_mask: Some(prost_types::FieldMask { paths: vec!["labels".into()] }),
        ..Default::default()
    });
    request.metadata_mut().insert("authorization", format!("Bearer {}", tenant.token).parse().unwrap());
    request.metadata_mut().insert("moke-validate-only", "true".parse().unwrap());
    assert_eq!(clusters.update_cluster(request).await.unwrap_err().code(), tonic::Code::NotFound);

    // GraphQL: no data, the plan in the error's extensions.
    let (status, body) = t
        .send(t.request(Method::POST, "/graphql", &tenant.token).json(&json!({
            "query": "mutation($p: String!, $c: String!) {
                upgradeCluster(project: $p, cluster: $c, input: { kubernetesVersion: \"1.33\" }, dryRun: true) { id }
            }",
            "variables": { "p": project, "c": cluster.id.to_string() },
        })))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["errors"][0]["extensions"]["code"], "dry_run", "{body}");
    let plan = &body["errors"][0]["extensions"]["plan"];
    assert_eq!(plan["operations"][0]["kind"], "cluster_upgrade", "{body}");

    assert_eq!(changed(&before, &row_counts(&t).await), Vec::<String>::new());
    let view: ClusterView =
        owner.get(&format!("/v1/projects/{project}/clusters/{}", cluster.id)).await.expect(StatusCode::OK);
    assert!(!view.spec.deletion_protection && view.spec.kubernetes_version == "1.32", "{view:?}");
}
