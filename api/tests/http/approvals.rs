//! The organization's change policy: versions in force from their
//! `effective_at`, approvals of held changes (asked, refused to the
//! requester and to whoever lacks the approver role, approved by another
//! owner and then carried out, rejected, withdrawn, expired), disruption
//! limits, and the policy version in the audit log.

use moke_api::model::{
    ApprovalView, NodePoolView, OperationStatus, OperationView, OrgPolicyVersion, OrgPolicyView, Page,
};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};

use moke_proto::v1::operation_service_client::OperationServiceClient;
use moke_proto::v1::org_service_client::OrgServiceClient;
use moke_proto::v1::{
    ApprovalPolicy, DecideOperationRequest, GetOperationApprovalRequest, GetOrgPolicyRequest, UpdateOrgPolicyRequest,
};
use tonic::Code;
use tonic::transport::Channel;

use crate::cancel::{cluster_with_pool, drive, finished, region};
use crate::common::{Client, TestApp};
use crate::grpc::{Bearer, reason, violations};

/// The audit events of `action`, oldest first: who made each, and its details.
async fn audited(t: &TestApp, action: &str) -> Vec<(uuid::Uuid, Value)> {
    sqlx::query_as("SELECT principal_id, details FROM audit_events WHERE action = $1 ORDER BY id")
        .bind(action)
        .fetch_all(&t.pool)
        .await
        .unwrap()
}

async fn events(t: &TestApp, event_type: &str) -> Vec<Value> {
    sqlx::query_scalar("SELECT payload FROM events WHERE event_type = $1 ORDER BY created_at")
        .bind(event_type)
        .fetch_all(&t.pool)
        .await
        .unwrap()
}

fn decide(op: &OperationView, decision: &str) -> String {
    format!("/v1/operations/{}/{decision}", op.id)
}

