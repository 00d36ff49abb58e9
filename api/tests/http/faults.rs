//! Failure modes of the loop through a region, with agents running in the
//! background as `moke-region` runs them: an agent killed mid-command, a
//! region that falls silent while another keeps working, faults injected
//! through the agent's admin endpoint, and long commands kept from
//! redelivery by in-progress acknowledgements.

use std::time::Duration;

use moke_api::model::{ClusterView, NodePoolView, OperationStatus, OperationView, RegionView, SignupAccepted};
use moke_region::{AgentConfig, NatsLink, SimState, Transport};
use reqwest::StatusCode;
use serde_json::json;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};

use crate::common::{
    BackgroundAgent, Client, TestApp, drop_nats_streams, eventually, nats_url, start_on_nats, unique, zones,
};

/// `op` as it stands after waiting up to `wait` for it to finish.
async fn operation(owner: &Client<'_>, op: &OperationView, wait: &str) -> OperationView {
    owner.get(&format!("/v1/operations/{}?wait={wait}", op.id)).await.expect(StatusCode::OK)
}

/// A cluster in `region`: its id, and the create's operation.
async fn cluster_in(owner: &Client<'_>, project: &str, name: &str, region: &str) -> (String, OperationView) {
    let (cluster, op) = owner.create_cluster(project, name, json!({ "region": region })).await;
    (cluster.id.to_string(), op)
}

fn saved(path: &std::path::Path) -> Option<SimState> {
    serde_json::from_slice(&std::fs::read(path).ok()?).ok()
}

