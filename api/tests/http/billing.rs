//! Billing end to end: usage a region reports becomes a draft invoice that
//! is rated on every read, is finalized once its month's grace period is
//! over (numbered without gaps, then immutable), and late usage lands on
//! the next invoice as an adjustment; the same invoice over REST, CSV,
//! gRPC and GraphQL.

use chrono::{DateTime, Datelike, Duration, TimeZone, Utc};
use moke_proto::v1::billing_service_client::BillingServiceClient;
use moke_proto::v1::{GetInvoiceRequest, ListInvoicesRequest};
use reqwest::StatusCode;
use serde_json::{Value, json};
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};

use crate::common::TestApp;

fn month_start(at: DateTime<Utc>) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(at.year(), at.month(), 1, 0, 0, 0).unwrap()
}

fn next_month(at: DateTime<Utc>) -> DateTime<Utc> {
    let (y, m) = if at.month() == 12 { (at.year() + 1, 1) } else { (at.year(), at.month() + 1) };
    Utc.with_ymd_and_hms(y, m, 1, 0, 0, 0).unwrap()
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn usage_becomes_a_draft_then_a_numbered_immutable_invoice(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let acme = t.tenant("acme").await;
    let owner = t.client(&acme);
    let project = owner.create_project("web").await.id.to_string();
    let (cluster, _) = owner.create_cluster(&project, "prod", json!({ "region": "eu-central-1" })).await;
    let cluster = cluster.id.to_string();
    let (pool, _) = owner.create_node_pool(&project, &cluster, "workers", 2).await;
    let pool = pool.id.to_string();

    // Two hours of one node, then 30 s of another (charged its 60 s minimum),
    // all in one month and in the past.
    let now = Utc::now();
    let base = if month_start(now - Duration::hours(3)) == month_start(now) {
        now - Duration::hours(3)
    } else {
        month_start(now) - Duration::hours(4)
    };
    // The cluster has been there for a day (usage before it existed is refused).
    sqlx::query("UPDATE clusters SET created_at = now() - interval '1 day'").execute(&t.pool).await.unwrap();
    let hour = Duration::hours(1);
    let invoice = t.report_usage(&cluster, Some(&pool), "n1", base, base + hour).await;
    t.report_usage(&cluster, Some(&pool), "n1", base + hour, base + hour * 2).await;
    let second = base + Duration::hours(2);
    let again = t.report_usage(&cluster, Some(&pool), "n2", second, second + Duration::seconds(30)).await;
    assert_eq!(invoice, again, "one invoice a month");
    // At-least-once delivery: the same sample again changes nothing, nor
    // does a region reporting a period it already reported, shifted.
    t.report_usage(&cluster, Some(&pool), "n1", base, base + hour).await;
    let shifted = t
        .report_usage_as(
            &cluster,
            Some(&pool),
            "n1",
            base + Duration::minutes(30),
            base + Duration::minutes(90),
            "shifted",
        )
        .await;
    assert_eq!(shifted, None, "overlapping usage is not recorded");
    // Nor usage from before the cluster existed, nor periods no region can have measured.
    let long_ago = base - Duration::days(400);
    assert_eq!(t.report_usage_as(&cluster, Some(&pool), "n1", long_ago, long_ago + hour, "old").await, None);
    let day = t
        .report_usage_as(&cluster, Some(&pool), "n3", base - Duration::hours(20), base - Duration::hours(2), "long")
        .await;
    assert_eq!(day, None, "a period over an hour");
    let before = base - Duration::minutes(10);
    let forged =
        t.report_usage_as(&cluster, Some(&pool), "n\u{0}x", before, before + Duration::minutes(1), "nul").await;
    assert!(forged.is_some(), "the control plane is recorded, the misnamed node is not");
    assert_eq!(t.count("usage_records WHERE instance LIKE 'n%x'").await, 0);

    let list: Value = owner.get(&owner.org_path("/billing/invoices")).await.expect(StatusCode::OK);
    let items = list["items"].as_array().unwrap();
    assert_eq!(items.len(), 1, "{list}");
    assert_eq!(items[0]["status"], "draft");
    assert_eq!(items[0]["number"], Value::Null);
    assert_eq!(items[0]["period_start"].as_str().unwrap().parse::<DateTime<Utc>>().unwrap(), month_start(base));
    // 7 260 s of bm.small at 0.1786 an hour: 0.36016…, rounded once; and
    // 7 290 s of an HA control plane (the default) at 0.10: 0.2025.
    assert_eq!(items[0]["total"], "0.56", "{list}");

    let view: Value = owner.get(&owner.org_path(&format!("/billing/invoices/{invoice}"))).await.expect(StatusCode::OK);
    let lines = view["lines"].as_array().unwrap();
    assert_eq!(lines.len(), 2, "{view}");
    let node_line = lines.iter().find(|l| l["sku"] == "bm.small.hour").expect("a node line");
    assert_eq!(node_line["resource_id"], pool.as_str());
    assert_eq!(node_line["resource_name"], "workers");
    assert_eq!(node_line["project"], "web");
    assert_eq!(node_line["kind"], "usage");
    assert_eq!(node_line["quantity"], "2.0167");
    assert_eq!(node_line["amount"], "0.36");
    let control_plane = lines.iter().find(|l| l["sku"] == "control-plane.ha.hour").expect("a control-plane line");
    assert_eq!(
        (control_plane["resource_id"].as_str(), control_plane["amount"].as_str()),
        (Some(cluster.as_str()), Some("0.20"))
    );
    assert_eq!(control_plane["quantity"], "2.025");

    let csv = owner.request(reqwest::Method::GET, &owner.org_path(&format!("/billing/invoices/{invoice}/csv")));
    let csv = csv.send().await.unwrap();
    assert_eq!(csv.status(), StatusCode::OK);
    assert!(csv.headers()["content-type"].to_str().unwrap().starts_with("text/csv"));
    let name = format!("moke-invoice-{}-draft.csv", month_start(base).format("%Y-%m"));
    assert!(csv.headers()["content-disposition"].to_str().unwrap().contains(&name));
    let csv = csv.text().await.unwrap();
    let rows: Vec<&str> = csv.lines().collect();
    assert_eq!(rows.len(), 3, "a header and a row per line: {csv}");
    assert!(rows[0].starts_with("kind,product,sku,project"));
    assert!(rows.iter().any(|row| row.contains("bm.small.hour") && row.contains(",0.36,USD,")), "{csv}");

    // The usage report: each day's hours of each resource at list price, summing to its total; also as CSV.
    let (first_day, last_day) = ((base - Duration::hours(1)).date_naive(), (base + Duration::hours(3)).date_naive());
    let range = format!("start={first_day}&end={}", last_day.succ_opt().unwrap());
    let usage: Value = owner.get(&owner.org_path(&format!("/billing/usage?{range}"))).await.expect(StatusCode::OK);
    let items = usage["items"].as_array().unwrap();
    let money = |v: &Value| v.as_str().unwrap().parse::<moke_billing::Decimal>().unwrap();
    let items_sum: moke_billing::Decimal = items.iter().map(|i| money(&i["amount"])).sum();
    let days_sum: moke_billing::Decimal = usage["days"].as_array().unwrap().iter().map(|d| money(&d["amount"])).sum();
    assert_eq!((items_sum, days_sum), (money(&usage["total"]), money(&usage["total"])), "{usage}");
    let workers: Vec<&Value> = items.iter().filter(|i| i["resource_name"] == "workers").collect();
    assert!(!workers.is_empty() && workers.iter().all(|i| i["sku"] == "bm.small.hour" && i["project"] == "web"));
    let hours: moke_billing::Decimal = workers.iter().map(|i| money(&i["hours"])).sum();
    assert!((hours - "2.0083".parse::<moke_billing::Decimal>().unwrap()).abs() < "0.0003".parse().unwrap(), "{hours}");
    let csv = owner.request(reqwest::Method::GET, &owner.org_path(&format!("/billing/usage/csv?{range}")));
    let csv = csv.send().await.unwrap().text().await.unwrap();
    assert!(csv.starts_with("day,project,resource_id,resource_name,sku"), "{csv}");
    assert_eq!(csv.lines().count(), items.len() + 1);
    let backwards: Value = owner
        .get(&owner.org_path(&format!("/billing/usage?start={last_day}&end={first_day}")))
        .await
        .expect(StatusCode::OK);
    assert_eq!((backwards["items"].as_array().map(Vec::len), backwards["total"].as_str()), (Some(0), Some("0.00")));
    let long: Value = owner.get(&owner.org_path("/billing/usage?start=2000-01-01")).await.expect(StatusCode::OK);
    assert_eq!(long["end"], "2001-01-01", "cut at 366 days");
    let ancient: Value = owner.get(&owner.org_path("/billing/usage?start=0001-01-01")).await.expect(StatusCode::OK);
    assert_eq!((ancient["start"].as_str(), ancient["end"].as_str()), (Some("2000-01-01"), Some("2001-01-01")));
    let before_postgres_dates: Value =
        owner.get(&owner.org_path("/billing/usage?start=-5000-01-01&end=-4999-01-01")).await.expect(StatusCode::OK);
    assert_eq!(before_postgres_dates["items"], json!([]), "days no database date holds report nothing");

    // Credits: the draft shows what they would cover now, lowest priority
    // number first; only finalizing takes from them.
    use moke_api::app::billing::credits::CreditGrantInput;
    use moke_api::model::CreditKind;
    let grant = |amount: &str, priority: i32| CreditGrantInput {
        kind: CreditKind::Promotional,
        description: format!("Welcome credit {priority}"),
        amount: amount.parse().unwrap(),
        priority,
        expires_at: None,
        granted_by: "ops@moke.test".into(),
    };
    let org: moke_api::ids::OrgId = acme.org.parse().unwrap();
    let refused = t.app.grant_credit(org, grant("0.001", 1)).await.unwrap_err();
    assert!(format!("{refused:?}").contains("amount"), "{refused:?}");
    let second_grant = t.app.grant_credit(org, grant("10.00", 2)).await.unwrap();
    let first_grant = t.app.grant_credit(org, grant("0.20", 1)).await.unwrap();
    let draft: Value = owner.get(&owner.org_path(&format!("/billing/invoices/{invoice}"))).await.expect(StatusCode::OK);
    assert_eq!(
        (draft["subtotal"].as_str(), draft["credits"].as_str(), draft["total"].as_str()),
        (Some("0.56"), Some("-0.56"), Some("0.00")),
        "{draft}"
    );
    let credit_lines: Vec<(&str, &str)> = draft["lines"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["kind"] == "credit")
        .map(|l| (l["sku"].as_str().unwrap(), l["amount"].as_str().unwrap()))
        .collect();
    assert_eq!(
        credit_lines,
        [(first_grant.id.to_string().as_str(), "-0.20"), (second_grant.id.to_string().as_str(), "-0.36")]
    );
    if month_start(base) == month_start(Utc::now()) {
        let balance: Value = owner.get(&owner.org_path("/billing/balance")).await.expect(StatusCode::OK);
        assert_eq!(balance["month_to_date_usage"], "0.56", "{balance}");
        assert_eq!(balance["credits_remaining"], "10.20");
        assert_eq!(balance["month_to_date_balance"], "0.00");
    }
    let credits: Value = owner.get(&owner.org_path("/billing/credits")).await.expect(StatusCode::OK);
    assert_eq!(credits["items"][0]["remaining"], "0.20", "nothing taken by a preview: {credits}");

    // Invoice events go to endpoints that name them, not to `*` ones.
    let mut endpoints = Vec::new();
    for types in [json!(["*"]), json!(["invoice.*"])] {
        let body = json!({ "url": "https://hooks.example.invalid/", "event_types": types });
        let made: Value = owner.post(&owner.org_path("/webhooks"), body).await.expect(StatusCode::CREATED);
        let id: moke_api::ids::WebhookEndpointId = made["id"].as_str().unwrap().parse().unwrap();
        endpoints.push(id.uuid());
    }

    // Not before the grace period after the month is over; then once.
    let month_end = next_month(month_start(base));
    let grace = Duration::hours(48);
    assert_eq!(t.app.finalize_due_invoices(Some(month_end + grace - Duration::seconds(1))).await.unwrap(), 0);
    let finalized_at = month_end + grace + Duration::seconds(1);
    // Another organization's invoice of the same month, finalized in the same run.
    let globex = t.tenant("globex").await;
    let other = t.client(&globex);
    let other_project = other.create_project("shop").await.id.to_string();
    let (other_cluster, _) = other.create_cluster(&other_project, "prod", json!({ "region": "eu-central-1" })).await;
    sqlx::query("UPDATE clusters SET created_at = now() - interval '1 day'").execute(&t.pool).await.unwrap();
    let other_invoice = t.report_usage(&other_cluster.id.to_string(), None, "", base, base + hour).await;
    assert_eq!(t.app.finalize_due_invoices(Some(finalized_at)).await.unwrap(), 2);
    assert_eq!(t.app.finalize_due_invoices(Some(finalized_at)).await.unwrap(), 0, "nothing twice");

    let year = finalized_at.year();
    let view: Value = owner.get(&owner.org_path(&format!("/billing/invoices/{invoice}"))).await.expect(StatusCode::OK);
    assert_eq!(view["status"], "finalized");
    assert_eq!(
        (view["subtotal"].as_str(), view["credits"].as_str(), view["total"].as_str()),
        (Some("0.56"), Some("-0.56"), Some("0.00"))
    );
    let credits: Value = owner.get(&owner.org_path("/billing/credits")).await.expect(StatusCode::OK);
    let remaining: Vec<&str> =
        credits["items"].as_array().unwrap().iter().map(|g| g["remaining"].as_str().unwrap()).collect();
    assert_eq!(remaining, ["0.00", "9.64"], "taken once, at finalization");
    let theirs: Value =
        other.get(&other.org_path(&format!("/billing/invoices/{other_invoice}"))).await.expect(StatusCode::OK);
    let mut numbers =
        vec![view["number"].as_str().unwrap().to_string(), theirs["number"].as_str().unwrap().to_string()];
    numbers.sort();
    assert_eq!(numbers, [format!("MOKE-{year}-000001"), format!("MOKE-{year}-000002")], "consecutive, no gaps");
    assert_eq!(t.count("audit_events WHERE action = 'invoice.finalize'").await, 2);
    assert_eq!(t.count("events WHERE event_type = 'invoice.finalized'").await, 2);
    let delivered = |endpoint: uuid::Uuid| {
        format!(
            "webhook_deliveries d JOIN events e ON e.id = d.event_id WHERE e.event_type = 'invoice.finalized' AND d.endpoint_id = '{endpoint}'"
        )
    };
    assert_eq!(t.count(&delivered(endpoints[0])).await, 0, "`*` does not take billing events");
    assert_eq!(t.count(&delivered(endpoints[1])).await, 1, "`invoice.*` does, its own organization's only");

    // The finalized invoice as a PDF, read back by an independent PDF reader.
    let pdf = owner.request(reqwest::Method::GET, &owner.org_path(&format!("/billing/invoices/{invoice}/pdf")));
    let pdf = pdf.send().await.unwrap();
    assert_eq!(pdf.headers()["content-type"], "application/pdf");
    let number = view["number"].as_str().unwrap().to_string();
    assert!(pdf.headers()["content-disposition"].to_str().unwrap().contains(&format!("{number}.pdf")));
    let text = pdf_text(&pdf.bytes().await.unwrap()).await;
    for expected in
        [format!("Invoice {number}"), "workers".into(), "0.36 USD".into(), "-0.56 USD".into(), "Total".into()]
    {
        assert!(text.contains(&expected), "{expected:?} in the PDF's text: {text}");
    }

    // Late usage of the finalized month lands on the next month's draft as an adjustment.
    let late = second + Duration::seconds(30);
    let next = t.report_usage(&cluster, Some(&pool), "n1", late, late + Duration::minutes(1)).await;
    assert_ne!(next, invoice);
    let adjusted: Value = owner.get(&owner.org_path(&format!("/billing/invoices/{next}"))).await.expect(StatusCode::OK);
    assert_eq!(adjusted["status"], "draft");
    assert_eq!(adjusted["period_start"].as_str().unwrap().parse::<DateTime<Utc>>().unwrap(), month_end);
    assert!(adjusted["lines"].as_array().unwrap().iter().all(|l| l["kind"] == "adjustment"), "{adjusted}");
    let unchanged: Value =
        owner.get(&owner.org_path(&format!("/billing/invoices/{invoice}"))).await.expect(StatusCode::OK);
    assert_eq!(unchanged, view, "a finalized invoice never changes");
    let list: Value = owner.get(&owner.org_path("/billing/invoices")).await.expect(StatusCode::OK);
    let ids: Vec<&str> = list["items"].as_array().unwrap().iter().map(|i| i["id"].as_str().unwrap()).collect();
    assert_eq!(ids, [next.as_str(), invoice.as_str()], "newest first, no other organization's");

    // The database itself refuses to change or remove a finalized invoice.
    for statement in [
        "UPDATE invoices SET total = 0 WHERE status = 'finalized'",
        "UPDATE invoices SET number = 'MOKE-1999-000001' WHERE status = 'finalized'",
        "DELETE FROM invoices WHERE status = 'finalized'",
    ] {
        assert!(sqlx::query(statement).execute(&t.pool).await.is_err(), "{statement}");
    }

    // The same invoice over gRPC and GraphQL.
    let channel = tonic::transport::Channel::from_shared(t.base.clone()).unwrap().connect().await.unwrap();
    let mut grpc = BillingServiceClient::new(channel);
    fn bearer<T>(token: &str, message: T) -> tonic::Request<T> {
        let mut request = tonic::Request::new(message);
        request.metadata_mut().insert("authorization", format!("Bearer {token}").parse().unwrap());
        request
    }
    let authed = |message| bearer(&acme.token, message);
    let authed_get = |message| bearer(&acme.token, message);
    let listed = grpc
        .list_invoices(authed(ListInvoicesRequest { org: acme.org.clone(), ..Default::default() }))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(listed.invoices.len(), 2);
    let got = grpc
        .get_invoice(authed_get(GetInvoiceRequest { org: acme.org.clone(), invoice: invoice.clone() }))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        (got.number.as_str(), got.total.as_str(), got.lines.len()),
        (view["number"].as_str().unwrap(), "0.00", 4)
    );
    let credits = grpc
        .list_credits(bearer(
            &acme.token,
            moke_proto::v1::ListCreditsRequest { org: acme.org.clone(), ..Default::default() },
        ))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(credits.credits.len(), 2);
    let balance = grpc
        .get_balance(bearer(&acme.token, moke_proto::v1::GetBalanceRequest { org: acme.org.clone() }))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(balance.credits_remaining, "9.64");
    let theirs = grpc
        .get_invoice(authed_get(GetInvoiceRequest { org: acme.org.clone(), invoice: other_invoice.clone() }))
        .await
        .unwrap_err();
    assert_eq!(theirs.code(), tonic::Code::NotFound, "another organization's invoice is not found");
    let query = json!({ "query": format!(
        r#"{{ invoice(org: "{}", id: "{invoice}") {{ number status total lines {{ sku amount kind }} }}
             org(id: "{}") {{ invoices(first: 5) {{ edges {{ node {{ id status }} }} }} billingBalance {{ creditsRemaining }} credits(first: 5) {{ edges {{ node {{ remaining }} }} }} }} }}"#,
        acme.org, acme.org
    ) });
    let (status, answer) = t.send(t.request(reqwest::Method::POST, "/graphql", &acme.token).json(&query)).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(answer["data"]["invoice"]["number"], view["number"], "{answer}");
    assert_eq!(answer["data"]["invoice"]["status"], "FINALIZED");
    assert_eq!(answer["data"]["org"]["invoices"]["edges"].as_array().unwrap().len(), 2);
    assert_eq!(answer["data"]["org"]["billingBalance"]["creditsRemaining"], "9.64");
    assert_eq!(answer["data"]["org"]["credits"]["edges"][1]["node"]["remaining"], "9.64");

    // An operator voids the invoice: its credits go back, and a replacement for the same month is
    // issued at once under the next number, from the same usage, with the same credits.
    let void_id: moke_api::ids::InvoiceId = invoice.parse().unwrap();
    let refused = t.app.void_invoice(org, void_id, "", "ops@moke.test").await.unwrap_err();
    assert!(matches!(refused, moke_api::app::Error::Invalid(_)), "a reason is needed");
    let replacement =
        t.app.void_invoice(org, void_id, "Billed to the wrong company name", "ops@moke.test").await.unwrap();
    let replacement = serde_json::to_value(&replacement).unwrap();
    assert_eq!(replacement["status"], "finalized");
    // Numbered in the year it is issued (the first two were finalized on a clock set past the month).
    let this_year = Utc::now().year();
    let sequence = if this_year == year { 3 } else { 1 };
    assert_eq!(replacement["number"], format!("MOKE-{this_year}-{sequence:06}"));
    assert_eq!(replacement["replaces"], invoice.as_str());
    assert_eq!(
        (replacement["subtotal"].as_str(), replacement["credits"].as_str(), replacement["total"].as_str()),
        (Some("0.56"), Some("-0.56"), Some("0.00")),
        "{replacement}"
    );
    let voided: Value =
        owner.get(&owner.org_path(&format!("/billing/invoices/{invoice}"))).await.expect(StatusCode::OK);
    assert_eq!((voided["status"].as_str(), voided["number"].as_str()), (Some("void"), view["number"].as_str()));
    assert_eq!(voided["replaced_by"], replacement["id"]);
    assert_eq!(voided["void_reason"], "Billed to the wrong company name");
    let credits: Value = owner.get(&owner.org_path("/billing/credits")).await.expect(StatusCode::OK);
    let remaining: Vec<&str> =
        credits["items"].as_array().unwrap().iter().map(|g| g["remaining"].as_str().unwrap()).collect();
    assert_eq!(remaining, ["0.00", "9.64"], "given back, then taken again by the replacement");
    let again = t.app.void_invoice(org, void_id, "Twice", "ops@moke.test").await.unwrap_err();
    assert!(matches!(again, moke_api::app::Error::Conflict { code: "not_finalized", .. }), "{again:?}");
    let theirs_void =
        t.app.void_invoice(org, other_invoice.parse().unwrap(), "Not ours", "ops@moke.test").await.unwrap_err();
    assert!(matches!(theirs_void, moke_api::app::Error::NotFound { .. }), "{theirs_void:?}");
    assert_eq!(t.count("events WHERE event_type = 'invoice.voided'").await, 1);
    assert_eq!(t.count("audit_events WHERE action = 'invoice.void'").await, 1);
    let list: Value = owner.get(&owner.org_path("/billing/invoices")).await.expect(StatusCode::OK);
    let statuses: Vec<&str> = list["items"].as_array().unwrap().iter().map(|i| i["status"].as_str().unwrap()).collect();
    assert_eq!(statuses, ["finalized", "draft", "void"], "{list}");
}