async fn awaits(client: &Client<'_>, op: &OperationView) -> ApprovalView {
    client.get(&format!("/v1/operations/{}/approval", op.id)).await.expect(StatusCode::OK)
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn held_changes_wait_for_another_owner_and_never_act_unapproved(
    options: PgPoolOptions,
    connect: PgConnectOptions,
) {
    let t = TestApp::start(options, connect).await;
    let tenant = t.tenant("acme").await;
    let robot = t.client(&tenant);
    let (alice_id, alice) = t.member(&tenant, "alice@acme.test", "owner").await;
    let (bob_id, bob) = t.member(&tenant, "bob@acme.test", "owner").await;
    let (_, carol) = t.member(&tenant, "carol@acme.test", "member").await;
    let (erin_id, erin) = t.member(&tenant, "erin@acme.test", "member").await;
    let (alice, bob, carol) = (robot.with_token(&alice), robot.with_token(&bob), robot.with_token(&carol));
    let region = region(&t);
    let (project, cluster, pool) = cluster_with_pool(&region, &alice, 4).await;
    let cluster_path = format!("/v1/projects/{project}/clusters/{}", cluster.id);
    let pool_path = format!("{cluster_path}/node-pools/{}", pool.id);

    // Version 1: deletions and big scale-downs wait for an owner.
    let policy = json!({ "approvals": { "required_for": ["cluster_delete", "node_pool_scale_down", "cluster_delete", "upgrade_outside_window"],
                                        "approver_role": "owner", "expires_after_hours": 1 } });
    carol
        .put::<Value>(&robot.org_path("/policy"), policy.clone())
        .await
        .refused_with(StatusCode::FORBIDDEN, "forbidden");
    robot
        .put::<Value>(&robot.org_path("/policy"), policy.clone())
        .await
        .refused_with(StatusCode::FORBIDDEN, "not_a_person");
    let v1: OrgPolicyView = alice.put(&robot.org_path("/policy"), policy).await.expect(StatusCode::OK);
    let in_force = v1.in_force.expect("in force at once");
    assert_eq!(in_force.version, 1);
    assert_eq!(in_force.approvals.required_for.len(), 3, "a rule named twice counts once");
    assert_eq!(in_force.approvals.scale_down_over_percent, 50, "the default");

    // A scale-down of half the nodes or less goes ahead; more waits.
    let small: OperationView =
        alice.patch(&pool_path, json!({ "spec": { "count": 2 } })).await.expect(StatusCode::ACCEPTED);
    assert_eq!(small.status, OperationStatus::Pending);
    drive(&region, "scaled to 2", async || finished(&alice, &small, OperationStatus::Succeeded).await).await;
    // The next step down is measured from the 4 nodes it ran lately: 2 → 1 would wait, also when
    // the 4-node spec was written long before the 24 hours (it was in force when they began).
    sqlx::query(
        "UPDATE spec_revisions SET created_at = created_at - interval '2 days' WHERE resource_id = $1 AND generation = 1",
    )
        .bind(pool.id.uuid())
        .execute(&t.pool)
        .await
        .unwrap();
    let step: Value = alice
        .patch(&format!("{pool_path}?dry_run=true"), json!({ "spec": { "count": 1 } }))
        .await
        .expect(StatusCode::OK);
    assert_eq!(step["approval"]["rule"], "node_pool_scale_down", "{step}");
    let grow: OperationView =
        alice.patch(&pool_path, json!({ "spec": { "count": 4 } })).await.expect(StatusCode::ACCEPTED);
    drive(&region, "scaled to 4", async || finished(&alice, &grow, OperationStatus::Succeeded).await).await;

    // A dry run says the change would wait, and for whom.
    let plan: Value = alice
        .patch(&format!("{pool_path}?dry_run=true"), json!({ "spec": { "count": 1 } }))
        .await
        .expect(StatusCode::OK);
    assert_eq!(plan["approval"]["rule"], "node_pool_scale_down", "{plan}");
    assert_eq!(plan["approval"]["policy_version"], 1);
    assert_eq!(plan["approval"]["approver_role"], "owner");

    let held: OperationView =
        alice.patch(&pool_path, json!({ "spec": { "count": 1 } })).await.expect(StatusCode::ACCEPTED);
    assert_eq!(held.status, OperationStatus::AwaitingApproval);
    assert_eq!(held.step, "awaiting_approval");
    let again: OperationView =
        alice.patch(&pool_path, json!({ "spec": { "count": 1 } })).await.expect(StatusCode::ACCEPTED);
    assert_eq!(again.id, held.id, "the same request is answered with the one waiting");
    alice
        .patch::<Value>(&pool_path, json!({ "spec": { "count": 0 } }))
        .await
        .refused_with(StatusCode::CONFLICT, "approval_pending");
    // Nothing changed and nothing reached the region.
    for _ in 0..3 {
        region.run_once().await.unwrap();
        region.tick().await.unwrap();
    }
    let unchanged: NodePoolView = alice.get(&pool_path).await.expect(StatusCode::OK);
    assert_eq!((unchanged.spec.count, unchanged.generation), (4, pool.generation + 2));
    assert_eq!(alice.operation(held.id).await.status, OperationStatus::AwaitingApproval);

    let request = awaits(&carol, &held).await;
    assert_eq!((request.policy_version, request.requested_by.clone()), (1, alice_id.clone()));
    assert_eq!(request.plan.operations[0].diff[0].path, "/count", "{:?}", request.plan);
    assert_eq!(events(&t, "operation.awaiting_approval").await.len(), 1);

    // Not the requester, not a member, not a service account.
    alice.post::<Value>(&decide(&held, "approve"), json!({})).await.refused_with(StatusCode::FORBIDDEN, "own_request");
    alice.post::<Value>(&decide(&held, "reject"), json!({})).await.refused_with(StatusCode::FORBIDDEN, "own_request");
    carol
        .post::<Value>(&decide(&held, "approve"), json!({}))
        .await
        .refused_with(StatusCode::FORBIDDEN, "approver_role");
    robot
        .post::<Value>(&decide(&held, "approve"), json!({}))
        .await
        .refused_with(StatusCode::FORBIDDEN, "approver_not_a_person");
    // Nor anyone whose role came after the request: a second account invited, or a member promoted,
    // could be the requester's own.
    let (_, dave) = t.member(&tenant, "dave@acme.test", "owner").await;
    let promoted = json!({ "role": "owner" });
    alice.patch::<Value>(&alice.org_path(&format!("/members/{erin_id}")), promoted).await.expect(StatusCode::OK);
    for newcomer in [robot.with_token(&dave), robot.with_token(&erin)] {
        let refused = newcomer.post::<Value>(&decide(&held, "approve"), json!({})).await;
        refused.refused_with(StatusCode::FORBIDDEN, "approver_too_recent");
    }

    // Nor who made the service account that asked, nor who gave it the token it asked with.
    let account = bob.create_service_account("deployer", "owner").await;
    let deployer = alice.create_account_token(&account.id.to_string(), "ci", json!({})).await;
    let deployer = robot.with_token(&deployer.token);
    let by_robot: OperationView = deployer.delete(&cluster_path).await.expect(StatusCode::ACCEPTED);
    for maker in [&alice, &bob] {
        let refused = maker.post::<Value>(&decide(&by_robot, "approve"), json!({})).await;
        refused.refused_with(StatusCode::FORBIDDEN, "own_request");
    }
    let withdrawn: OperationView =
        deployer.post(&format!("/v1/operations/{}/cancel", by_robot.id), json!({})).await.expect(StatusCode::OK);
    assert_eq!(withdrawn.status, OperationStatus::Failed);

    // Another owner approves: the change is made then, as bob, and the region acts.
    let started: OperationView =
        bob.post(&decide(&held, "approve"), json!({ "reason": "traffic is low" })).await.expect(StatusCode::OK);
    assert_eq!((started.id, started.status), (held.id, OperationStatus::Pending));
    let answered: OperationView = bob.post(&decide(&held, "approve"), json!({})).await.expect(StatusCode::OK);
    assert_eq!(answered.id, held.id, "approving again answers again");
    drive(&region, "scaled to 1", async || finished(&alice, &held, OperationStatus::Succeeded).await).await;
    let scaled: NodePoolView = alice.get(&pool_path).await.expect(StatusCode::OK);
    assert_eq!(scaled.spec.count, 1);
    let decided = awaits(&alice, &held).await;
    assert_eq!(decided.decided_by.as_deref(), Some(bob_id.as_str()));
    assert_eq!(decided.reason.as_deref(), Some("traffic is low"));
    let updates = audited(&t, "node_pool.update").await;
    let (by, details) = updates.last().unwrap();
    assert_eq!(format!("usr_{}", by.simple()), bob_id, "made as the approver");
    assert_eq!(
        (details["operation_id"].as_str(), details["policy_version"].as_i64()),
        (Some(&*held.id.to_string()), Some(1))
    );
    assert_eq!(audited(&t, "operation.approve").await.len(), 1);
    assert_eq!(audited(&t, "operation.approval_request").await[0].1["rule"], "node_pool_scale_down");
    assert_eq!(events(&t, "operation.approved").await.len(), 1);

    // A request nobody decided in time never acts, even before the sweep.
    let delete: OperationView = alice.delete(&cluster_path).await.expect(StatusCode::ACCEPTED);
    assert_eq!(delete.status, OperationStatus::AwaitingApproval);
    sqlx::query("UPDATE approval_requests SET expires_at = now() - interval '1 second'")
        .execute(&t.pool)
        .await
        .unwrap();
    bob.post::<Value>(&decide(&delete, "approve"), json!({}))
        .await
        .refused_with(StatusCode::CONFLICT, "approval_closed");
    assert_eq!(t.app.expire_approvals_once().await.unwrap(), 1);
    let expired = alice.operation(delete.id).await;
    assert_eq!(expired.error.map(|e| e.code).as_deref(), Some("approval_expired"));
    assert!(alice.get::<Value>(&cluster_path).await.expect(StatusCode::OK)["deletion_requested_at"].is_null());

    // Rejected (over GraphQL): it fails with the reason and never acts.
    let delete: OperationView = alice.delete(&cluster_path).await.expect(StatusCode::ACCEPTED);
    let rejected: Value = bob
        .post(
            "/graphql",
            json!({ "query": format!(
                "mutation {{ rejectOperation(id: \"{}\", reason: \"not today\") {{ status error {{ code message }} }} }}",
                delete.id) }),
        )
        .await
        .expect(StatusCode::OK);
    assert_eq!(rejected["data"]["rejectOperation"]["error"]["code"], "rejected", "{rejected}");
    assert!(rejected["data"]["rejectOperation"]["error"]["message"].as_str().unwrap().ends_with("not today"));
    assert!(alice.get::<Value>(&cluster_path).await.expect(StatusCode::OK)["deletion_requested_at"].is_null());

    // A held request is answered under its Idempotency-Key: a retry, after the rejection too, is
    // answered the same Operation rather than asking again.
    let window =
        json!({ "spec": { "maintenance_window": { "day": "sunday", "start_time": "03:00", "duration_hours": 4 } } });
    let move_window =
        || alice.request(Method::PATCH, &cluster_path).header("idempotency-key", "window-1").json(&window);
    let held_window: OperationView = alice.send(move_window()).await.expect(StatusCode::ACCEPTED);
    assert_eq!(held_window.status, OperationStatus::AwaitingApproval);
    bob.post::<Value>(&decide(&held_window, "reject"), json!({})).await.expect(StatusCode::OK);
    let retried: OperationView = alice.send(move_window()).await.expect(StatusCode::ACCEPTED);
    assert_eq!(retried.id, held_window.id, "the key's answer, not a second request");
    assert_eq!(alice.operation(held_window.id).await.error.map(|e| e.code).as_deref(), Some("rejected"));
    assert_eq!(audited(&t, "operation.approval_request").await.len(), 5, "asked once for the window");

    // Withdrawn by its requester through cancel.
    let delete: OperationView = alice.delete(&cluster_path).await.expect(StatusCode::ACCEPTED);
    let withdrawn: OperationView =
        alice.post(&format!("/v1/operations/{}/cancel", delete.id), json!({})).await.expect(StatusCode::OK);
    assert_eq!(withdrawn.error.map(|e| e.code).as_deref(), Some("cancelled"));
    assert_eq!(awaits(&alice, &delete).await.state, moke_api::model::ApprovalState::Withdrawn);
    bob.post::<Value>(&decide(&delete, "approve"), json!({}))
        .await
        .refused_with(StatusCode::CONFLICT, "approval_closed");

    // Version 2: at most one disruptive operation at a time in a cluster; no approvals.
    let v2: OrgPolicyView = alice
        .put(&robot.org_path("/policy"), json!({ "limits": { "max_per_cluster": 1 } }))
        .await
        .expect(StatusCode::OK);
    assert_eq!(v2.in_force.unwrap().version, 2);
    let recycle: OperationView =
        alice.post(&format!("{pool_path}/recycle"), json!({})).await.expect(StatusCode::ACCEPTED);
    let refused = alice.delete::<Value>(&cluster_path).await.refused_with(StatusCode::CONFLICT, "policy_limit");
    assert!(refused.detail.contains("limits.max_per_cluster") && refused.detail.contains("version 2"), "{refused:?}");
    let recycles = audited(&t, "node_pool.recycle").await;
    assert_eq!(recycles.last().unwrap().1["policy_version"], 2);
    drive(&region, "recycled", async || finished(&alice, &recycle, OperationStatus::Succeeded).await).await;

    // Version 3 takes effect tomorrow: version 2 stays in force until then.
    let tomorrow = chrono::Utc::now() + chrono::Duration::days(1);
    let v3: OrgPolicyView = alice
        .put(
            &robot.org_path("/policy"),
            json!({ "effective_at": tomorrow, "approvals": { "required_for": ["cluster_delete"] } }),
        )
        .await
        .expect(StatusCode::OK);
    assert_eq!(v3.in_force.map(|v| v.version), Some(2));
    assert_eq!(v3.scheduled.iter().map(|v| v.version).collect::<Vec<_>>(), [3]);
    let an_hour_ago = chrono::Utc::now() - chrono::Duration::hours(1);
    let bad = alice
        .put::<Value>(
            &robot.org_path("/policy"),
            json!({ "effective_at": an_hour_ago, "limits": { "max_per_region": 0 } }),
        )
        .await
        .refused(StatusCode::BAD_REQUEST);
    assert_eq!(bad.fields(), ["limits.max_per_region", "effective_at"], "{bad:?}");
    let versions: Page<OrgPolicyVersion> =
        carol.get(&robot.org_path("/policy/versions?limit=2")).await.expect(StatusCode::OK);
    assert_eq!(versions.items.iter().map(|v| v.version).collect::<Vec<_>>(), [3, 2]);
    let graphql: Value = carol
        .post("/graphql", json!({ "query": "query($org: ID!) { org(id: $org) { policy { inForce { version limits { maxPerCluster } } scheduled { version } } } }",
                                  "variables": { "org": robot.org } }))
        .await
        .expect(StatusCode::OK);
    assert_eq!(graphql["data"]["org"]["policy"]["inForce"]["limits"]["maxPerCluster"], 1, "{graphql}");
    assert_eq!(audited(&t, "org.policy_update").await.len(), 3);

    // The same over gRPC.
    let channel = Channel::from_shared(t.base.clone()).unwrap().connect().await.unwrap();
    let as_carol = Bearer(format!("Bearer {}", carol.token).parse().unwrap());
    let mut orgs = OrgServiceClient::with_interceptor(channel.clone(), as_carol.clone());
    let policy = orgs.get_org_policy(GetOrgPolicyRequest { org: robot.org.clone() }).await.unwrap().into_inner();
    assert_eq!((policy.in_force.unwrap().version, policy.scheduled[0].version), (2, 3));
    let request = UpdateOrgPolicyRequest {
        org: robot.org.clone(),
        approvals: Some(ApprovalPolicy { required_for: vec!["cluster_explode".into()], ..Default::default() }),
        ..Default::default()
    };
    let refused = orgs.update_org_policy(request.clone()).await.unwrap_err();
    assert_eq!(
        (refused.code(), violations(&refused)),
        (Code::InvalidArgument, vec!["approvals.required_for".to_string()])
    );
    let mut as_alice =
        OrgServiceClient::with_interceptor(channel.clone(), Bearer(format!("Bearer {}", alice.token).parse().unwrap()));
    let bad_time = UpdateOrgPolicyRequest {
        approvals: None,
        effective_time: Some(prost_types::Timestamp { seconds: 0, nanos: -1 }),
        ..request
    };
    let refused = as_alice.update_org_policy(bad_time).await.unwrap_err();
    assert_eq!(
        (refused.code(), reason(&refused)),
        (Code::InvalidArgument, "invalid_request".to_string()),
        "{refused:?}"
    );
    let mut operations = OperationServiceClient::with_interceptor(channel, as_carol);
    let approval = operations
        .get_operation_approval(GetOperationApprovalRequest { operation: held.id.to_string() })
        .await
        .unwrap()
        .into_inner();
    assert_eq!((approval.state.as_str(), approval.decided_by.as_str()), ("approved", bob_id.as_str()));
    let refused = operations
        .approve_operation(DecideOperationRequest { operation: held.id.to_string(), ..Default::default() })
        .await
        .unwrap_err();
    assert_eq!(refused.code(), Code::PermissionDenied, "a member approves nothing: {refused:?}");
}