/// Runs the scenario on a transport made by `transport`: the agent applies
/// the node pool, saves its state, and is killed while provisioning (before
/// acknowledging); a new agent on the same state file gets the command
/// again and finishes it without a second set of nodes.
async fn killed_mid_reconcile(t: &TestApp, transport: impl AsyncFn() -> Transport) {
    let acme = t.tenant("acme").await;
    let owner = t.client(&acme);
    let project = owner.create_project("web").await.id.to_string();
    let state_file = std::env::temp_dir().join(format!("moke-region-{}.json", unique()));
    let mut config = AgentConfig::new("eu-central-1", zones("eu-central-1"));
    config.state_file = Some(state_file.clone());
    config.ack_wait = Duration::from_secs(2);

    let (cluster, _) = cluster_in(&owner, &project, "prod", "eu-central-1").await;
    let first = BackgroundAgent::start(config.clone(), transport().await);
    eventually(20, "the cluster to be running", async || {
        let view: ClusterView = owner.get(&format!("/v1/projects/{project}/clusters/{cluster}")).await.ok();
        view.status.phase == "running"
    })
    .await;
    first.kill();

    // Provisioning now takes long enough to kill the agent in the middle.
    let mut slow = config.clone();
    slow.step_delay = Duration::from_secs(60);
    let (pool, pool_op) = owner.create_node_pool(&project, &cluster, "workers", 5).await;
    let pool = pool.id.to_string();
    let second = BackgroundAgent::start(slow, transport().await);
    eventually(20, "the node pool to be applied and saved", async || {
        saved(&state_file).is_some_and(|s| s.node_pools.get(&pool).is_some_and(|p| p.nodes.len() == 5))
    })
    .await;
    second.kill();
    let unfinished = operation(&owner, &pool_op, "0s").await;
    assert_ne!(unfinished.status, OperationStatus::Succeeded, "killed before it acknowledged: {unfinished:?}");

    let third = BackgroundAgent::start(config, transport().await);
    let done = operation(&owner, &pool_op, "30s").await;
    assert_eq!(done.status, OperationStatus::Succeeded, "{done:?}");
    let state = third.agent.state();
    let nodes = &state.node_pools[&pool].nodes;
    let names: std::collections::BTreeSet<&str> = nodes.iter().map(|n| n.name.as_str()).collect();
    assert_eq!((nodes.len(), names.len()), (5, 5), "no duplicate nodes: {nodes:?}");
    let _ = std::fs::remove_file(state_file.with_extension("kms-key"));
    let _ = std::fs::remove_file(state_file);
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn an_agent_killed_mid_reconcile_resumes_without_duplicates_on_postgres(
    options: PgPoolOptions,
    connect: PgConnectOptions,
) {
    let t = TestApp::start(options, connect.clone()).await;
    // Each agent has its own connections, closed when it is killed, as a
    // dead process's would be (so its row locks go with it).
    let pools = std::sync::Mutex::new(Vec::<sqlx::PgPool>::new());
    killed_mid_reconcile(&t, async || {
        let previous = pools.lock().unwrap().last().cloned();
        if let Some(previous) = previous {
            previous.close().await;
        }
        let pool = PgPoolOptions::new().max_connections(4).connect_with(connect.clone()).await.unwrap();
        pools.lock().unwrap().push(pool.clone());
        Transport::Postgres(pool)
    })
    .await;
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn an_agent_killed_mid_reconcile_resumes_without_duplicates_on_nats(
    options: PgPoolOptions,
    connect: PgConnectOptions,
) {
    let (t, prefix) = start_on_nats(options, connect, |_| {}).await;
    killed_mid_reconcile(&t, async || {
        Transport::Nats(Box::new(NatsLink::connect(&nats_url(), &prefix, "eu-central-1").await.unwrap()))
    })
    .await;
    drop_nats_streams(&prefix).await;
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn a_silent_region_serves_stale_reads_and_queues_writes_while_others_work(
    options: PgPoolOptions,
    connect: PgConnectOptions,
) {
    let t = TestApp::start_with(options, connect, |config| config.outbox.region_stale_after_seconds = 1).await;
    let acme = t.tenant("acme").await;
    let owner = t.client(&acme);
    let project = owner.create_project("web").await.id.to_string();
    let frankfurt = BackgroundAgent::start(
        AgentConfig::new("eu-central-1", zones("eu-central-1")),
        Transport::Postgres(t.pool.clone()),
    );
    let ashburn =
        BackgroundAgent::start(AgentConfig::new("us-east-1", zones("us-east-1")), Transport::Postgres(t.pool.clone()));
    let (eu, eu_op) = cluster_in(&owner, &project, "eu", "eu-central-1").await;
    let (us, us_op) = cluster_in(&owner, &project, "us", "us-east-1").await;
    for op in [&eu_op, &us_op] {
        assert_eq!(operation(&owner, op, "20s").await.status, OperationStatus::Succeeded);
    }

    // us-east-1 loses its link: it neither takes work nor reports.
    ashburn.agent.faults().drop_link(Duration::from_secs(600));
    let anonymous = t.anonymous();
    let region_status = async |name: &str| {
        let regions: Vec<RegionView> = anonymous.get("/v1/regions").await.expect(StatusCode::OK);
        let region = regions.into_iter().find(|r| r.name == name).unwrap_or_else(|| panic!("no region {name}"));
        region.health.status
    };
    eventually(10, "us-east-1 to be marked stale", async || region_status("us-east-1").await == "stale").await;
    assert_eq!(region_status("eu-central-1").await, "healthy");

    let view: ClusterView = owner.get(&format!("/v1/projects/{project}/clusters/{us}")).await.expect(StatusCode::OK);
    assert!(view.status.stale, "{view:?}");
    assert_eq!(view.status.phase, "running", "the last observation is still served: {view:?}");
    assert!(view.status.observed_at.is_some(), "{view:?}");
    let view: ClusterView = owner.get(&format!("/v1/projects/{project}/clusters/{eu}")).await.expect(StatusCode::OK);
    assert!(!view.status.stale, "{view:?}");

    // Writes to the silent region are accepted and queue up.
    let us_pool_op: OperationView = owner
        .post(
            &format!("/v1/projects/{project}/clusters/{us}/node-pools"),
            json!({ "name": "workers", "spec": { "machine_type": "bm.small", "count": 2 } }),
        )
        .await
        .expect(StatusCode::ACCEPTED);
    // The other region is not slowed down.
    let started = std::time::Instant::now();
    let (_, eu_pool_op) = owner.create_node_pool(&project, &eu, "workers", 3).await;
    assert_eq!(operation(&owner, &eu_pool_op, "20s").await.status, OperationStatus::Succeeded);
    assert!(started.elapsed() < Duration::from_secs(5), "eu-central-1 took {:?}", started.elapsed());
    assert_eq!(operation(&owner, &us_pool_op, "0s").await.status, OperationStatus::Pending);

    // Back online: the queued write is applied and reads are fresh again.
    ashburn.agent.faults().drop_link(Duration::ZERO);
    assert_eq!(operation(&owner, &us_pool_op, "20s").await.status, OperationStatus::Succeeded);
    eventually(10, "us-east-1 to be healthy", async || region_status("us-east-1").await == "healthy").await;
    // (Views read the region clock through a one-second cache.)
    eventually(5, "fresh reads", async || {
        !owner.get::<ClusterView>(&format!("/v1/projects/{project}/clusters/{us}")).await.ok().status.stale
    })
    .await;
    drop(frankfurt);
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn faults_injected_through_the_admin_endpoint_are_seen_and_repaired(
    options: PgPoolOptions,
    connect: PgConnectOptions,
) {
    let t = TestApp::start(options, connect).await;
    let acme = t.tenant("acme").await;
    let owner = t.client(&acme);
    let project = owner.create_project("web").await.id.to_string();
    let mut config = AgentConfig::new("eu-central-1", zones("eu-central-1"));
    config.admin_token = Some("admin-token-of-this-test".into());
    let region = BackgroundAgent::start(config, Transport::Postgres(t.pool.clone()));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let admin = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(axum::serve(listener, region.agent.admin_router()).into_future());
    // Without the token, nothing; with it, the state has no private keys.
    assert_eq!(t.client.get(format!("{admin}/state")).send().await.unwrap().status(), StatusCode::UNAUTHORIZED);
    let bearer = "Bearer admin-token-of-this-test";
    let post = async |path: &str| {
        t.client.post(format!("{admin}{path}")).header("authorization", bearer).send().await.unwrap().status()
    };
    let state = async || -> SimState {
        t.client
            .get(format!("{admin}/state"))
            .header("authorization", bearer)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    };

    let (cluster, _) = cluster_in(&owner, &project, "prod", "eu-central-1").await;
    let (pool, op) = owner.create_node_pool(&project, &cluster, "workers", 3).await;
    let pool = pool.id.to_string();
    assert_eq!(operation(&owner, &op, "20s").await.status, OperationStatus::Succeeded);
    let seen = state().await;
    assert!(!seen.clusters.is_empty());
    assert!(seen.clusters.values().all(|c| c.pki.serving_key_pem.is_empty()), "the admin state shows no private key");
    let pool_path = format!("/v1/projects/{project}/clusters/{cluster}/node-pools/{pool}");
    let phase = async || owner.get::<NodePoolView>(&pool_path).await.ok().status.phase;

    // A zone goes down: its node is not ready and nothing replaces it there.
    assert_eq!(post("/faults/zones/eu-central-1a/fail").await, StatusCode::NO_CONTENT);
    eventually(10, "the pool to be degraded", async || phase().await == "degraded").await;
    let view: NodePoolView = owner.get(&pool_path).await.expect(StatusCode::OK);
    assert_eq!(view.status.conditions.first().map(|c| c.message.as_str()), Some("2 of 3 node(s) ready"), "{view:?}");
    assert_eq!(post("/faults/zones/eu-central-1a/restore").await, StatusCode::NO_CONTENT);
    eventually(10, "the pool to recover", async || phase().await == "running").await;

    // A node fails: the pool replaces it.
    let victim = state().await.node_pools[&pool].nodes[0].name.clone();
    assert_eq!(post(&format!("/faults/nodes/{victim}/fail")).await, StatusCode::NO_CONTENT);
    eventually(10, "the failed node to be replaced", async || {
        let nodes = state().await.node_pools[&pool].nodes.clone();
        nodes.len() == 3 && nodes.iter().all(|n| n.name != victim)
    })
    .await;
    assert_eq!(phase().await, "running");

    // A stalled provider takes no command until it resumes.
    assert_eq!(post("/faults/provider/stall?seconds=600").await, StatusCode::NO_CONTENT);
    let op: OperationView =
        owner.patch(&pool_path, json!({ "spec": { "count": 4 } })).await.expect(StatusCode::ACCEPTED);
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_ne!(operation(&owner, &op, "0s").await.status, OperationStatus::Succeeded);
    assert_eq!(post("/faults/provider/stall?seconds=0").await, StatusCode::NO_CONTENT);
    assert_eq!(operation(&owner, &op, "20s").await.status, OperationStatus::Succeeded);
    assert_eq!(state().await.node_pools[&pool].nodes.len(), 4);

    // Unknown targets are 404s.
    assert_eq!(post("/faults/nodes/no-such-node/fail").await, StatusCode::NOT_FOUND);
    assert_eq!(post("/faults/zones/mars-1a/fail").await, StatusCode::NOT_FOUND);
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn in_progress_acks_keep_a_long_command_from_being_redelivered(
    options: PgPoolOptions,
    connect: PgConnectOptions,
) {
    let (t, prefix) = start_on_nats(options, connect, |_| {}).await;
    let acme = t.tenant("acme").await;
    let owner = t.client(&acme);
    let project = owner.create_project("web").await.id.to_string();
    let mut config = AgentConfig::new("eu-central-1", zones("eu-central-1"));
    // Each command takes three times as long as JetStream waits for an ack.
    config.ack_wait = Duration::from_secs(1);
    config.step_delay = Duration::from_secs(3);
    // Two agents share the region's durable consumer (as replicas would):
    // a message whose ack wait lapsed would go to the idle one.
    let mut agents = Vec::new();
    for _ in 0..2 {
        let link = NatsLink::connect(&nats_url(), &prefix, "eu-central-1").await.unwrap();
        agents.push(BackgroundAgent::start(config.clone(), Transport::Nats(Box::new(link))));
    }
    // The create, then the cluster's certificate command. Whichever agent takes the second
    // applies it (one that does not hold the cluster counts it all the same), but only the one
    // holding the cluster can end the create, which waits for its certificate: so the wait is
    // for the two commands, not for the create's Operation.
    cluster_in(&owner, &project, "prod", "eu-central-1").await;
    eventually(60, "the create and certificate commands to be applied", async || {
        agents.iter().map(|a| a.agent.state().commands_applied).sum::<i64>() >= 2
    })
    .await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let applied: i64 = agents.iter().map(|a| a.agent.state().commands_applied).sum();
    let sent = t.count("outbox WHERE region = 'eu-central-1' AND delivered_at IS NOT NULL").await;
    assert!(sent >= 2, "the create and the certificate: {sent}");
    assert_eq!(applied, sent, "each command sent applied once: no redelivery");
    drop_nats_streams(&prefix).await;
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn regions_report_usage_once_per_sample(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let acme = t.tenant("acme").await;
    let owner = t.client(&acme);
    let project = owner.create_project("web").await.id.to_string();
    let mut config = AgentConfig::new("eu-central-1", zones("eu-central-1"));
    config.layout.usage_sample_every_seconds = 1;
    let _region = BackgroundAgent::start(config, Transport::Postgres(t.pool.clone()));
    let (cluster, _) = cluster_in(&owner, &project, "prod", "eu-central-1").await;
    let (_, op) = owner.create_node_pool(&project, &cluster, "workers", 2).await;
    assert_eq!(operation(&owner, &op, "20s").await.status, OperationStatus::Succeeded);
    eventually(20, "usage with node time", async || {
        t.count("usage_samples WHERE (node_seconds->>'bm.small')::float8 > 0").await >= 2
    })
    .await;
    let (org, seconds, nodes): (uuid::Uuid, f64, f64) = sqlx::query_as(
        "SELECT org_id, cluster_seconds, (node_seconds->>'bm.small')::float8 FROM usage_samples
         WHERE (node_seconds->>'bm.small')::float8 > 0 ORDER BY period_end DESC LIMIT 1",
    )
    .fetch_one(&t.pool)
    .await
    .unwrap();
    assert_eq!(moke_api::ids::OrgId::from_uuid(org).to_string(), acme.org);
    assert!((0.9..3.0).contains(&seconds), "about a second per sample: {seconds}");
    assert!((nodes - 2.0 * seconds).abs() < 1e-6, "two ready nodes: {nodes} vs {seconds}");
    // The same sample again (at-least-once delivery) is accepted and recorded
    // once, its usage records too.
    type Stored = (String, chrono::DateTime<chrono::Utc>, chrono::DateTime<chrono::Utc>, f64);
    let sample: Stored = sqlx::query_as(
        "SELECT id, period_start, period_end, cluster_seconds FROM usage_samples
         WHERE (node_seconds->>'bm.small')::float8 > 0 LIMIT 1",
    )
    .fetch_one(&t.pool)
    .await
    .unwrap();
    let records = format!("usage_records WHERE sample_id = '{}'", sample.0);
    assert_eq!(t.count(&records).await, 3, "the control plane and two nodes");
    let id = sample.0.split_once('/').unwrap().1.to_string();
    let replay = moke_proto::region::Status {
        region: "eu-central-1".into(),
        message: Some(moke_proto::region::status::Message::Usage(moke_proto::region::UsageSample {
            id,
            cluster_id: cluster.clone(),
            period_start: sample.1.to_rfc3339(),
            period_end: sample.2.to_rfc3339(),
            cluster_seconds: sample.3,
            node_seconds: Default::default(),
            control_plane_replicas: 1,
            nodes: Vec::new(),
        })),
    };
    t.app.apply_region_status(replay).await.unwrap();
    assert_eq!(t.count(&format!("usage_samples WHERE id = '{}'", sample.0)).await, 1);
    assert_eq!(t.count(&records).await, 3, "no usage twice");
}

/// A message the mail server can never take is dead-lettered (kept, without
/// its body, with its error) and holds up none of the mail behind it.
#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn an_unsendable_mail_is_dead_lettered_and_holds_up_no_other(options: PgPoolOptions, connect: PgConnectOptions) {
    let smtp = crate::common::SmtpServer::start().await;
    let url = smtp.url.clone();
    let t = TestApp::start_with(options, connect, move |config| {
        config.mail.sender = "smtp".into();
        config.mail.smtp_url = moke_api::config::Secret::new(url);
    })
    .await;
    // Written first, so the relay meets it before the mail behind it.
    sqlx::query(
        "INSERT INTO mail_outbox (kind, to_address, from_address, subject, text_body)
         VALUES ('notice', 'not an address', 'moke@example.test', 'unsendable', 'body')",
    )
    .execute(&t.pool)
    .await
    .unwrap();
    t.anonymous()
        .post::<SignupAccepted>(
            "/v1/signup",
            json!({ "email": "behind@example.test", "password": "violet kettle orbit 42",
            "display_name": "Behind", "organization_name": "behind" }),
        )
        .await
        .expect(StatusCode::ACCEPTED);
    smtp.token("behind@example.test", "signup/confirm").await;
    let (dead, error, body): (Option<chrono::DateTime<chrono::Utc>>, Option<String>, Option<String>) =
        sqlx::query_as("SELECT dead_at, last_error, text_body FROM mail_outbox WHERE to_address = 'not an address'")
            .fetch_one(&t.pool)
            .await
            .unwrap();
    assert!(dead.is_some(), "the unsendable mail is dead-lettered at once (an address is refused for good)");
    assert!(error.is_some_and(|e| !e.is_empty()), "its error is kept for a person");
    assert_eq!(body, None, "a dead letter keeps no body");
}