/// Who may read invoices: owners, admins and the billing role; not
/// members or viewers, and no credential narrowed to a project.
#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn only_billing_readers_see_invoices(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let acme = t.tenant("acme").await;
    let owner = t.client(&acme);
    let path = owner.org_path("/billing/invoices");
    for (role, expected) in [
        ("billing", StatusCode::OK),
        ("admin", StatusCode::OK),
        ("member", StatusCode::FORBIDDEN),
        ("viewer", StatusCode::FORBIDDEN),
    ] {
        let (_, session) = t.member(&acme, &format!("{role}@acme.test"), role).await;
        let answer = owner.with_token(&session).get::<Value>(&path).await;
        assert_eq!(answer.status, expected, "{role}: {:?}", answer.body);
    }
}

/// A budget fires each threshold the month's usage reaches once: an event
/// for endpoints subscribed to `budget.*` and a mail to owners and billing
/// members; only billing managers set budgets.
#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn budgets_alert_once_per_threshold(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let acme = t.tenant("acme").await;
    let owner = t.client(&acme);
    let project = owner.create_project("web").await.id.to_string();
    let (cluster, _) = owner.create_cluster(&project, "prod", json!({ "region": "eu-central-1" })).await;
    let cluster = cluster.id.to_string();
    let (pool, _) = owner.create_node_pool(&project, &cluster, "workers", 1).await;
    sqlx::query("UPDATE clusters SET created_at = now() - interval '1 day'").execute(&t.pool).await.unwrap();
    let now = Utc::now();
    let start = now - Duration::hours(2);
    if month_start(start) != month_start(now) {
        return; // the month's first two hours: nothing of this month to budget yet
    }
    // An hour of bm.small (0.18) and of an HA control plane (0.10).
    t.report_usage(&cluster, Some(&pool.id.to_string()), "n1", start, start + Duration::hours(1)).await;
    let (_, billing) = t.member(&acme, "billing@acme.test", "billing").await;
    let (_, admin) = t.member(&acme, "admin@acme.test", "admin").await;

    let budgets = owner.org_path("/billing/budgets");
    let body = json!({ "name": "monthly", "amount": "0.40", "thresholds": [100, 50] });
    let (_, member) = t.member(&acme, "member@acme.test", "member").await;
    let refused = owner.with_token(&member).post::<Value>(&budgets, body.clone()).await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN, "members neither read billing nor set budgets");
    let listed = owner.with_token(&admin).get::<Value>(&budgets).await;
    assert_eq!(listed.status, StatusCode::OK, "admins read them");
    let bad = owner
        .with_token(&billing)
        .post::<Value>(&budgets, json!({ "name": "x", "amount": "-1", "thresholds": [0, 0] }))
        .await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST, "{:?}", bad.body);
    let fields: Vec<&str> =
        bad.body["errors"].as_array().unwrap().iter().map(|e| e["field"].as_str().unwrap()).collect();
    assert!(fields.contains(&"amount") && fields.contains(&"thresholds"), "{fields:?}");
    let made: Value = owner.with_token(&billing).post(&budgets, body.clone()).await.expect(StatusCode::CREATED);
    assert_eq!(made["thresholds"], json!([50, 100]), "kept in order");
    assert_eq!(made["spend"], "0.28");
    let again = owner.with_token(&billing).post::<Value>(&budgets, body).await;
    assert_eq!(again.status, StatusCode::CONFLICT, "names are unique: {:?}", again.body);
    let endpoint = json!({ "url": "https://hooks.example.invalid/", "event_types": ["budget.*"] });
    owner.post::<Value>(&owner.org_path("/webhooks"), endpoint).await.expect(StatusCode::CREATED);

    assert_eq!(t.app.evaluate_budgets(Some(now)).await.unwrap(), 1, "50% of 0.40 is reached, 100% is not");
    assert_eq!(t.app.evaluate_budgets(Some(now)).await.unwrap(), 0, "once per month and threshold");
    let id = made["id"].as_str().unwrap();
    let view: Value = owner.get(&format!("{budgets}/{id}")).await.expect(StatusCode::OK);
    assert_eq!(view["alerts"].as_array().unwrap().len(), 1, "{view}");
    assert_eq!(
        (view["alerts"][0]["threshold"].as_i64(), view["alerts"][0]["value"].as_str()),
        (Some(50), Some("0.28"))
    );
    assert_eq!(t.count("events WHERE event_type = 'budget.threshold_reached'").await, 1);
    assert_eq!(
        t.count(
            "webhook_deliveries d JOIN events e ON e.id = d.event_id WHERE e.event_type = 'budget.threshold_reached'"
        )
        .await,
        1
    );
    let mailed: Vec<String> =
        sqlx::query_scalar("SELECT to_address FROM mail_outbox WHERE kind = 'budget' ORDER BY to_address")
            .fetch_all(&t.pool)
            .await
            .unwrap();
    assert_eq!(mailed, ["billing@acme.test"], "owners and billing members, not admins");

    // Lowering the amount makes 100% reached too; the 50% alert is not sent again.
    let changed: Value = owner
        .with_token(&billing)
        .patch(&format!("{budgets}/{id}"), json!({ "amount": "0.20" }))
        .await
        .expect(StatusCode::OK);
    assert_eq!(changed["amount"], "0.20");
    assert_eq!(t.app.evaluate_budgets(Some(now)).await.unwrap(), 1);
    // A month later the thresholds start over.
    let next = next_month(month_start(now)) + Duration::hours(1);
    assert_eq!(t.app.evaluate_budgets(Some(next)).await.unwrap(), 0, "nothing used next month yet");

    // The same budgets over gRPC and GraphQL.
    let channel = tonic::transport::Channel::from_shared(t.base.clone()).unwrap().connect().await.unwrap();
    let mut grpc = BillingServiceClient::new(channel);
    let mut request =
        tonic::Request::new(moke_proto::v1::ListBudgetsRequest { org: acme.org.clone(), ..Default::default() });
    request.metadata_mut().insert("authorization", format!("Bearer {}", acme.token).parse().unwrap());
    let listed = grpc.list_budgets(request).await.unwrap().into_inner();
    assert_eq!(listed.budgets.len(), 1);
    assert_eq!(listed.budgets[0].alerts.len(), 2);
    let query = json!({ "query": format!(
        r#"mutation {{ createBudget(org: "{}", input: {{ name: "by graphql", amount: "9.00", basis: FORECAST }}) {{ name thresholds basis }} }}"#,
        acme.org
    ) });
    let (status, answer) = t.send(t.request(reqwest::Method::POST, "/graphql", &acme.token).json(&query)).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(answer["data"]["createBudget"]["thresholds"], json!([50, 90, 100]), "{answer}");
    let deleted = owner.call::<Value>(reqwest::Method::DELETE, &format!("{budgets}/{id}"), None).await;
    assert_eq!(deleted.status, StatusCode::NO_CONTENT);
    assert_eq!(t.count("budget_alerts").await, 0, "its alerts went with it");
}

