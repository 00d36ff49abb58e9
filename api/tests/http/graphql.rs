//! The GraphQL surface: the parity scenario, the N+1 guard, query limits,
//! and an Operation subscription over WebSocket.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use futures::{SinkExt, StreamExt};
use moke_api::app::region::observations::OperationProgress;
use moke_api::model::OperationStatus;
use serde_json::{Value, json};
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

use crate::common::{Tenant, TestApp};

/// Runs a GraphQL document and returns the whole answer.
async fn gql(t: &TestApp, tenant: &Tenant, query: &str, variables: Value) -> Value {
    let (status, body) = t
        .send(
            t.request(reqwest::Method::POST, "/graphql", &tenant.token)
                .json(&json!({ "query": query, "variables": variables })),
        )
        .await;
    assert_eq!(status, reqwest::StatusCode::OK, "{body}");
    body
}

fn error_code(answer: &Value) -> &str {
    answer["errors"][0]["extensions"]["code"].as_str().unwrap_or_default()
}

const CREATE_CLUSTER: &str = r#"mutation($project: String!, $input: ClusterCreate!, $key: String) {
  createCluster(project: $project, input: $input, idempotencyKey: $key) { id kind status done target { id name generation } }
}"#;

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn the_rest_scenario_over_graphql_ends_in_the_same_state(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let rest = t.tenant("rest").await;
    let g = t.tenant("graphql").await;
    let rest_run = crate::scenario::over_rest(&t, &rest).await;

    let created = gql(
        &t,
        &g,
        r#"mutation($org: ID!) { createProject(org: $org, input: { name: "web" }) { id name } }"#,
        json!({ "org": g.org }),
    )
    .await;
    assert_eq!(created["data"]["createProject"]["name"], "web", "{created}");
    let prod = json!({ "name": "prod", "spec": { "region": "eu-central-1", "kubernetesVersion": "1.32", "controlPlane": { "replicas": 1 } } });
    let first = gql(&t, &g, CREATE_CLUSTER, json!({ "project": "web", "input": prod, "key": "same" })).await;
    let retry = gql(&t, &g, CREATE_CLUSTER, json!({ "project": "web", "input": prod, "key": "same" })).await;
    assert_eq!(first["data"]["createCluster"]["status"], "PENDING", "{first}");
    assert_eq!(retry["data"]["createCluster"]["id"], first["data"]["createCluster"]["id"], "idempotent retry");
    gql(
        &t,
        &g,
        CREATE_CLUSTER,
        json!({ "project": "web", "input": { "name": "dev", "spec": { "region": "eu-central-1" } } }),
    )
    .await;
    let pool = gql(
        &t,
        &g,
        r#"mutation { createNodePool(project: "web", cluster: "prod",
        input: { name: "workers", spec: { machineType: "bm.small", count: 2 } }) { kind } }"#,
        json!({}),
    )
    .await;
    assert_eq!(pool["data"]["createNodePool"]["kind"], "node_pool_create", "{pool}");

    let page = r#"query($after: String) { project(project: "web") { clusters(first: 1, after: $after) {
        edges { cursor node { name etag } } pageInfo { hasNextPage endCursor } } } }"#;
    let first_page = gql(&t, &g, page, json!({})).await;
    let clusters = &first_page["data"]["project"]["clusters"];
    assert_eq!(clusters["pageInfo"]["hasNextPage"], true, "{first_page}");
    let second_page = gql(&t, &g, page, json!({ "after": clusters["pageInfo"]["endCursor"] })).await;
    assert_eq!(second_page["data"]["project"]["clusters"]["edges"][0]["node"]["name"], "dev");

    let stale_etag = clusters["edges"][0]["node"]["etag"].clone();
    let relabel = r#"mutation($tier: String!, $etag: String) { updateCluster(project: "web", cluster: "prod",
        patch: { labels: { tier: $tier } }, ifMatch: $etag) { status } }"#;
    let fresh = gql(
        &t,
        &g,
        &relabel.replace("{ tier: $tier }", "$labels").replace("$tier: String!", "$labels: JSON!"),
        json!({ "labels": { "tier": "gold" } }),
    )
    .await;
    assert_eq!(fresh["data"]["updateCluster"]["status"], "SUCCEEDED", "{fresh}");
    let stale = gql(
        &t,
        &g,
        &relabel.replace("{ tier: $tier }", "$labels").replace("$tier: String!", "$labels: JSON!"),
        json!({ "labels": { "tier": "lead" }, "etag": stale_etag }),
    )
    .await;
    assert_eq!(error_code(&stale), rest_run.stale["code"].as_str().unwrap(), "{stale}");

    let invalid = gql(&t, &g, CREATE_CLUSTER,
        json!({ "project": "web", "input": { "name": "bad", "spec": { "region": "mars-1", "controlPlane": { "replicas": 2 } } } })).await;
    assert_eq!(error_code(&invalid), "invalid_request");
    let fields: Vec<&str> = invalid["errors"][0]["extensions"]["fields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["field"].as_str().unwrap())
        .collect();
    let rest_fields: Vec<&str> =
        rest_run.invalid["errors"].as_array().unwrap().iter().map(|f| f["field"].as_str().unwrap()).collect();
    assert_eq!(fields, rest_fields, "the same fields as REST");
    let deleted = gql(
        &t,
        &g,
        r#"mutation { deleteNodePool(project: "web", cluster: "prod", nodePool: "workers") { kind } }"#,
        json!({}),
    )
    .await;
    assert_eq!(deleted["data"]["deleteNodePool"]["kind"], "node_pool_delete");

    // Cross-tenant reads are not found; no token, no data.
    let foreign = gql(
        &t,
        &g,
        r#"query($p: String!) { cluster(project: $p, cluster: "prod") { name } }"#,
        json!({ "p": rest_run.project }),
    )
    .await;
    assert_eq!(error_code(&foreign), "not_found", "{foreign}");
    let (_, anonymous) = t
        .send(
            t.client
                .post(format!("{}/graphql", t.base))
                .json(&json!({ "query": "{ orgs { edges { node { name } } } }" })),
        )
        .await;
    assert_eq!(error_code(&anonymous), "unauthenticated");

    crate::scenario::assert_same_outcome(&t, &rest, &g).await;
}

