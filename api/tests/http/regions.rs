//! The loop through a region on the embedded Postgres queue: the gateway
//! commits desired state, the reference agent applies it to the simulated
//! region, and its reports come back as finished Operations and observed
//! state.

use moke_api::model::{ClusterView, NodePoolView, OperationStatus, OperationView, RegionView};
use moke_region::{Agent, AgentConfig, Transport};
use reqwest::StatusCode;
use serde_json::json;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};

use crate::common::{Client, TestApp, drop_nats_streams, nats_url, start_on_nats, unique};

fn agent(t: &TestApp, state_file: Option<std::path::PathBuf>) -> Agent {
    let zones = crate::common::zones("eu-central-1");
    let mut config = AgentConfig::new("eu-central-1", zones);
    config.state_file = state_file;
    Agent::new(config, Transport::Postgres(t.pool.clone())).unwrap()
}

/// Lets the agent work and the gateway ingest until both are idle. The
/// server's own ingest loop may hold reports mid-apply; they are done when
/// the inbox is empty to everyone.
/// New control planes get their certificates signed on the way.
async fn settle(t: &TestApp, agent: &Agent) {
    for _ in 0..1000 {
        while agent.run_once().await.unwrap() > 0 {}
        loop {
            while t.app.ingest_region_status_once().await.unwrap() > 0 {}
            if t.count("region_status").await == 0 {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        let signed = t.app.sign_serving_certificates_once().await.unwrap();
        let unsigned =
            agent.state().clusters.values().any(|c| !c.deleted && !c.pki.ca_pem.is_empty() && !c.pki.ready());
        if signed == 0 && !unsigned {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    panic!("the region never settled");
}

/// A cluster in eu-central-1: its id and the create's operation.
async fn create_cluster(owner: &Client<'_>, project: &str, name: &str) -> (String, OperationView) {
    let (cluster, op) = owner.create_cluster(project, name, json!({ "region": "eu-central-1" })).await;
    (cluster.id.to_string(), op)
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn a_cluster_becomes_running_with_its_control_plane_spread(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let acme = t.tenant("acme").await;
    let owner = t.client(&acme);
    let project = owner.create_project("web").await.id.to_string();
    let state_file = std::env::temp_dir().join(format!("moke-region-{}.json", unique()));
    let region = agent(&t, Some(state_file.clone()));

    let (cluster, op) = create_cluster(&owner, &project, "prod").await;
    owner.create_node_pool(&project, &cluster, "workers", 5).await;
    settle(&t, &region).await;

    let done = owner.operation(op.id).await;
    assert_eq!(done.status, OperationStatus::Succeeded, "{done:?}");
    assert_eq!(done.progress, 100);
    let cluster_path = format!("/v1/projects/{project}/clusters/{cluster}");
    let view: ClusterView = owner.get(&cluster_path).await.expect(StatusCode::OK);
    assert_eq!(view.status.phase, "running", "{view:?}");
    assert_eq!(view.status.observed_generation, 1);
    assert_eq!(view.status.conditions[0].condition_type, "Ready");
    let pool: NodePoolView = owner.get(&format!("{cluster_path}/node-pools/workers")).await.expect(StatusCode::OK);
    assert_eq!(pool.status.phase, "running");

    // Placement: a cell, etcd one member per zone, nodes spread with skew ≤ 1.
    let state = region.state();
    let placed = &state.clusters[&cluster];
    assert!(placed.cell.starts_with("cell-"));
    let mut etcd_zones: Vec<&str> = placed.etcd.iter().map(|m| m.zone.as_str()).collect();
    etcd_zones.sort();
    assert_eq!(etcd_zones, ["eu-central-1a", "eu-central-1b", "eu-central-1c"]);
    assert_eq!(placed.api_servers.len(), 3);
    let nodes = &state.node_pools.values().next().unwrap().nodes;
    assert_eq!(nodes.len(), 5);
    let per_zone: Vec<usize> = ["eu-central-1a", "eu-central-1b", "eu-central-1c"]
        .iter()
        .map(|z| nodes.iter().filter(|n| n.zone == *z).count())
        .collect();
    assert!(per_zone.iter().max().unwrap() - per_zone.iter().min().unwrap() <= 1, "{per_zone:?}");

    // Redelivery of every command changes nothing.
    sqlx::query("UPDATE outbox SET delivered_at = NULL").execute(&t.pool).await.unwrap();
    settle(&t, &region).await;
    // (The control plane's certificate arrives on its own schedule; compare the rest.)
    let without_pki = |state: moke_region::SimState| {
        let mut clusters = state.clusters;
        for cluster in clusters.values_mut() {
            cluster.pki = Default::default();
            cluster.endpoint = None;
        }
        clusters
    };
    assert_eq!(without_pki(region.state()), without_pki(state.clone()), "duplicate delivery, no duplicate effect");
    assert_eq!(region.state().node_pools, state.node_pools);

    // A newer generation applies; replaying the older one afterwards does not undo it.
    owner
        .patch::<OperationView>(&cluster_path, json!({ "spec": { "control_plane": { "replicas": 1 } } }))
        .await
        .expect(StatusCode::ACCEPTED);
    settle(&t, &region).await;
    assert_eq!(region.state().clusters[&cluster].api_servers.len(), 1);
    sqlx::query("UPDATE outbox SET delivered_at = NULL WHERE kind = 'cluster_create'").execute(&t.pool).await.unwrap();
    settle(&t, &region).await;
    assert_eq!(region.state().clusters[&cluster].generation, 2, "a stale generation is ignored");
    assert_eq!(region.state().clusters[&cluster].api_servers.len(), 1);
    let view: ClusterView = owner.get(&cluster_path).await.expect(StatusCode::OK);
    assert_eq!(view.status.observed_generation, 2);

    // A restarted agent picks up where the last one stopped.
    let restarted = agent(&t, Some(state_file.clone()));
    assert_eq!(restarted.state(), region.state());

    // Delete: the region confirms and the cluster is gone.
    owner.delete::<OperationView>(&cluster_path).await.expect(StatusCode::ACCEPTED);
    settle(&t, &restarted).await;
    owner.get::<ClusterView>(&cluster_path).await.refused(StatusCode::NOT_FOUND);
    let _ = std::fs::remove_file(state_file.with_extension("kms-key"));
    let _ = std::fs::remove_file(state_file);
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn an_agent_serves_only_its_own_region(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let acme = t.tenant("acme").await;
    let owner = t.client(&acme);
    let project = owner.create_project("web").await.id.to_string();
    let (_, op) = owner.create_cluster(&project, "us", json!({ "region": "us-east-1" })).await;
    let frankfurt = agent(&t, None);
    settle(&t, &frankfurt).await;
    assert!(frankfurt.state().clusters.is_empty());
    let pending = owner.operation(op.id).await;
    assert_eq!(pending.status, OperationStatus::Pending, "work for another region waits for its own agent");
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn the_gateway_ingests_reports_as_they_arrive(options: PgPoolOptions, connect: PgConnectOptions) {
    // The server's own ingest loop (woken by NOTIFY moke_status) finishes the operation.
    let t = TestApp::start(options, connect).await;
    let acme = t.tenant("acme").await;
    let owner = t.client(&acme);
    let project = owner.create_project("web").await.id.to_string();
    let (_, op) = create_cluster(&owner, &project, "prod").await;
    let region = agent(&t, None);
    // The create ends once the control plane's certificate, signed by the server, arrives.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while region.state().clusters.values().all(|c| !c.pki.ready()) {
        region.run_once().await.unwrap();
        assert!(std::time::Instant::now() < deadline, "the control plane never got its certificate");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let done: OperationView = owner.get(&format!("/v1/operations/{}?wait=10s", op.id)).await.expect(StatusCode::OK);
    assert_eq!(done.status, OperationStatus::Succeeded, "{done:?}");
    // Each command carried when it was written: the agent knows its queue lag.
    let lags = region.take_command_lags();
    assert!(!lags.is_empty() && lags.iter().all(|lag| *lag < std::time::Duration::from_secs(60)), "{lags:?}");
    assert!(region.take_command_lags().is_empty(), "taken once");
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn a_backlogged_region_refuses_new_work_while_others_go_on(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start_with(options, connect, |config| config.outbox.max_backlog_per_region = 2).await;
    let acme = t.tenant("acme").await;
    let owner = t.client(&acme);
    let project = owner.create_project("web").await.id.to_string();
    let clusters = format!("/v1/projects/{project}/clusters");
    let create = |name: &str, region: &str| json!({ "name": name, "spec": { "region": region } });
    for name in ["a", "b"] {
        owner.post::<OperationView>(&clusters, create(name, "us-east-1")).await.expect(StatusCode::ACCEPTED);
    }
    // us-east-1 has no agent: its queue is full.
    let refused = owner.post::<OperationView>(&clusters, create("c", "us-east-1")).await;
    refused.refused_with(StatusCode::SERVICE_UNAVAILABLE, "unavailable");
    assert_eq!(refused.headers["retry-after"], "30");
    assert_eq!(t.count("clusters").await, 2, "nothing of the refused change was written");

    // eu-central-1 is unaffected, and its agent reports in.
    owner.post::<OperationView>(&clusters, create("d", "eu-central-1")).await.expect(StatusCode::ACCEPTED);
    let frankfurt = agent(&t, None);
    frankfurt.heartbeat().await.unwrap();
    // Until the control plane has asked for, and received, its certificate.
    for _ in 0..100 {
        settle(&t, &frankfurt).await;
        let served = t.count("cluster_cas WHERE serving_certificate_pem IS NOT NULL").await == 1;
        if served && t.count("outbox WHERE region = 'eu-central-1' AND delivered_at IS NULL").await == 0 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let regions: Vec<RegionView> = owner.get("/v1/regions").await.expect(StatusCode::OK);
    let health = |name: &str| regions.iter().find(|r| r.name == name).unwrap().health.clone();
    assert_eq!(health("eu-central-1").status, "healthy", "{regions:?}");
    assert_eq!(health("eu-central-1").pending_commands, 0);
    assert_eq!(health("us-east-1").status, "unknown");
    assert_eq!(health("us-east-1").pending_commands, 2);
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn the_same_loop_runs_over_nats_jetstream(options: PgPoolOptions, connect: PgConnectOptions) {
    let (t, prefix) = start_on_nats(options, connect, |_| {}).await;
    let acme = t.tenant("acme").await;
    let owner = t.client(&acme);
    let project = owner.create_project("web").await.id.to_string();
    let zones = crate::common::zones("eu-central-1");
    let link = moke_region::NatsLink::connect(&nats_url(), &prefix, "eu-central-1").await.unwrap();
    let region = Agent::new(AgentConfig::new("eu-central-1", zones), Transport::Nats(Box::new(link))).unwrap();

    let (cluster, op) = create_cluster(&owner, &project, "prod").await;
    let (_, pool_op) = owner.create_node_pool(&project, &cluster, "workers", 4).await;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let mut applied = 0;
    while applied < 2 {
        applied += region.run_once().await.unwrap();
        assert!(std::time::Instant::now() < deadline, "commands did not arrive over NATS");
    }
    // The control plane asks for its certificate and gets it over the same stream.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while region.state().clusters[&cluster].endpoint.is_none() {
        region.run_once().await.unwrap();
        assert!(std::time::Instant::now() < deadline, "the control plane never got its certificate");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    for op in [&op, &pool_op] {
        let done: OperationView = owner.get(&format!("/v1/operations/{}?wait=10s", op.id)).await.expect(StatusCode::OK);
        assert_eq!(done.status, OperationStatus::Succeeded, "{done:?}");
    }
    let view: ClusterView =
        owner.get(&format!("/v1/projects/{project}/clusters/{cluster}")).await.expect(StatusCode::OK);
    assert_eq!(view.status.phase, "running", "{view:?}");
    assert!(view.status.endpoint.is_some(), "the create ended with an endpoint: {view:?}");
    assert_eq!(t.count("outbox WHERE delivered_at IS NULL").await, 0, "every row was published and acknowledged");
    let state = region.state();
    assert_eq!(state.node_pools.values().next().unwrap().nodes.len(), 4);

    // Publishing the same rows again is de-duplicated by their message ids.
    sqlx::query("UPDATE outbox SET delivered_at = NULL").execute(&t.pool).await.unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while t.count("outbox WHERE delivered_at IS NULL").await > 0 {
        assert!(std::time::Instant::now() < deadline, "the relay did not republish");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(region.run_once().await.unwrap(), 0, "JetStream dropped the duplicates");
    assert_eq!(region.state(), state);

    drop_nats_streams(&prefix).await;
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn anti_entropy_repairs_a_lost_command(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let acme = t.tenant("acme").await;
    let owner = t.client(&acme);
    let project = owner.create_project("web").await.id.to_string();
    let (cluster, op) = create_cluster(&owner, &project, "prod").await;
    let cluster_path = format!("/v1/projects/{project}/clusters/{cluster}");
    // The command is lost: marked delivered long ago, never applied.
    sqlx::query(
        "UPDATE outbox SET delivered_at = now() - interval '10 minutes', created_at = now() - interval '10 minutes'",
    )
    .execute(&t.pool)
    .await
    .unwrap();
    let region = agent(&t, None);
    settle(&t, &region).await;
    assert!(region.state().clusters.is_empty(), "nothing arrived");

    assert_eq!(t.app.repair_drift_once().await.unwrap(), 1);
    let view: ClusterView = owner.get(&cluster_path).await.expect(StatusCode::OK);
    assert_eq!(view.status.conditions[0].condition_type, "Drifted", "{view:?}");
    assert_eq!(t.app.repair_drift_once().await.unwrap(), 0, "a repair in flight is not sent twice");

    settle(&t, &region).await;
    let view: ClusterView = owner.get(&cluster_path).await.expect(StatusCode::OK);
    assert_eq!(view.status.phase, "running", "{view:?}");
    assert_eq!(view.status.conditions[0].condition_type, "Ready", "the region's report replaces the drift mark");
    assert_eq!(owner.operation(op.id).await.status, OperationStatus::Succeeded);
    assert_eq!(t.app.repair_drift_once().await.unwrap(), 0, "nothing left behind");
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn a_poison_command_is_dead_lettered_and_fails_its_operation(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let acme = t.tenant("acme").await;
    let owner = t.client(&acme);
    let project = owner.create_project("web").await.id.to_string();
    let (_, op) = create_cluster(&owner, &project, "prod").await;
    sqlx::query("UPDATE outbox SET command = '\\xdeadbeefdeadbeef'::bytea").execute(&t.pool).await.unwrap();
    let region = agent(&t, None);
    settle(&t, &region).await;

    let failed = owner.operation(op.id).await;
    assert_eq!(failed.status, OperationStatus::Failed, "{failed:?}");
    let error = failed.error.clone().unwrap_or_else(|| panic!("{failed:?}"));
    assert_eq!(error.code, "command_dead_lettered");
    assert!(error.message.contains("undecodable"), "the evidence is kept: {failed:?}");
    let dead: i64 = sqlx::query_scalar("SELECT count(*) FROM outbox WHERE dead_lettered_at IS NOT NULL")
        .fetch_one(&t.pool)
        .await
        .unwrap();
    assert_eq!(dead, 1);
    assert!(region.state().clusters.is_empty());
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn a_batch_of_reports_applies_as_if_one_by_one(options: PgPoolOptions, connect: PgConnectOptions) {
    use moke_proto::region as pb;
    let t = TestApp::start(options, connect).await;
    let acme = t.tenant("acme").await;
    let owner = t.client(&acme);
    let project = owner.create_project("web").await.id.to_string();
    let (cluster, op) = create_cluster(&owner, &project, "prod").await;
    let op = op.id.to_string();
    let report = |message| pb::Status { region: "eu-central-1".into(), message: Some(message) };
    let observed = |phase: &str, generation: i64| {
        report(pb::status::Message::Observation(pb::Observation {
            resource_type: "cluster".into(),
            resource_id: cluster.clone(),
            observed_generation: generation,
            phase: phase.into(),
            ..Default::default()
        }))
    };
    let progress = |status: &str, progress: i32| {
        report(pb::status::Message::Progress(pb::OperationProgress {
            operation_id: op.clone(),
            status: status.into(),
            step: status.into(),
            progress,
            ..Default::default()
        }))
    };
    // In region order: the last observation wins, and a late "running"
    // (a redelivered command) does not take the place of "succeeded".
    let applied = t
        .app
        .apply_region_statuses(vec![
            observed("provisioning", 1),
            progress("running", 50),
            observed("running", 1),
            progress("succeeded", 100),
            progress("running", 60),
            observed("provisioning", 0),
        ])
        .await;
    assert!(applied.iter().all(Option::is_none), "{applied:?}");
    let done = owner.operation(&op).await;
    assert_eq!((done.status, done.progress), (OperationStatus::Succeeded, 100), "{done:?}");
    let phase: String = sqlx::query_scalar("SELECT status->>'phase' FROM clusters").fetch_one(&t.pool).await.unwrap();
    assert_eq!(phase, "running", "an observation of an older generation changes nothing");
}

/// An encoded report of eu-central-1.
fn report(message: moke_proto::region::status::Message) -> Vec<u8> {
    use prost::Message;
    moke_proto::region::Status { region: "eu-central-1".into(), message: Some(message) }.encode_to_vec()
}

/// eu-central-1's heartbeat after `applied` commands.
fn heartbeat(applied: i64) -> Vec<u8> {
    let beat = moke_proto::region::Heartbeat { region: "eu-central-1".into(), commands_applied: applied };
    report(moke_proto::region::status::Message::Heartbeat(beat))
}

/// A control plane's certificate request (`csr_pem` may hold what the database refuses).
fn serving_csr(cluster: &str, csr_pem: &str) -> Vec<u8> {
    let request = moke_proto::region::ServingCertificateRequest { cluster_id: cluster.into(), csr_pem: csr_pem.into() };
    report(moke_proto::region::status::Message::ServingCsr(request))
}

/// A report the database refuses (a certificate request carrying a NUL) is
/// tried a few times, then set aside with its error; the reports around it
/// are applied at once, and the inbox never stalls behind it. An unreadable
/// report is set aside at once. Nothing is dropped unseen.
#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn a_report_that_fails_alone_is_dead_lettered_and_holds_nothing_up(
    options: PgPoolOptions,
    connect: PgConnectOptions,
) {
    // Set aside after five failures however young (five minutes in production).
    let t = TestApp::start_with(options, connect, |config| config.outbox.report_dead_letter_after_seconds = 0).await;
    let acme = t.tenant("acme").await;
    let owner = t.client(&acme);
    let project = owner.create_project("web").await.id.to_string();
    let (cluster, _) = create_cluster(&owner, &project, "prod").await;
    let refused = serving_csr(&cluster, "-----BEGIN CERTIFICATE REQUEST-----\0");
    // A refused request another one for the same cluster follows is replaced by it, not retried.
    let (other, _) = create_cluster(&owner, &project, "stage").await;
    let (replaced, replacing) =
        (serving_csr(&other, "first\0"), serving_csr(&other, "-----BEGIN CERTIFICATE REQUEST-----"));
    // In one statement, so one ingest round takes them all.
    let messages = vec![heartbeat(1), refused, b"not a report".to_vec(), replaced, replacing, heartbeat(2)];
    sqlx::query(
        "INSERT INTO region_status (region, message)
         SELECT 'eu-central-1', m FROM unnest($1::bytea[]) WITH ORDINALITY AS r(m, n) ORDER BY n",
    )
    .bind(messages)
    .execute(&t.pool)
    .await
    .unwrap();
    // The server's own ingest takes reports too; together they empty the inbox of all but what is set aside.
    crate::common::eventually(40, "the inbox to be ingested", async || {
        // Tried again on a backoff: 1, 2, 4 and 8 s.
        while t.app.ingest_region_status_once().await.unwrap() > 0 {}
        t.count("region_status WHERE dead_lettered_at IS NULL").await == 0
    })
    .await;
    let applied: i64 = sqlx::query_scalar("SELECT commands_applied FROM region_health WHERE region = 'eu-central-1'")
        .fetch_one(&t.pool)
        .await
        .unwrap();
    assert_eq!(applied, 2, "both heartbeats applied, in order");
    let kept: Vec<(i32, String, bool)> =
        sqlx::query_as("SELECT attempts, last_error, dead_lettered_at IS NOT NULL FROM region_status ORDER BY id")
            .fetch_all(&t.pool)
            .await
            .unwrap();
    assert_eq!(kept.len(), 2, "{kept:?}");
    assert!(kept[0].0 == 5 && kept[0].1.contains("0x00") && kept[0].2, "{kept:?}");
    assert!(kept[1].0 == 1 && kept[1].1.contains("undecodable") && kept[1].2, "{kept:?}");
}

/// On NATS too: a report the database refuses is delivered again a few
/// times, then kept in the dead-letter stream with why; the reports after
/// it are applied meanwhile.
#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn on_nats_a_report_that_fails_alone_goes_to_the_dead_letter_stream(
    options: PgPoolOptions,
    connect: PgConnectOptions,
) {
    use moke_proto::{region as pb, subjects};
    use prost::Message;
    let (t, prefix) =
        start_on_nats(options, connect, |config| config.outbox.report_dead_letter_after_seconds = 0).await;
    let acme = t.tenant("acme").await;
    let owner = t.client(&acme);
    let project = owner.create_project("web").await.id.to_string();
    let (cluster, _) = create_cluster(&owner, &project, "prod").await;
    let js = async_nats::jetstream::new(async_nats::connect(nats_url()).await.unwrap());
    let refused = serving_csr(&cluster, "-----BEGIN CERTIFICATE REQUEST-----\0");
    for message in [heartbeat(7), refused, heartbeat(9)] {
        js.publish(subjects::status(&prefix, "eu-central-1"), message.into()).await.unwrap().await.unwrap();
    }
    let dead_letters = subjects::status_dead_letters(&prefix, "eu-central-1");
    crate::common::eventually(40, "the refused report to be dead-lettered", async || {
        let Ok(stream) = js.get_stream(subjects::dead_letter_stream(&prefix)).await else { return false };
        stream.get_last_raw_message_by_subject(&dead_letters).await.is_ok()
    })
    .await;
    let stream = js.get_stream(subjects::dead_letter_stream(&prefix)).await.unwrap();
    let kept = stream.get_last_raw_message_by_subject(&dead_letters).await.unwrap();
    let why = kept.headers.get(subjects::DEAD_LETTER_REASON).map(|v| v.to_string()).unwrap_or_default();
    assert!(why.contains("0x00"), "{why}");
    assert!(
        pb::Status::decode(kept.payload).is_ok_and(|s| matches!(s.message, Some(pb::status::Message::ServingCsr(_))))
    );
    let applied: i64 = sqlx::query_scalar("SELECT commands_applied FROM region_health WHERE region = 'eu-central-1'")
        .fetch_one(&t.pool)
        .await
        .unwrap();
    assert_eq!(applied, 9, "the heartbeats around it applied, in order");
    drop_nats_streams(&prefix).await;
}