/// The text of a PDF as poppler's `pdftotext` extracts it, in its layout.
async fn pdf_text(pdf: &[u8]) -> String {
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), pdf).unwrap();
    let out = tokio::process::Command::new("pdftotext")
        .args(["-layout", "-enc", "UTF-8"])
        .arg(file.path())
        .arg("-")
        .output()
        .await
        .expect("pdftotext (cargo xtask test installs poppler-utils)");
    assert!(out.status.success(), "pdftotext could not read the PDF: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// Plans set quota limits; billing managers change plans themselves (a
/// downgrade waits until the organization fits), and an operator's
/// override of one limit shows as such, with its reason in the audit log.
#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn plans_set_quotas_and_overrides_say_why(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let acme = t.tenant("acme").await;
    let owner = t.client(&acme);
    let org: moke_api::ids::OrgId = acme.org.parse().unwrap();

    let plans: Vec<Value> = t.anonymous().get("/v1/plans").await.expect(StatusCode::OK);
    let ids: Vec<&str> = plans.iter().map(|p| p["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["free", "standard", "business"]);
    assert_eq!(plans[0]["limits"]["clusters"], 1, "{}", plans[0]);
    assert_eq!(plans[1]["limits"]["clusters"], 10, "standard keeps [quotas]'s limits");
    let quotas: Value = owner.get(&owner.org_path("/quotas")).await.expect(StatusCode::OK);
    assert_eq!(quotas["plan"], "standard");
    assert_eq!(quotas["clusters"], json!({ "limit": 10, "usage": 0, "source": "plan" }));
    let plan: Value = owner.get(&owner.org_path("/billing/plan")).await.expect(StatusCode::OK);
    assert_eq!((plan["plan"]["id"].as_str(), plan["changed_at"].is_null()), (Some("standard"), true));

    // Two clusters do not fit the free plan: the downgrade says what is over.
    let project = owner.create_project("web").await.id.to_string();
    owner.create_cluster(&project, "one", json!({ "region": "eu-central-1" })).await;
    owner.create_cluster(&project, "two", json!({ "region": "eu-central-1" })).await;
    let plan_path = owner.org_path("/billing/plan");
    let refused = owner
        .put::<Value>(&plan_path, json!({ "plan": "free" }))
        .await
        .refused_with(StatusCode::CONFLICT, "plan_limits_exceeded");
    assert!(refused.detail.contains("clusters 2 (the plan allows 1)"), "{}", refused.detail);
    let unknown = owner.put::<Value>(&plan_path, json!({ "plan": "platinum" })).await.refused(StatusCode::BAD_REQUEST);
    assert_eq!(unknown.fields(), ["plan"]);

    // Business is not self-serve: its limits are worth abusing, so Moke's operators give it.
    assert_eq!(plans[2]["self_serve"], false);
    owner
        .put::<Value>(&plan_path, json!({ "plan": "business" }))
        .await
        .refused_with(StatusCode::FORBIDDEN, "plan_needs_operator");
    let business = t.app.set_plan(org, "business", "Signed the business agreement").await.unwrap();
    assert_eq!(business.plan.id, "business");
    let quotas: Value = owner.get(&owner.org_path("/quotas")).await.expect(StatusCode::OK);
    assert_eq!((quotas["plan"].as_str(), quotas["clusters"]["limit"].as_i64()), (Some("business"), Some(50)));

    // An operator holds clusters at 2: the limit says it is an override, and a third cluster is refused.
    let changes = [("clusters".to_string(), Some(2)), ("max_nodes".to_string(), Some(40))];
    t.app.override_quotas(org, &changes, "Held at two while the invoice is disputed", "ops@moke.test").await.unwrap();
    let quotas: Value = owner.get(&owner.org_path("/quotas")).await.expect(StatusCode::OK);
    assert_eq!(quotas["clusters"], json!({ "limit": 2, "usage": 2, "source": "override" }));
    assert_eq!(quotas["nodes"]["source"], "override");
    assert_eq!(quotas["vcpus"]["source"], "plan");
    owner
        .post::<Value>(
            &format!("/v1/projects/{project}/clusters"),
            json!({ "name": "three", "spec": { "region": "eu-central-1" } }),
        )
        .await
        .refused_with(StatusCode::CONFLICT, "quota_exceeded");
    let bad = t.app.override_quotas(org, &[("galaxies".into(), Some(1))], "", "ops").await.unwrap_err();
    assert!(matches!(&bad, moke_api::app::Error::Invalid(fields) if fields.len() == 2), "{bad:?}");
    let events: Value = owner.get(&owner.org_path("/audit-events?limit=100")).await.expect(StatusCode::OK);
    let events = events["items"].as_array().unwrap();
    let held = events.iter().find(|e| e["action"] == "quota.override").expect("the override is audited");
    assert_eq!(held["details"]["reason"], "Held at two while the invoice is disputed");
    assert!(!held.to_string().contains("ops@moke.test"), "the operator's name stays out: {held}");
    let changed = events.iter().find(|e| e["action"] == "billing.plan.change").expect("the plan change is audited");
    assert_eq!(
        changed["details"],
        json!({ "from": "standard", "to": "business", "reason": "Signed the business agreement" })
    );

    // Given back to the plan.
    t.app.override_quotas(org, &[("clusters".into(), None)], "Dispute settled", "ops@moke.test").await.unwrap();
    let quotas: Value = owner.get(&owner.org_path("/quotas")).await.expect(StatusCode::OK);
    assert_eq!(quotas["clusters"], json!({ "limit": 50, "usage": 2, "source": "plan" }));

    // Back down to standard, themselves; choosing it again changes nothing.
    let standard: Value = owner.put(&plan_path, json!({ "plan": "standard" })).await.expect(StatusCode::OK);
    assert_eq!(standard["plan"]["id"], "standard");
    let again: Value = owner.put(&plan_path, json!({ "plan": "standard" })).await.expect(StatusCode::OK);
    assert_eq!(again["changed_at"], standard["changed_at"]);
}

/// One hourly usage sample of `cluster`'s control plane and of `nodes` of
/// `pool` (bm.small), as a region reports it.
async fn hourly_sample(t: &TestApp, cluster: &str, pool: &str, nodes: &[&str], start: DateTime<Utc>) {
    use moke_proto::region as pb;
    let end = start + Duration::hours(1);
    let usage = pb::UsageSample {
        id: format!("{cluster}/{}", start.timestamp()),
        cluster_id: cluster.into(),
        period_start: start.to_rfc3339(),
        period_end: end.to_rfc3339(),
        cluster_seconds: 3600.0,
        node_seconds: Default::default(),
        control_plane_replicas: 3,
        nodes: nodes
            .iter()
            .map(|name| pb::NodeUsage {
                name: (*name).into(),
                node_pool_id: pool.into(),
                machine_type: "bm.small".into(),
                milliseconds: 3_600_000,
            })
            .collect(),
    };
    let status = pb::Status { region: "eu-central-1".into(), message: Some(pb::status::Message::Usage(usage)) };
    t.app.apply_region_status(status).await.unwrap();
}

/// A whole month: an HA control plane and a pool of 3 nodes, resized to 5
/// on day 11 and to 2 on day 21, sampled hourly (every sample sent twice,
/// as at-least-once delivery may), and a 100.00 credit. The finalized
/// invoice equals the one computed by hand, line by line, in JSON, CSV and
/// the PDF as an independent reader reads it.
#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn a_simulated_month_is_invoiced_as_computed_by_hand(options: PgPoolOptions, connect: PgConnectOptions) {
    // Last month must still be open: a grace period longer than any month.
    let t = TestApp::start_with(options, connect, |c| c.billing.grace_hours = 24 * 40).await;
    let acme = t.tenant("acme").await;
    let owner = t.client(&acme);
    let project = owner.create_project("web").await.id.to_string();
    let (cluster, _) = owner.create_cluster(&project, "prod", json!({ "region": "eu-central-1" })).await;
    assert_eq!(cluster.spec.control_plane.replicas, 3, "HA by default");
    let cluster = cluster.id.to_string();
    let (pool, _) = owner.create_node_pool(&project, &cluster, "workers", 5).await;
    let pool = pool.id.to_string();
    sqlx::query("UPDATE clusters SET created_at = now() - interval '90 days'").execute(&t.pool).await.unwrap();

    let month = month_start(month_start(Utc::now()) - Duration::days(1));
    let month_end = next_month(month);
    let mut hour = month;
    while hour < month_end {
        let day = (hour - month).num_days();
        let nodes: &[&str] = match day {
            0..10 => &["n1", "n2", "n3"],
            10..20 => &["n1", "n2", "n3", "n4", "n5"],
            _ => &["n1", "n2"],
        };
        hourly_sample(&t, &cluster, &pool, nodes, hour).await;
        hourly_sample(&t, &cluster, &pool, nodes, hour).await;
        hour += Duration::hours(1);
    }
    let org: moke_api::ids::OrgId = acme.org.parse().unwrap();
    let credit = moke_api::app::billing::credits::CreditGrantInput {
        kind: moke_api::model::CreditKind::Promotional,
        description: "Launch credit".into(),
        amount: "100.00".parse().unwrap(),
        priority: 1,
        expires_at: None,
        granted_by: "ops@moke.test".into(),
    };
    t.app.grant_credit(org, credit).await.unwrap();
    let finalized_at = month_end + Duration::hours(24 * 40) + Duration::seconds(1);
    assert_eq!(t.app.finalize_due_invoices(Some(finalized_at)).await.unwrap(), 1);

    // By hand: the control plane and n1, n2 ran the whole month, capped at 672 h each; n3 ran 20 days
    // (480 h), n4 and n5 10 days (240 h each). 672 h x 0.10 = 67.20; 2 304 h x 0.1786 = 411.4944 -> 411.49.
    let list: Value = owner.get(&owner.org_path("/billing/invoices")).await.expect(StatusCode::OK);
    let id = list["items"][0]["id"].as_str().unwrap().to_string();
    let invoice: Value = owner.get(&owner.org_path(&format!("/billing/invoices/{id}"))).await.expect(StatusCode::OK);
    assert_eq!(invoice["status"], "finalized");
    let lines: Vec<(String, String, String, String)> = invoice["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            let text = |k: &str| l[k].as_str().unwrap().to_string();
            (text("kind"), text("sku"), text("quantity"), text("amount"))
        })
        .collect();
    let credit_id = lines.iter().find(|l| l.0 == "credit").map(|l| l.1.clone()).unwrap_or_default();
    let expected = [
        ("usage", "control-plane.ha.hour", "672", "67.20"),
        ("usage", "bm.small.hour", "2304", "411.49"),
        ("credit", credit_id.as_str(), "1", "-100.00"),
    ];
    let expected: Vec<(String, String, String, String)> =
        expected.iter().map(|(a, b, c, d)| (a.to_string(), b.to_string(), c.to_string(), d.to_string())).collect();
    assert_eq!(lines, expected, "{invoice}");
    assert_eq!(
        (invoice["subtotal"].as_str(), invoice["credits"].as_str(), invoice["total"].as_str()),
        (Some("478.69"), Some("-100.00"), Some("378.69"))
    );

    // The CSV has the same lines, summing to the total.
    let csv = owner.request(reqwest::Method::GET, &owner.org_path(&format!("/billing/invoices/{id}/csv")));
    let csv = csv.send().await.unwrap().text().await.unwrap();
    let mut reader = csv::Reader::from_reader(csv.as_bytes());
    let amounts: Vec<String> = reader.records().map(|r| r.unwrap()[9].to_string()).collect();
    assert_eq!(amounts, ["67.20", "411.49", "-100.00"], "{csv}");

    // The PDF, read back by pdftotext, shows the lines and the total.
    let pdf = owner.request(reqwest::Method::GET, &owner.org_path(&format!("/billing/invoices/{id}/pdf")));
    let text = pdf_text(&pdf.send().await.unwrap().bytes().await.unwrap()).await;
    for expected in ["67.20 USD", "411.49 USD", "-100.00 USD", "478.69 USD", "378.69 USD", "Launch credit"] {
        assert!(text.contains(expected), "{expected:?} in the PDF's text: {text}");
    }
}