/// Counts the SQL statements sqlx runs on this thread (the test runtime is
/// single-threaded, so the server's tasks run here too), leaving out the
/// server's background polling of the region status inbox.
struct QueryCounter(Arc<AtomicUsize>);

/// Collects an event's fields as text.
struct Text(String);

impl tracing::field::Visit for Text {
    fn record_debug(&mut self, _: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        self.0.push_str(&format!("{value:?} "));
    }
}

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for QueryCounter {
    fn on_event(&self, event: &tracing::Event<'_>, _: tracing_subscriber::layer::Context<'_, S>) {
        if event.metadata().target() != "sqlx::query" {
            return;
        }
        let mut text = Text(String::new());
        event.record(&mut text);
        // Background loops poll on the same thread; none of their tables is on this page's path.
        const BACKGROUND: [&str; 7] = [
            "region_status",
            "region_health",
            "outbox",
            "cluster_cas",
            "idempotency",
            "rollout_operation_id",
            "webhook_deliveries",
        ];
        if !BACKGROUND.iter().any(|table| text.0.contains(table)) {
            self.0.fetch_add(1, Ordering::SeqCst);
            if std::env::var_os("MOKE_TEST_SHOW_SQL").is_some() {
                eprintln!("counted: {}", text.0.chars().take(160).collect::<String>());
            }
        }
    }
}

