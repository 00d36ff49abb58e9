//! Automatic upgrades through the public API against the simulated region,
//! in simulated time: a cluster on a release channel is told of its
//! upgrade, held by the notice period, by its maintenance window and by a
//! maintenance exclusion, then upgraded in the next window; a cluster on
//! no channel is left alone until its version passes its end of life.

use chrono::{DateTime, Utc};
use moke_api::app::infra::clusters::auto_upgrades::AutomaticUpgradeRound;
use moke_api::model::{
    AuditEventView, AutomaticUpgradeReason, ClusterRevisionView, ClusterUpgrades, ClusterView, OperationView, Page,
};
use moke_region::{AgentConfig, Transport};
use reqwest::StatusCode;
use serde_json::{Value, json};
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};

use crate::common::{BackgroundAgent, TestApp, zones};

fn at(text: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(text).unwrap().to_utc()
}

fn round(noticed: usize, started: usize, finished: usize) -> AutomaticUpgradeRound {
    AutomaticUpgradeRound { noticed, started, finished }
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn clusters_are_upgraded_on_their_own_after_notice_inside_their_window_and_outside_exclusions(
    options: PgPoolOptions,
    connect: PgConnectOptions,
) {
    // The test moves time itself: the gateway's own round runs once, at its start, before any cluster.
    let t = TestApp::start_with(options, connect, |config| {
        config.lifecycle.auto_upgrade_every_seconds = 1800;
        config.lifecycle.auto_upgrade_notice_hours = 168;
    })
    .await;
    let _region = BackgroundAgent::start(
        AgentConfig::new("eu-central-1", zones("eu-central-1")),
        Transport::Postgres(t.pool.clone()),
    );
    let tenant = t.tenant("acme").await;
    let owner = t.client(&tenant);
    t.member(&tenant, "ops@acme.test", "owner").await;
    t.member(&tenant, "dev@acme.test", "admin").await;
    let endpoint = json!({ "url": "https://hooks.example.invalid/", "event_types": ["cluster.*"] });
    owner.post::<Value>(&owner.org_path("/webhooks"), endpoint).await.expect(StatusCode::CREATED);
    let project = owner.create_project("web").await.id.to_string();
    let clusters = format!("/v1/projects/{project}/clusters");

    // Exclusions are checked field by field.
    let bad = json!({ "name": "bad", "spec": {
        "region": "eu-central-1",
        "maintenance_exclusions": [
            { "name": "peak", "start_date": "2027-01-10", "end_date": "2027-01-09" },
            { "name": "peak", "start_date": "2027-01-01", "end_date": "2027-04-30" },
        ],
    } });
    let problem = owner.post::<Value>(&clusters, bad).await.refused(StatusCode::BAD_REQUEST);
    assert_eq!(problem.code_of("spec.maintenance_exclusions[0].end_date"), "before_start");
    assert_eq!(problem.code_of("spec.maintenance_exclusions[1].name"), "duplicate");
    assert_eq!(problem.code_of("spec.maintenance_exclusions[1].end_date"), "too_long");
    let channel = json!({ "name": "bad", "spec": { "region": "eu-central-1", "release_channel": "nightly" } });
    owner.post::<Value>(&clusters, channel).await.refused(StatusCode::BAD_REQUEST);
    let ancient = json!({ "name": "bad", "spec": { "region": "eu-central-1",
        "maintenance_exclusions": [{ "name": "old", "start_date": "0000-01-01", "end_date": "0000-01-02" }] } });
    let problem = owner.post::<Value>(&clusters, ancient).await.refused(StatusCode::BAD_REQUEST);
    assert_eq!(problem.code_of("spec.maintenance_exclusions[0].start_date"), "out_of_range");
    // A channel acts long after the request: not with a credential that expires.
    let brief = owner
        .post::<Value>(&owner.org_path("/tokens"), json!({ "name": "ci", "role": "admin", "expires_in_seconds": 3600 }))
        .await
        .expect(StatusCode::CREATED);
    let on_channel = json!({ "name": "brief", "spec": { "region": "eu-central-1", "release_channel": "rapid" } });
    let refused = owner.with_token(brief["token"].as_str().unwrap()).post::<Value>(&clusters, on_channel).await;
    refused.refused_with(StatusCode::FORBIDDEN, "exceeds_credential");

    // On the regular channel (1.33), in a Saturday window, with an exclusion
    // over the third weekend of January; and one on no channel.
    let spec = json!({
        "region": "eu-central-1", "kubernetes_version": "1.32", "release_channel": "regular",
        "maintenance_window": { "day": "saturday", "start_time": "02:00", "duration_hours": 4 },
        "maintenance_exclusions": [{ "name": "sale", "start_date": "2027-01-15", "end_date": "2027-01-17" }],
    });
    let (prod, op) = owner.create_cluster(&project, "prod", spec).await;
    owner.succeeds(&op).await;
    let (legacy, op) = owner
        .create_cluster(&project, "legacy", json!({ "region": "eu-central-1", "kubernetes_version": "1.32" }))
        .await;
    owner.succeeds(&op).await;
    let prod_path = format!("{clusters}/{}", prod.id);
    let legacy_path = format!("{clusters}/{}", legacy.id);
    let upgrades =
        async |path: &str| owner.get::<ClusterUpgrades>(&format!("{path}/upgrades")).await.expect(StatusCode::OK);

    // Due, but nobody was told yet: no start time.
    let due = upgrades(&prod_path).await.automatic.expect("an upgrade on its own");
    assert_eq!((due.kubernetes_version.as_str(), due.reason), ("1.33", AutomaticUpgradeReason::ReleaseChannel));
    assert!(due.noticed_at.is_none() && due.earliest_start.is_none(), "{due:?}");
    assert!(upgrades(&legacy_path).await.automatic.is_none(), "no channel: upgraded by hand");

    // Monday 4 January 2027: the owners are told, once.
    let monday = at("2027-01-04T10:00:00Z");
    assert_eq!(t.app.run_automatic_upgrades(Some(monday)).await.unwrap(), round(1, 0, 0));
    assert_eq!(t.app.run_automatic_upgrades(Some(monday)).await.unwrap(), round(0, 0, 0), "told once");
    let told = upgrades(&prod_path).await.automatic.unwrap();
    assert_eq!(told.noticed_at, Some(monday));
    // A week's notice ends on the 11th; the window of the 16th is excluded.
    assert_eq!(told.earliest_start, Some(at("2027-01-23T02:00:00Z")), "{told:?}");
    let events: Vec<Value> =
        sqlx::query_scalar("SELECT payload FROM events WHERE event_type = 'cluster.upgrade_available'")
            .fetch_all(&t.pool)
            .await
            .unwrap();
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0]["cluster"]["name"], "prod");
    assert_eq!(
        (events[0]["upgrade_to"].as_str(), events[0]["reason"].as_str()),
        (Some("1.33"), Some("release_channel"))
    );
    assert_eq!(events[0]["earliest_start"], "2027-01-23T02:00:00Z");
    assert_eq!(
        t.count(
            "webhook_deliveries d JOIN events e ON e.id = d.event_id WHERE e.event_type = 'cluster.upgrade_available'"
        )
        .await,
        1
    );
    let mailed = |t: &TestApp| {
        let pool = t.pool.clone();
        async move {
            sqlx::query_scalar::<_, String>(
                "SELECT to_address || ': ' || subject FROM mail_outbox WHERE kind = 'cluster_upgrade' ORDER BY id",
            )
            .fetch_all(&pool)
            .await
            .unwrap()
        }
    };
    assert_eq!(
        mailed(&t).await,
        ["ops@acme.test: Moke: cluster prod will be upgraded to Kubernetes 1.33"],
        "owners only"
    );

    // Held: in the window but within the notice; in the window but on an
    // excluded day; after both but outside the window.
    for held in ["2027-01-09T03:00:00Z", "2027-01-16T03:00:00Z", "2027-01-19T10:00:00Z", "2027-01-23T06:00:00Z"] {
        assert_eq!(t.app.run_automatic_upgrades(Some(at(held))).await.unwrap(), round(0, 0, 0), "{held}");
    }
    let cluster: ClusterView = owner.get(&prod_path).await.expect(StatusCode::OK);
    assert_eq!(cluster.spec.kubernetes_version, "1.32");

    // Saturday 23 January, inside the window: it starts, as the system.
    assert_eq!(t.app.run_automatic_upgrades(Some(at("2027-01-23T02:30:00Z"))).await.unwrap(), round(0, 1, 0));
    let started = upgrades(&prod_path).await.automatic;
    // Once started the cluster's spec is on 1.33: nothing is due any more.
    assert!(started.is_none(), "{started:?}");
    let ops: Page<OperationView> =
        owner.get(&format!("/v1/projects/{project}/operations?kind=cluster_upgrade")).await.expect(StatusCode::OK);
    assert_eq!(ops.items.len(), 1, "{ops:?}");
    let op = ops.items[0].clone();
    owner.succeeds(&op).await;
    let cluster: ClusterView = owner.get(&prod_path).await.expect(StatusCode::OK);
    assert_eq!(
        (cluster.spec.kubernetes_version.as_str(), cluster.status.observed_generation),
        ("1.33", cluster.generation)
    );
    let revisions: Page<ClusterRevisionView> =
        owner.get(&format!("{prod_path}/revisions")).await.expect(StatusCode::OK);
    assert_eq!(
        (revisions.items[0].cause.as_deref(), revisions.items[0].created_by.as_deref()),
        (Some("cluster_upgrade"), Some("system"))
    );
    let audit: Page<AuditEventView> =
        owner.get(&owner.org_path("/audit-events?action=cluster.auto_upgrade")).await.expect(StatusCode::OK);
    assert_eq!(audit.items.len(), 1, "{audit:?}");
    assert_eq!(audit.items[0].details["reason"], "release_channel");

    // The owners are told how it ended, once; the event went with the Operation.
    assert_eq!(t.app.run_automatic_upgrades(Some(at("2027-01-23T03:00:00Z"))).await.unwrap(), round(0, 0, 1));
    assert_eq!(t.app.run_automatic_upgrades(Some(at("2027-01-23T03:05:00Z"))).await.unwrap(), round(0, 0, 0));
    assert_eq!(mailed(&t).await.last().unwrap(), "ops@acme.test: Moke: cluster prod now runs Kubernetes 1.33");
    assert_eq!(t.count("events WHERE event_type = 'cluster.upgrade_finished'").await, 1);

    // 1.32 ends on 28 February: the cluster on no channel is told, then
    // upgraded a notice period later (no window: any time).
    let march = at("2027-03-01T12:00:00Z");
    assert_eq!(t.app.run_automatic_upgrades(Some(march)).await.unwrap(), round(1, 0, 0));
    let reasons: Vec<String> = sqlx::query_scalar(
        "SELECT payload->>'reason' FROM events WHERE event_type = 'cluster.upgrade_available' ORDER BY created_at",
    )
    .fetch_all(&t.pool)
    .await
    .unwrap();
    assert_eq!(reasons, ["release_channel", "end_of_life"]);
    assert_eq!(t.app.run_automatic_upgrades(Some(at("2027-03-08T11:00:00Z"))).await.unwrap(), round(0, 0, 0));
    assert_eq!(t.app.run_automatic_upgrades(Some(at("2027-03-08T12:00:00Z"))).await.unwrap(), round(0, 1, 0));
    let ops: Page<OperationView> =
        owner.get(&format!("/v1/projects/{project}/operations?kind=cluster_upgrade")).await.expect(StatusCode::OK);
    assert_eq!(ops.items.len(), 2);
    owner.succeeds(&ops.items[0]).await;
    let legacy: ClusterView = owner.get(&legacy_path).await.expect(StatusCode::OK);
    assert_eq!(legacy.spec.kubernetes_version, "1.33");

    // Channels and exclusions change like any spec field, over GraphQL too.
    let patch = json!({ "spec": { "release_channel": "stable", "maintenance_exclusions": [] } });
    let op: OperationView = owner.patch(&prod_path, patch).await.expect(StatusCode::ACCEPTED);
    owner.succeeds(&op).await;
    let query = format!(
        r#"{{ cluster(project: "{project}", cluster: "prod") {{ spec {{ releaseChannel maintenanceExclusions {{ name }} }} }} }}"#
    );
    let (status, body) = t.post("/graphql", &tenant.token, json!({ "query": query })).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["data"]["cluster"]["spec"], json!({ "releaseChannel": "STABLE", "maintenanceExclusions": [] }));
}