/// Gateways finalizing at once: each invoice is finalized once, under one
/// number, and the numbers have no gaps; budgets evaluated at once alert once.
#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn concurrent_month_closes_and_budget_runs_act_once(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = TestApp::start(options, connect).await;
    let now = Utc::now();
    let start = now - Duration::hours(2);
    if month_start(start) != month_start(now) {
        return; // the month's first two hours: nothing of this month to close yet
    }
    let mut tenants = Vec::new();
    for name in ["acme", "globex", "initech", "umbrella"] {
        let tenant = t.tenant(name).await;
        let client = t.client(&tenant);
        let project = client.create_project("web").await.id.to_string();
        let (cluster, _) = client.create_cluster(&project, "prod", json!({ "region": "eu-central-1" })).await;
        sqlx::query("UPDATE clusters SET created_at = now() - interval '1 day'").execute(&t.pool).await.unwrap();
        t.report_usage(&cluster.id.to_string(), None, "", start, start + Duration::hours(1)).await;
        let budget = json!({ "name": "cap", "amount": "0.01", "thresholds": [50, 100] });
        client.post::<Value>(&client.org_path("/billing/budgets"), budget).await.expect(StatusCode::CREATED);
        tenants.push(tenant);
    }

    let evaluations = (0..4).map(|_| t.app.evaluate_budgets(Some(now)));
    let fired: usize = futures::future::join_all(evaluations).await.into_iter().map(Result::unwrap).sum();
    assert_eq!(fired, 8, "two thresholds of four budgets, each once");
    assert_eq!(t.count("events WHERE event_type = 'budget.threshold_reached'").await, 8);

    let at = next_month(month_start(now)) + Duration::hours(49);
    let closes = (0..4).map(|_| t.app.finalize_due_invoices(Some(at)));
    let finalized: usize = futures::future::join_all(closes).await.into_iter().map(Result::unwrap).sum();
    assert_eq!(finalized, 4, "four invoices, each finalized once");
    let numbers: Vec<String> =
        sqlx::query_scalar("SELECT number FROM invoices WHERE status = 'finalized' ORDER BY number")
            .fetch_all(&t.pool)
            .await
            .unwrap();
    let year = at.year();
    let expected: Vec<String> = (1..=4).map(|n| format!("MOKE-{year}-{n:06}")).collect();
    assert_eq!(numbers, expected, "one number each, no gaps");
    assert_eq!(t.count("events WHERE event_type = 'invoice.finalized'").await, 4);
    let closed = "operations WHERE kind = 'invoice_finalize' AND status = 'succeeded' AND target_type = 'org'";
    assert_eq!(t.count(closed).await, 4, "each month close is an Operation on its organization");
}