/// The database queries one GraphQL document costs, `check`ing each answer.
/// Tests on other threads register callsites meanwhile and can cache "not
/// interested" for ours: rebuild before each measurement and skip ones that
/// saw nothing. A poll of a background loop can land in a measurement and
/// only ever adds: the fewest of three is the document's cost (an N+1 would
/// show in every one).
async fn fewest_queries(
    t: &TestApp,
    tenant: &Tenant,
    queries: &AtomicUsize,
    document: &str,
    check: impl Fn(&Value),
) -> usize {
    let mut seen = Vec::new();
    for _ in 0..10 {
        tracing::callsite::rebuild_interest_cache();
        queries.store(0, Ordering::SeqCst);
        let answer = gql(t, tenant, document, json!({})).await;
        check(&answer);
        let counted = queries.load(Ordering::SeqCst);
        if counted > 0 {
            seen.push(counted);
        }
        if seen.len() == 3 {
            break;
        }
    }
    seen.into_iter().min().unwrap_or(0)
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn a_page_of_clusters_costs_a_fixed_number_of_queries(options: PgPoolOptions, connect: PgConnectOptions) {
    use tracing_subscriber::layer::SubscriberExt;
    let t = TestApp::start(options, connect).await;
    let acme = t.tenant("acme").await;
    let project = t.project(&acme, "web").await;
    let org: moke_api::ids::OrgId = acme.org.parse().unwrap();
    let roomy = moke_api::config::QuotaDefaults { max_clusters: 60, ..t.app.config().quotas };
    t.app.set_quota_overrides(org, roomy).await.unwrap();
    for i in 0..50 {
        let name = format!("c{i:02}");
        t.cluster(&acme, &project, &name).await;
        t.node_pool(&acme, &project, &name, "workers", 1).await;
    }
    for i in 0..9 {
        let other = t.project(&acme, &format!("p{i}")).await;
        t.cluster(&acme, &other, "only").await;
    }
    let queries = Arc::new(AtomicUsize::new(0));
    let _guard = tracing::subscriber::set_default(tracing_subscriber::registry().with(QueryCounter(queries.clone())));
    // Callsites may have cached "never interested" from threads without a subscriber.
    tracing::callsite::rebuild_interest_cache();
    let page = |first: usize| {
        format!(
            r#"{{ project(project: "web") {{ clusters(first: {first}) {{ edges {{ node {{
            name nodePools(first: 5) {{ nodes {{ name spec {{ count }} }} }}
            operations(first: 2) {{ nodes {{ kind status }} }} }} }} }} }} }}"#
        )
    };
    let mut cost = Vec::new();
    for first in [5, 50] {
        let check = |answer: &Value| {
            let edges = answer["data"]["project"]["clusters"]["edges"].as_array().unwrap_or_else(|| panic!("{answer}"));
            assert_eq!(edges.len(), first, "{answer}");
            assert_eq!(edges[first - 1]["node"]["nodePools"]["nodes"][0]["name"], "workers");
            let kinds = &edges[0]["node"]["operations"]["nodes"];
            assert_eq!((&kinds[0]["kind"], &kinds[1]["kind"]), (&json!("node_pool_create"), &json!("cluster_create")));
        };
        cost.push(fewest_queries(&t, &acme, &queries, &page(first), check).await);
    }
    assert!(cost[0] > 0, "the counter sees queries");
    assert_eq!(cost[0], cost[1], "5 and 50 clusters cost the same number of queries: {cost:?}");

    // A page of projects with their clusters: 2 or 10 projects, one query for all their clusters.
    let projects = |first: usize| {
        format!(
            r#"{{ orgs(first: 1) {{ nodes {{ projects(first: {first}) {{ nodes {{ name
            clusters(first: 3) {{ nodes {{ name operations(first: 1) {{ nodes {{ steps {{ step }} }} }} }}
            pageInfo {{ hasNextPage endCursor }} }} }} }} }} }} }}"#
        )
    };
    let mut cost = Vec::new();
    for first in [2, 10] {
        let check = |answer: &Value| {
            let listed = answer["data"]["orgs"]["nodes"][0]["projects"]["nodes"].as_array().cloned();
            assert_eq!(listed.as_ref().map(|p| p.len()), Some(first), "{answer}");
            let stepped = listed.unwrap().iter().any(|project| {
                let steps = &project["clusters"]["nodes"][0]["operations"]["nodes"][0]["steps"];
                steps.as_array().is_some_and(|s| !s.is_empty())
            });
            assert!(stepped, "operations come with their steps: {answer}");
        };
        cost.push(fewest_queries(&t, &acme, &queries, &projects(first), check).await);
    }
    assert_eq!(cost[0], cost[1], "2 and 10 projects cost the same number of queries: {cost:?}");

    // A nested first page reads on with its own cursor, as the root list does.
    let first = gql(&t, &acme, &projects(10), json!({})).await;
    let web = first["data"]["orgs"]["nodes"][0]["projects"]["nodes"]
        .as_array()
        .and_then(|p| p.iter().find(|p| p["name"] == "web").cloned())
        .unwrap_or_else(|| panic!("{first}"));
    assert_eq!(web["clusters"]["nodes"][2]["name"], "c02", "{web}");
    assert_eq!(web["clusters"]["pageInfo"]["hasNextPage"], true, "{web}");
    let cursor = web["clusters"]["pageInfo"]["endCursor"].as_str().unwrap();
    let next = gql(
        &t,
        &acme,
        r#"query($after: String!) { project(project: "web") { clusters(first: 2, after: $after) { nodes { name } } } }"#,
        json!({ "after": cursor }),
    )
    .await;
    assert_eq!(next["data"]["project"]["clusters"]["nodes"], json!([{ "name": "c03" }, { "name": "c04" }]), "{next}");

    let paged = gql(
        &t,
        &acme,
        r#"{ clusterOperations(project: "web", cluster: "c07", first: 1) { edges { node { kind target { name } } } pageInfo { hasNextPage } } }"#,
        json!({}),
    )
    .await;
    let connection = &paged["data"]["clusterOperations"];
    assert_eq!(connection["edges"][0]["node"]["kind"], "node_pool_create", "{paged}");
    assert_eq!(connection["edges"][0]["node"]["target"]["name"], "workers");
    assert_eq!(connection["pageInfo"]["hasNextPage"], true);

    let priced = gql(
        &t,
        &acme,
        r#"{ clusterEstimate(project: "web", input: { cluster: { name: "x", spec: { region: "eu-central-1" } },
             nodePools: [{ name: "a", spec: { machineType: "bm.large", count: 1 } }] }) { currency monthlyTotal lines { sku amount } } }"#,
        json!({}),
    )
    .await;
    assert_eq!(priced["data"]["clusterEstimate"]["monthlyTotal"], "1027.22", "{priced}");
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn queries_over_the_limits_are_refused(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let acme = t.tenant("acme").await;
    // Thirteen levels, each list of one item, so only the depth is over a limit.
    let deep = "{ orgs(first: 1) { edges { node { projects(first: 1) { edges { node { clusters(first: 1) { edges { node { nodePools(first: 1) { nodes { spec { taints { key } } } } } } } } } } } } } }";
    let answer = gql(&t, &acme, deep, json!({})).await;
    let message = answer["errors"][0]["message"].as_str().unwrap_or_default();
    assert!(message.contains("nested too deep"), "{answer}");
    assert!(answer["data"].is_null());

    let wide = r#"{ orgs(first: 500) { edges { node { projects(first: 500) { edges { node { clusters(first: 500) { edges { node { name } } } } } } } } } }"#;
    let answer = gql(&t, &acme, wide, json!({})).await;
    let message = answer["errors"][0]["message"].as_str().unwrap_or_default();
    assert!(message.contains("too complex"), "{answer}");

    let huge = format!("{{ orgs {{ edges {{ node {{ name }} }} }} }} # {}", "x".repeat(2 * 1024 * 1024));
    let (status, _) =
        t.send(t.request(reqwest::Method::POST, "/graphql", &acme.token).json(&json!({ "query": huge }))).await;
    assert_eq!(status, reqwest::StatusCode::PAYLOAD_TOO_LARGE, "documents over the size limit are refused");

    // Fragments that each spread the next three times: 49 spreads, one root
    // field, and 3^16 × 100 fields written out. Refused before validation
    // would walk them, to anyone, signed in or not.
    let mut exponential = String::from("query { __schema { ...F0 } }\n");
    for level in 0..16 {
        let next = level + 1;
        exponential.push_str(&format!("fragment F{level} on __Schema {{ ...F{next} ...F{next} ...F{next} }}\n"));
    }
    let wide: Vec<String> = (0..100).map(|n| format!("a{n}: description")).collect();
    exponential.push_str(&format!("fragment F16 on __Schema {{ {} }}", wide.join(" ")));
    let anonymous = t.client.post(format!("{}/graphql", t.base)).json(&json!({ "query": exponential }));
    let (_, answer) = t.send(anonymous).await;
    let message = answer["errors"][0]["extensions"]["fields"][0]["message"].as_str().unwrap_or_default();
    assert!(message.contains("fields with its fragments written out"), "{answer}");

    // A chain of fragments, each shallow, nesting 93 deep in all: refused
    // before any walk of it recurses that deep.
    let mut chain = String::from("query { ...F0 }\n");
    for level in 0..3 {
        let inner = if level < 2 { format!("...F{}", level + 1) } else { "b".to_string() };
        let (open, close) = ("a { ".repeat(30), " }".repeat(30));
        chain.push_str(&format!("fragment F{level} on Query {{ {open}{inner}{close} }}\n"));
    }
    let anonymous = t.client.post(format!("{}/graphql", t.base)).json(&json!({ "query": chain }));
    let (_, answer) = t.send(anonymous).await;
    let message = answer["errors"][0]["extensions"]["fields"][0]["message"].as_str().unwrap_or_default();
    assert!(message.contains("nests at most 64 levels"), "{answer}");

    // Within the limits, the same shape works.
    let fine = gql(&t, &acme, "{ orgs { edges { node { name quotas { clusters { limit } } } } } }", json!({})).await;
    assert_eq!(fine["data"]["orgs"]["edges"][0]["node"]["name"], "acme", "{fine}");
}

/// Sends a document by hash (Apollo's automatic persisted queries), with its
/// text when `text` is given.
async fn persisted(t: &TestApp, tenant: &Tenant, hash: &str, text: Option<&str>) -> Value {
    let mut body = json!({ "extensions": { "persistedQuery": { "version": 1, "sha256Hash": hash } } });
    if let Some(text) = text {
        body["query"] = json!(text);
    }
    let (status, answer) = t.send(t.request(reqwest::Method::POST, "/graphql", &tenant.token).json(&body)).await;
    assert_eq!(status, reqwest::StatusCode::OK, "{answer}");
    answer
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn a_persisted_query_runs_by_its_hash_for_the_caller_who_sent_it(
    options: PgPoolOptions,
    connect: PgConnectOptions,
) {
    use sha2::Digest;
    let t = TestApp::start(options, connect).await;
    let (acme, globex) = (t.tenant("acme").await, t.tenant("globex").await);
    let text = "{ orgs { edges { node { name } } } }";
    let hash = hex::encode(sha2::Sha256::digest(text));

    // The protocol: an unknown hash asks for the text, which is then kept.
    let unknown = persisted(&t, &acme, &hash, None).await;
    assert_eq!(unknown["errors"][0]["message"], "PersistedQueryNotFound", "{unknown}");
    assert_eq!(error_code(&unknown), "PERSISTED_QUERY_NOT_FOUND");
    let registered = persisted(&t, &acme, &hash, Some(text)).await;
    assert_eq!(registered["data"]["orgs"]["edges"][0]["node"]["name"], "acme", "{registered}");
    let by_hash = persisted(&t, &acme, &hash, None).await;
    assert_eq!(by_hash["data"], registered["data"]);

    // Another tenant cannot run (or learn of) what acme sent.
    let other = persisted(&t, &globex, &hash, None).await;
    assert_eq!(error_code(&other), "PERSISTED_QUERY_NOT_FOUND", "{other}");

    // A hash that is not the text's is refused, naming the field.
    let wrong = persisted(&t, &acme, &hex::encode([0u8; 32]), Some(text)).await;
    assert_eq!(error_code(&wrong), "invalid_request", "{wrong}");
    assert_eq!(wrong["errors"][0]["extensions"]["fields"][0]["field"], "extensions.persistedQuery.sha256Hash");
    assert!(wrong["data"].is_null());
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn a_subscription_follows_an_operation_to_completion(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let acme = t.tenant("acme").await;
    let project = t.project(&acme, "web").await;
    let (_, op) = t.cluster(&acme, &project, "prod").await;
    let op_id = op["id"].as_str().unwrap().to_string();

    let mut request = format!("{}/graphql/ws", t.base.replace("http://", "ws://")).into_client_request().unwrap();
    request.headers_mut().insert("sec-websocket-protocol", "graphql-transport-ws".parse().unwrap());
    let (socket, _) = tokio_tungstenite::connect_async(request).await.unwrap();
    let (mut outgoing, mut incoming) = socket.split();
    let send = |value: Value| Message::Text(value.to_string().into());
    outgoing
        .send(send(
            json!({ "type": "connection_init", "payload": { "authorization": format!("Bearer {}", acme.token) } }),
        ))
        .await
        .unwrap();
    let mut next = async || -> Value {
        loop {
            let message = tokio::time::timeout(std::time::Duration::from_secs(10), incoming.next())
                .await
                .unwrap()
                .unwrap()
                .unwrap();
            if let Message::Text(text) = message {
                return serde_json::from_str(&text).unwrap();
            }
        }
    };
    assert_eq!(next().await["type"], "connection_ack");
    outgoing
        .send(send(json!({ "id": "1", "type": "subscribe", "payload": {
            "query": "subscription($id: ID!) { operation(id: $id) { status step progress done } }",
            "variables": { "id": op_id } } })))
        .await
        .unwrap();
    let first = next().await;
    assert_eq!(first["payload"]["data"]["operation"]["status"], "PENDING", "{first}");

    let op_uuid = op_id.parse::<moke_api::ids::OperationId>().unwrap().uuid();
    for (status, step, progress) in
        [(OperationStatus::Running, "provisioning_control_plane", 40), (OperationStatus::Succeeded, "done", 100)]
    {
        t.app
            .record_operation_progress(OperationProgress {
                region: None,
                operation_id: op_uuid,
                status,
                step: step.into(),
                progress,
                error: None,
                earlier: Vec::new(),
            })
            .await
            .unwrap();
        let update = next().await;
        assert_eq!(update["payload"]["data"]["operation"]["step"], step, "{update}");
        assert_eq!(update["payload"]["data"]["operation"]["progress"], progress);
    }
    let last = next().await;
    assert_eq!(last["type"], "complete", "the stream ends when the operation is done: {last}");
}

/// A WebSocket that never sends `connection_init` is closed after
/// `WS_INIT_TIMEOUT`, so nobody holds sockets open without signing in.
#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn a_socket_that_never_signs_in_is_closed(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let mut request = format!("{}/graphql/ws", t.base.replace("http://", "ws://")).into_client_request().unwrap();
    request.headers_mut().insert("sec-websocket-protocol", "graphql-transport-ws".parse().unwrap());
    let (socket, _) = tokio_tungstenite::connect_async(request).await.unwrap();
    let (_outgoing, mut incoming) = socket.split();
    let started = std::time::Instant::now();
    let limit = moke_api::graphql::WS_INIT_TIMEOUT + std::time::Duration::from_secs(10);
    let ended = tokio::time::timeout(limit, async {
        while let Some(message) = incoming.next().await {
            if message.is_err() || matches!(message, Ok(Message::Close(_))) {
                break;
            }
        }
    })
    .await;
    assert!(ended.is_ok(), "the socket is still open after {:?}", started.elapsed());
    assert!(started.elapsed() >= moke_api::graphql::WS_INIT_TIMEOUT - std::time::Duration::from_secs(1));
}
