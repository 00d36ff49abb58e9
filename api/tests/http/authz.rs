//! The authorization matrix: one table of rows (route, the permission it
//! needs, how to call it) played by every kind of caller: each
//! organization role as a person and as a service-account token, tokens
//! limited to one project or to reading, and members of another
//! organization. What a caller may do comes from the one permission table
//! (`moke_iam::role_allows`) and the scope rules of `moke_iam::authorize`;
//! the route list comes from the OpenAPI document, so a new route without a
//! row fails [`every_route_has_a_row_or_a_reason`].

use moke_api::model::{DeployHookCreated, DomainView, InvitationView, TrustPolicyView, WebhookEndpointCreated};
use moke_iam::{Action, OrgRole};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};

use crate::common::{Client, OidcProvider, Tenant, TestApp};

/// Routes outside the matrix, and why.
const OUTSIDE: [(&str, &str); 29] = [
    ("POST /v1/signup/confirm", "the mailed token is the credential"),
    ("POST /v1/auth/sso-link/confirm", "the mailed token is the credential"),
    ("POST /v1/hooks/{hook}", "the delivery's signature is the credential"),
    ("GET /v1/regions", "public catalog"),
    ("GET /v1/kubernetes-versions", "public catalog"),
    ("GET /v1/machine-types", "public catalog"),
    ("GET /v1/plans", "public catalog"),
    ("GET /.well-known/jwks.json", "public keys"),
    ("POST /v1/signup", "no caller yet"),
    ("POST /v1/auth/login", "no caller yet"),
    ("POST /v1/auth/refresh", "the refresh token is the credential"),
    ("POST /v1/auth/logout", "the refresh token is the credential"),
    ("POST /v1/auth/verify-email", "the mailed token is the credential"),
    ("POST /v1/auth/password-reset", "no caller"),
    ("POST /v1/auth/password-reset/confirm", "the mailed token is the credential"),
    ("POST /v1/auth/token-exchange", "the CI ID token is the credential"),
    ("GET /v1/sso/{org}/login", "no caller yet"),
    ("GET /v1/sso/callback", "the provider's answer is the credential"),
    ("GET /v1/orgs", "the caller's own organization"),
    ("GET /v1/me", "the caller itself"),
    ("GET /v1/me/tokens", "the caller's own tokens"),
    ("POST /v1/me/tokens", "the caller's own tokens"),
    ("POST /v1/device/auth", "no caller yet"),
    ("POST /v1/device/token", "the device code is the credential"),
    ("POST /v1/device/confirm", "the caller's own sign-in, a person's session only (device.rs)"),
    ("POST /v1/device/deny", "the caller's own sign-in, a person's session only (device.rs)"),
    ("PUT /v1/orgs/{org}/policy", "owners who are people only, never a service account (approvals.rs)"),
    ("POST /v1/orgs", "a person's own act: any person may make an organization, no service account (iam.rs)"),
    ("DELETE /v1/orgs/{org}", "the whole organization: its owners signed in, once empty (iam.rs)"),
];

/// Routes about the caller's own things (isolation.rs checks them).
const SELF_ONLY: [&str; 7] = [
    "DELETE /v1/me/tokens/{token}",
    "POST /v1/invitations/accept",
    "POST /v1/me/sso-links/confirm",
    "GET /v1/me/sessions",
    "DELETE /v1/me/sessions",
    "DELETE /v1/me/sessions/{session}",
    "GET /v1/me/security-events",
];

/// Something the owner makes fresh before each request, because the
/// request (when allowed) consumes it. It fills the route's placeholder
/// named by [`Fresh::placeholder`].
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Fresh {
    Nothing,
    Token,
    Project,
    Member,
    ServiceAccount,
    TrustPolicy,
    Invitation,
    ProjectGrant,
    /// Single sign-on configured (it fills no placeholder).
    Sso,
    Namespace,
    Hook,
    Webhook,
    Service,
    Domain,
    Budget,
}

impl Fresh {
    fn placeholder(self) -> Option<&'static str> {
        use Fresh::*;
        Some(match self {
            Nothing | Sso => return None,
            Token => "{token}",
            Project => "{project}",
            Member => "{user}",
            ServiceAccount => "{service_account}",
            TrustPolicy => "{policy}",
            Invitation => "{invitation}",
            ProjectGrant => "{principal}",
            // In the spare cluster too: a cluster being deleted takes no new namespace.
            Namespace => "{cluster}/namespaces/{namespace}",
            Hook => "{hook}",
            Webhook => "{endpoint}",
            // In the spare cluster, which outlives the deletes of the main one.
            Service => "{cluster}/namespaces/{namespace}/services/{service}",
            Domain => "{domain}",
            Budget => "{budget}",
        })
    }
}

/// One row of the matrix. The path is the route's own template with its
/// placeholders filled from the [`World`] (or the [`Fresh`] thing); the
/// body may use the same placeholders, and `{n}` for a name no other
/// request used.
struct Row {
    /// `METHOD /path/{placeholder}` exactly as in the OpenAPI document.
    route: &'static str,
    /// The permission the route needs.
    action: Action,
    /// Appended to the path, e.g. `?format=ndjson`.
    query: &'static str,
    body: Option<Value>,
    fresh: Fresh,
    /// The request gives a principal a role or a credential, so it must
    /// confer no more than the caller's credential reaches
    /// (`moke_iam::may_confer`).
    confers: bool,
    /// What the path names last exists for no one here (a node: no region
    /// runs in this test), so callers allowed past the permission check
    /// are answered 404 and the others 403.
    absent: bool,
}

fn row(route: &'static str, action: Action) -> Row {
    Row { route, action, query: "", body: None, fresh: Fresh::Nothing, confers: false, absent: false }
}

impl Row {
    fn body(self, body: Value) -> Row {
        Row { body: Some(body), ..self }
    }
    fn fresh(self, fresh: Fresh) -> Row {
        Row { fresh, ..self }
    }
    fn query(self, query: &'static str) -> Row {
        Row { query, ..self }
    }
    fn confers(self) -> Row {
        Row { confers: true, ..self }
    }
    fn absent(self) -> Row {
        Row { absent: true, ..self }
    }
    fn method(&self) -> Method {
        Method::from_bytes(self.route.split(' ').next().unwrap().as_bytes()).unwrap()
    }
    /// True when the route acts inside one project (so a project-limited
    /// credential reaches it only in its own project).
    fn in_project(&self) -> bool {
        self.route.contains("{project}") || self.route.contains("{operation}")
    }
}

/// The matrix. Within a cluster the deletes come last: a deleting
/// deployment, pool or cluster still answers (409 or 202) to later rows
/// and later callers.
fn rows() -> Vec<Row> {
    use Action::*;
    use Fresh::*;
    vec![
        row("GET /v1/orgs/{org}", Read),
        row("PATCH /v1/orgs/{org}", ManageOrg).body(json!({ "display_name": "Acme {n}" })),
        row("GET /v1/orgs/{org}/quotas", ReadQuotas),
        row("GET /v1/orgs/{org}/audit-events", ReadAudit),
        row("GET /v1/orgs/{org}/audit-events/export", ReadAudit).query("?format=ndjson"),
        row("GET /v1/orgs/{org}/billing/balance", ReadBilling),
        row("GET /v1/orgs/{org}/billing/plan", ReadBilling),
        row("GET /v1/orgs/{org}/billing/usage", ReadBilling),
        row("GET /v1/orgs/{org}/billing/usage/csv", ReadBilling),
        row("PUT /v1/orgs/{org}/billing/plan", ManageBilling).body(json!({ "plan": "standard" })),
        row("GET /v1/orgs/{org}/billing/credits", ReadBilling),
        row("GET /v1/orgs/{org}/billing/budgets", ReadBilling),
        row("POST /v1/orgs/{org}/billing/budgets", ManageBilling).body(json!({ "name": "{n}", "amount": "100.00" })),
        row("GET /v1/orgs/{org}/billing/budgets/{budget}", ReadBilling).fresh(Budget),
        row("PATCH /v1/orgs/{org}/billing/budgets/{budget}", ManageBilling)
            .body(json!({ "amount": "200.00" }))
            .fresh(Budget),
        row("DELETE /v1/orgs/{org}/billing/budgets/{budget}", ManageBilling).fresh(Budget),
        row("GET /v1/orgs/{org}/billing/invoices", ReadBilling),
        row("GET /v1/orgs/{org}/billing/invoices/{invoice}", ReadBilling),
        row("GET /v1/orgs/{org}/billing/invoices/{invoice}/csv", ReadBilling),
        row("GET /v1/orgs/{org}/billing/invoices/{invoice}/pdf", ReadBilling),
        row("GET /v1/orgs/{org}/tokens", ReadCredentials),
        row("POST /v1/orgs/{org}/tokens", ManageCredentials).body(json!({ "name": "m", "role": "viewer" })).confers(),
        row("GET /v1/orgs/{org}/tokens/{token}", ReadCredentials),
        row("DELETE /v1/orgs/{org}/tokens/{token}", ManageCredentials).fresh(Token),
        row("GET /v1/orgs/{org}/projects", Read),
        row("POST /v1/orgs/{org}/projects", ManageResources).body(json!({ "name": "{n}" })),
        row("GET /v1/projects/{project}", Read),
        row("PATCH /v1/projects/{project}", ManageResources).body(json!({ "labels": { "a": "b" } })),
        row("DELETE /v1/projects/{project}", ManageResources).fresh(Project),
        row("GET /v1/projects/{project}/clusters", Read),
        row("GET /v1/projects/{project}/deploy-policy", Read),
        row("PUT /v1/projects/{project}/deploy-policy", ManageCredentials)
            .body(json!({ "allowed_image_prefixes": ["registry.example/a/"], "allowed_branches": ["main"] })),
        row("GET /v1/projects/{project}/hooks", ReadCredentials),
        row("POST /v1/projects/{project}/hooks", ManageCredentials)
            .body(json!({ "name": "{n}", "target": { "cluster": "{cluster}", "deployment": "hooked" } })),
        row("DELETE /v1/projects/{project}/hooks/{hook}", ManageCredentials).fresh(Hook),
        row("POST /v1/projects/{project}/hooks/{hook}/rotate-secret", ManageCredentials)
            .body(json!({ "previous_secret_valid_seconds": 60 }))
            .fresh(Hook),
        row("POST /v1/projects/{project}/clusters", ManageResources)
            .body(json!({ "name": "{n}", "spec": { "region": "eu-central-1" } })),
        row("POST /v1/projects/{project}/clusters/estimate", Read)
            .body(json!({ "cluster": { "name": "{n}", "spec": { "region": "eu-central-1" } } })),
        row("GET /v1/projects/{project}/clusters/{cluster}", Read),
        row("PATCH /v1/projects/{project}/clusters/{cluster}", ManageResources).body(json!({ "labels": { "a": "b" } })),
        row("GET /v1/projects/{project}/clusters/{cluster}/upgrades", Read),
        // The cluster runs the newest version: allowed callers are answered 409.
        row("POST /v1/projects/{project}/clusters/{cluster}/upgrade", ManageResources)
            .body(json!({ "kubernetes_version": "1.33" })),
        row("GET /v1/projects/{project}/clusters/{cluster}/snapshots", Read),
        // No region runs here, so the control plane is not running: allowed callers are answered 409.
        row("POST /v1/projects/{project}/clusters/{cluster}/snapshots", ManageResources),
        row("POST /v1/projects/{project}/clusters/{cluster}/snapshots/{snapshot}/restore", AdministerClusters),
        row("GET /v1/projects/{project}/clusters/{cluster}/node-pools", Read),
        row("GET /v1/projects/{project}/clusters/{cluster}/kubeconfig", Read),
        row("GET /v1/projects/{project}/clusters/{cluster}/nodes", Read),
        row("GET /v1/projects/{project}/clusters/{cluster}/operations", Read),
        row("GET /v1/projects/{project}/clusters/{cluster}/events", Read),
        row("GET /v1/projects/{project}/clusters/{cluster}/revisions", Read),
        row("GET /v1/projects/{project}/clusters/{cluster}/revisions/{generation}/diff", Read),
        row("GET /v1/projects/{project}/clusters/{cluster}/node-pools/{node_pool}/revisions", Read),
        row("GET /v1/projects/{project}/clusters/{cluster}/node-pools/{node_pool}/revisions/{generation}/diff", Read),
        row("GET /v1/projects/{project}/clusters/{cluster}/metrics", Read),
        row("POST /v1/projects/{project}/clusters/{cluster}/credentials", Read),
        row("POST /v1/projects/{project}/clusters/{cluster}/credentials/revoke", AdministerClusters),
        row("POST /v1/projects/{project}/clusters/{cluster}/node-pools", ManageResources)
            .body(json!({ "name": "{n}", "spec": { "machine_type": "bm.small", "count": 1 } })),
        row("GET /v1/projects/{project}/clusters/{cluster}/node-pools/{node_pool}", Read),
        row("PATCH /v1/projects/{project}/clusters/{cluster}/node-pools/{node_pool}", ManageResources)
            .body(json!({ "labels": { "a": "b" } })),
        row("POST /v1/projects/{project}/clusters/{cluster}/node-pools/estimate", Read)
            .body(json!({ "name": "{n}", "spec": { "machine_type": "bm.small", "count": 1 } })),
        row("POST /v1/projects/{project}/clusters/{cluster}/node-pools/{node_pool}/estimate", Read)
            .body(json!({ "spec": { "count": 2 } })),
        // No region runs here, so the pool has no nodes yet: allowed callers are answered 409.
        row("POST /v1/projects/{project}/clusters/{cluster}/node-pools/{node_pool}/recycle", ManageResources)
            .body(json!({})),
        row("DELETE /v1/projects/{project}/clusters/{cluster}/node-pools/{node_pool}/nodes/{node}", ManageResources)
            .absent(),
        row("GET /v1/projects/{project}/clusters/{cluster}/namespaces", Read),
        row("GET /v1/projects/{project}/clusters/{cluster}/unmanaged-deployments", Read),
        row("POST /v1/projects/{project}/clusters/{cluster}/namespaces", ManageResources)
            .body(json!({ "name": "{n}" })),
        row("DELETE /v1/projects/{project}/clusters/{cluster}/namespaces/{namespace}", ManageResources)
            .fresh(Namespace),
        row("GET /v1/projects/{project}/clusters/{cluster}/namespaces/{namespace}/deployments", Read),
        row("POST /v1/projects/{project}/clusters/{cluster}/namespaces/{namespace}/deployments", ManageResources)
            .body(json!({ "name": "{n}", "spec": { "image": "registry.example/app:1" } })),
        row("GET /v1/projects/{project}/clusters/{cluster}/namespaces/{namespace}/services", Read),
        row("POST /v1/projects/{project}/clusters/{cluster}/namespaces/{namespace}/services", ManageResources)
            .body(json!({ "name": "{n}", "spec": { "selector": { "app": "x" }, "ports": [{ "port": 80 }] } })),
        row("GET /v1/projects/{project}/clusters/{cluster}/namespaces/{namespace}/services/{service}", Read),
        row(
            "PATCH /v1/projects/{project}/clusters/{cluster}/namespaces/{namespace}/services/{service}",
            ManageResources,
        )
        .body(json!({ "labels": { "a": "b" } })),
        row(
            "DELETE /v1/projects/{project}/clusters/{cluster}/namespaces/{namespace}/services/{service}",
            ManageResources,
        )
        .fresh(Service),
        row("GET /v1/projects/{project}/clusters/{cluster}/namespaces/{namespace}/deployments/{deployment}", Read),
        row(
            "GET /v1/projects/{project}/clusters/{cluster}/namespaces/{namespace}/deployments/{deployment}/revisions",
            Read,
        ),
        row(
            "PATCH /v1/projects/{project}/clusters/{cluster}/namespaces/{namespace}/deployments/{deployment}",
            ManageResources,
        )
        .body(json!({ "labels": { "a": "b" } })),
        row(
            "POST /v1/projects/{project}/clusters/{cluster}/namespaces/{namespace}/deployments/{deployment}/scale",
            ManageResources,
        )
        .body(json!({ "replicas": 2 })),
        row(
            "POST /v1/projects/{project}/clusters/{cluster}/namespaces/{namespace}/deployments/{deployment}/rollback",
            ManageResources,
        )
        .body(json!({ "revision": 1 })),
        row(
            "POST /v1/projects/{project}/clusters/{cluster}/namespaces/{namespace}/deployments/{deployment}/pause",
            ManageResources,
        ),
        row(
            "POST /v1/projects/{project}/clusters/{cluster}/namespaces/{namespace}/deployments/{deployment}/resume",
            ManageResources,
        ),
        row(
            "POST /v1/projects/{project}/clusters/{cluster}/namespaces/{namespace}/deployments/{deployment}/restart",
            ManageResources,
        ),
        row(
            "DELETE /v1/projects/{project}/clusters/{cluster}/namespaces/{namespace}/deployments/{deployment}",
            ManageResources,
        ),
        row("DELETE /v1/projects/{project}/clusters/{cluster}/node-pools/{node_pool}", ManageResources),
        row("DELETE /v1/projects/{project}/clusters/{cluster}", ManageResources),
        row("GET /v1/operations/{operation}", Read),
        row("GET /v1/operations/{operation}/steps", Read),
        // The fixture's operation is no spec change: allowed callers are answered 409.
        row("POST /v1/operations/{operation}/cancel", ManageResources),
        // The fixture's operation was never held: it has no approval (404), and
        // every caller who sees it is answered 409; who may decide a held one
        // is approvals.rs's.
        row("GET /v1/operations/{operation}/approval", Read).absent(),
        row("POST /v1/operations/{operation}/approve", Read).body(json!({})),
        row("POST /v1/operations/{operation}/reject", Read).body(json!({})),
        row("GET /v1/projects/{project}/operations", Read),
        row("GET /v1/orgs/{org}/webhooks", ReadCredentials),
        row("POST /v1/orgs/{org}/webhooks", ManageCredentials)
            .body(json!({ "url": "https://hooks.example.invalid/", "event_types": ["*"] })),
        row("GET /v1/orgs/{org}/webhooks/{endpoint}/deliveries", ReadCredentials).fresh(Webhook),
        row("POST /v1/orgs/{org}/webhooks/{endpoint}/redeliveries", ManageCredentials)
            .body(json!({ "event_id": "{event}" }))
            .fresh(Webhook),
        row("GET /v1/orgs/{org}/webhooks/{endpoint}", ReadCredentials).fresh(Webhook),
        row("PATCH /v1/orgs/{org}/webhooks/{endpoint}", ManageCredentials)
            .body(json!({ "url": "https://hooks.example.invalid/moved", "enabled": true }))
            .fresh(Webhook),
        row("POST /v1/orgs/{org}/webhooks/{endpoint}/rotate-secret", ManageCredentials)
            .body(json!({ "previous_secret_valid_seconds": 60 }))
            .fresh(Webhook),
        row("DELETE /v1/orgs/{org}/webhooks/{endpoint}", ManageCredentials).fresh(Webhook),
        row("GET /v1/orgs/{org}/members", ReadMembers),
        row("PATCH /v1/orgs/{org}/members/{user}", ManageMembers)
            .body(json!({ "role": "viewer" }))
            .fresh(Member)
            .confers(),
        row("DELETE /v1/orgs/{org}/members/{user}", ManageMembers).fresh(Member),
        row("GET /v1/orgs/{org}/invitations", ReadMembers),
        row("POST /v1/orgs/{org}/invitations", ManageMembers)
            .body(json!({ "email": "{n}@x.test", "role": "viewer" }))
            .confers(),
        row("DELETE /v1/orgs/{org}/invitations/{invitation}", ManageMembers).fresh(Invitation),
        row("GET /v1/orgs/{org}/service-accounts", ReadCredentials),
        row("POST /v1/orgs/{org}/service-accounts", ManageCredentials)
            .body(json!({ "name": "{n}", "role": "viewer" }))
            .confers(),
        row("GET /v1/orgs/{org}/service-accounts/{service_account}", ReadCredentials),
        row("DELETE /v1/orgs/{org}/service-accounts/{service_account}", ManageCredentials).fresh(ServiceAccount),
        row("POST /v1/orgs/{org}/service-accounts/{service_account}/tokens", ManageCredentials)
            .body(json!({ "name": "t" }))
            .confers(),
        row("GET /v1/orgs/{org}/service-accounts/{service_account}/trust-policies", ReadCredentials),
        row("POST /v1/orgs/{org}/service-accounts/{service_account}/trust-policies", ManageCredentials)
            .body(json!({ "issuer": "https://ci.example", "audience": "a", "claims": { "repository": "r" } }))
            .confers(),
        row("DELETE /v1/orgs/{org}/service-accounts/{service_account}/trust-policies/{policy}", ManageCredentials)
            .fresh(TrustPolicy),
        row("GET /v1/orgs/{org}/sso", Read).fresh(Sso),
        row("PUT /v1/orgs/{org}/sso", ManageSso)
            .body(json!({
                "issuer": "{idp}", "client_id": "moke-sso", "client_secret": "moke-sso-secret",
                "allowed_domains": [], "default_role": "viewer",
            }))
            .confers(),
        row("DELETE /v1/orgs/{org}/sso", ManageSso).fresh(Sso),
        row("GET /v1/orgs/{org}/domains", Read),
        row("POST /v1/orgs/{org}/domains", ManageSso).body(json!({ "domain": "{n}.example.com" })),
        row("POST /v1/orgs/{org}/domains/{domain}/verify", ManageSso).fresh(Domain),
        row("DELETE /v1/orgs/{org}/domains/{domain}", ManageSso).fresh(Domain),
        row("GET /v1/orgs/{org}/credential-policy", Read),
        row("GET /v1/orgs/{org}/policy", Read),
        row("GET /v1/orgs/{org}/policy/versions", Read),
        row("PUT /v1/orgs/{org}/credential-policy", ManageSso).body(json!({ "max_token_lifetime_seconds": null })),
        row("GET /v1/projects/{project}/members", Read),
        row("PUT /v1/projects/{project}/members/{principal}", ManageProjectMembers)
            .body(json!({ "role": "developer" }))
            .fresh(ProjectGrant)
            .confers(),
        row("DELETE /v1/projects/{project}/members/{principal}", ManageProjectMembers).fresh(ProjectGrant),
    ]
}

/// One project's resources the rows name.
#[derive(Clone)]
struct ProjectWorld {
    project: String,
    cluster: String,
    pool: String,
    deployment: String,
    /// A cluster no row deletes, where fresh services are made: no
    /// service is created in a cluster being deleted.
    spare: String,
    /// The cluster's create operation.
    op: String,
}

/// An organization with everything the rows name. `project` is the one
/// the rows act in.
#[derive(Clone)]
struct World {
    org: Tenant,
    project: ProjectWorld,
    /// An event of the organization, to redeliver.
    event: String,
    token: String,
    account: String,
    /// The issuer of the identity provider single sign-on points at.
    idp: String,
    /// The organization's draft invoice.
    invoice: String,
}

impl World {
    /// `template` with the world's names filled in; `fresh` fills the
    /// placeholder of `kind`, `{n}` becomes `n{n}`.
    fn fill(&self, template: &str, kind: Fresh, fresh: &str, n: usize) -> String {
        let mut text = template.to_string();
        if let Some(placeholder) = kind.placeholder() {
            text = text.replace(placeholder, fresh);
        }
        let p = &self.project;
        for (placeholder, value) in [
            ("{org}", self.org.org.as_str()),
            ("{project}", &p.project),
            ("{cluster}", &p.cluster),
            ("{node_pool}", &p.pool),
            ("{namespace}", "default"),
            ("{deployment}", &p.deployment),
            ("{service}", "svc"),
            ("{operation}", &p.op),
            ("{token}", &self.token),
            ("{service_account}", &self.account),
            ("{event}", &self.event),
            ("{idp}", &self.idp),
            ("{invoice}", &self.invoice),
            ("{node}", "no-such-node"),
            ("{snapshot}", "no-such-snapshot"),
            ("{generation}", "1"),
            ("{n}", &format!("n{n}")),
        ] {
            text = text.replace(placeholder, value);
        }
        let unfilled = text.match_indices('{').any(|(i, _)| {
            text[i + 1..]
                .split_once('}')
                .is_some_and(|(name, _)| !name.is_empty() && name.chars().all(|c| c.is_ascii_lowercase() || c == '_'))
        });
        assert!(!unfilled, "unfilled placeholder in {text}");
        text
    }

    /// Makes `fresh` as the owner and returns what fills its placeholder.
    async fn make(&self, t: &TestApp, fresh: Fresh, n: usize) -> String {
        let owner = t.client(&self.org);
        let (org, project, cluster) = (&self.org.org, &self.project.project, &self.project.cluster);
        match fresh {
            Fresh::Nothing => String::new(),
            Fresh::Token => owner.create_token("t", "viewer").await.view.id.to_string(),
            Fresh::Project => owner.create_project(&format!("gone-{n}")).await.id.to_string(),
            Fresh::Member => t.member(&self.org, &format!("fresh-{n}@{org}.test"), "viewer").await.0,
            Fresh::ServiceAccount => owner.create_service_account(&format!("sa-{n}"), "viewer").await.id.to_string(),
            Fresh::TrustPolicy => {
                let body = json!({ "issuer": "https://ci.example", "audience": "a", "claims": { "repository": "r" } });
                let path = owner.org_path(&format!("/service-accounts/{}/trust-policies", self.account));
                owner.post::<TrustPolicyView>(&path, body).await.ok().id.to_string()
            }
            Fresh::Invitation => {
                let body = json!({ "email": format!("i{n}@x.test"), "role": "viewer" });
                owner.post::<InvitationView>(&owner.org_path("/invitations"), body).await.ok().id.to_string()
            }
            Fresh::ProjectGrant => {
                let (user, _) = t.member(&self.org, &format!("grant-{n}@{org}.test"), "viewer").await;
                owner.grant_project_role(project, &user, "viewer").await;
                user
            }
            Fresh::Service => {
                let spec = json!({ "selector": { "app": "x" }, "ports": [{ "port": 80 }] });
                let spare = &self.project.spare;
                owner.create_service(project, spare, &format!("svc-{n}"), spec).await;
                format!("{spare}/namespaces/default/services/svc-{n}")
            }
            Fresh::Budget => {
                let body = json!({ "name": format!("budget-{n}"), "amount": "100.00" });
                let made =
                    owner.post::<Value>(&owner.org_path("/billing/budgets"), body).await.expect(StatusCode::CREATED);
                made["id"].as_str().unwrap().to_string()
            }
            Fresh::Webhook => {
                let body = json!({ "url": "https://hooks.example.invalid/", "event_types": ["*"] });
                let made = owner.post::<WebhookEndpointCreated>(&owner.org_path("/webhooks"), body).await.ok();
                made.endpoint.id.to_string()
            }
            Fresh::Hook => {
                let body =
                    json!({ "name": format!("hook-{n}"), "target": { "cluster": cluster, "deployment": "hooked" } });
                let path = format!("/v1/projects/{project}/hooks");
                owner.post::<DeployHookCreated>(&path, body).await.expect(StatusCode::CREATED).hook.id.to_string()
            }
            Fresh::Namespace => {
                let spare = &self.project.spare;
                let path = format!("/v1/projects/{project}/clusters/{spare}/namespaces");
                owner.post::<Value>(&path, json!({ "name": format!("ns-{n}") })).await.expect(StatusCode::CREATED);
                format!("{spare}/namespaces/ns-{n}")
            }
            Fresh::Domain => {
                let body = json!({ "domain": format!("d{n}.example.com") });
                owner.post::<DomainView>(&owner.org_path("/domains"), body).await.expect(StatusCode::CREATED).domain
            }
            Fresh::Sso => {
                let body = json!({
                    "issuer": self.idp, "client_id": "moke-sso", "client_secret": "moke-sso-secret",
                    "allowed_domains": [], "default_role": "viewer",
                });
                owner.put::<Value>(&owner.org_path("/sso"), body).await.expect(StatusCode::OK);
                String::new()
            }
        }
    }
}

/// A project with a cluster, a node pool, deployments `app` and `hooked`
/// (no row deletes the latter, so hooks can point at it) and service `svc`.
async fn project_world(owner: &Client<'_>, name: &str) -> ProjectWorld {
    let project = owner.create_project(name).await.id.to_string();
    let (cluster, op) = owner.create_cluster(&project, "prod", json!({ "region": "eu-central-1" })).await;
    let cluster = cluster.id.to_string();
    let (pool, _) = owner.create_node_pool(&project, &cluster, "pool", 1).await;
    let image = json!({ "image": "registry.example/app:1" });
    let (deployment, _) = owner.create_deployment(&project, &cluster, "app", image.clone()).await;
    owner.create_deployment(&project, &cluster, "hooked", image).await;
    let spec = json!({ "selector": { "app": "app" }, "ports": [{ "port": 80 }] });
    owner.create_service(&project, &cluster, "svc", spec).await;
    let (spare, _) = owner.create_cluster(&project, "spare", json!({ "region": "eu-central-1" })).await;
    ProjectWorld {
        spare: spare.id.to_string(),
        project,
        cluster,
        pool: pool.id.to_string(),
        deployment: deployment.id.to_string(),
        op: op.id.to_string(),
    }
}

async fn world(t: &TestApp, name: &str, idp: &str) -> World {
    let org = t.tenant(name).await;
    let owner = t.client(&org);
    let project = project_world(&owner, "web").await;
    // A finished Operation (a label change), so the organization has an event to redeliver.
    let path = format!("/v1/projects/{}/clusters/{}", project.project, project.cluster);
    owner.patch::<Value>(&path, json!({ "labels": { "x": "y" } })).await.expect(StatusCode::ACCEPTED);
    let event: uuid::Uuid = sqlx::query_scalar(
        "SELECT id FROM events WHERE org_id = (SELECT id FROM organizations WHERE name = $1) LIMIT 1",
    )
    .bind(name)
    .fetch_one(&t.pool)
    .await
    .unwrap();
    let token = owner.create_token("x", "viewer").await.view.id.to_string();
    let account = owner.create_service_account("robot", "viewer").await.id.to_string();
    let now = chrono::Utc::now();
    let invoice = t.report_usage(&project.cluster, None, "", now - chrono::Duration::minutes(1), now).await;
    World {
        invoice,
        project,
        event: moke_api::ids::EventId::from_uuid(event).to_string(),
        token,
        account,
        idp: idp.to_string(),
        org,
    }
}

/// Who calls, and with what limits.
struct Caller {
    /// For failure messages, e.g. `viewer (service-account token)`.
    label: String,
    token: String,
    role: OrgRole,
    /// False for members of another organization.
    own_org: bool,
    /// The only project the credential reaches.
    project: Option<String>,
    /// The credential may only read (`scopes: ["read"]`).
    read_only: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    /// A success, or 409 (the state forbids it, e.g. the cluster is being deleted).
    Allowed,
    Forbidden,
    NotFound,
}

impl Caller {
    /// What `row` must answer this caller in `world`: the order of
    /// `moke_iam::authorize` (organization, project limit, scopes, role).
    fn expects(&self, row: &Row, world: &World) -> Expect {
        if !self.own_org {
            return Expect::NotFound;
        }
        if let Some(project) = &self.project {
            if row.in_project() {
                if row.fresh == Fresh::Project || world.project.project != *project {
                    return Expect::NotFound;
                }
            } else if row.action != Action::Read {
                return Expect::Forbidden;
            }
            // What it would give reaches beyond the credential's project:
            // an organization's person or account is not limited to one.
            if row.confers {
                return Expect::Forbidden;
            }
        }
        if self.read_only && row.action != Action::Read {
            return Expect::Forbidden;
        }
        if moke_iam::role_allows(self.role, row.action) { Expect::Allowed } else { Expect::Forbidden }
    }
}

/// A person of `world`'s organization with `role`, signed in.
async fn person(t: &TestApp, world: &World, role: OrgRole) -> Caller {
    let email = format!("{}@{}.test", role.as_str(), world.org.org);
    let (_, token) = t.member(&world.org, &email, role.as_str()).await;
    Caller { label: format!("{} (person)", role.as_str()), token, role, own_org: true, project: None, read_only: false }
}

/// A token of a service account of `world`'s organization with `role`,
/// narrowed by `limits` (`project`, `scopes`).
async fn account(t: &TestApp, world: &World, role: OrgRole, limits: Value) -> Caller {
    let owner = t.client(&world.org);
    static MADE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = MADE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let account = owner.create_service_account(&format!("{}-{n}", role.as_str()), role.as_str()).await;
    let made = owner.create_account_token(&account.id.to_string(), "matrix", limits.clone()).await;
    Caller {
        label: format!("{} (service-account token {limits})", role.as_str()),
        token: made.token,
        role,
        own_org: true,
        project: made.view.project.map(|p| p.to_string()),
        read_only: made.view.scopes.is_some_and(|s| s == [Action::Read]),
    }
}

/// Plays `rows` (in order) for each caller (in order) against `world`, and
/// fails listing every row that answered other than the caller's expectation.
async fn play(t: &TestApp, world: &World, callers: &[Caller], rows: &[Row], n: &mut usize) {
    let mut failures = Vec::new();
    let mut requests = 0;
    for caller in callers {
        let client = t.client(&world.org).with_token(&caller.token);
        for row in rows {
            *n += 1;
            requests += 1;
            let fresh = world.make(t, row.fresh, *n).await;
            let path =
                world.fill(&format!("{}{}", row.route.split_once(' ').unwrap().1, row.query), row.fresh, &fresh, *n);
            let body = row
                .body
                .as_ref()
                .map(|b| serde_json::from_str::<Value>(&world.fill(&b.to_string(), row.fresh, &fresh, *n)).unwrap());
            let answer = client.call::<Value>(row.method(), &path, body.as_ref()).await;
            let expected = caller.expects(row, world);
            let status = answer.status;
            let ok = match expected {
                // (or 409 once an earlier caller deleted the pool)
                Expect::Allowed if row.absent => status == StatusCode::NOT_FOUND || status == StatusCode::CONFLICT,
                Expect::Allowed => status.is_success() || status == StatusCode::CONFLICT,
                Expect::Forbidden => status == StatusCode::FORBIDDEN,
                Expect::NotFound => status == StatusCode::NOT_FOUND,
            };
            if !ok {
                failures.push(format!("row {} as {}: expected {expected:?}, {answer:?}", row.route, caller.label));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {requests} requests broke the permission table:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// A gateway whose quotas and rate limits let the matrix run.
async fn start(options: PgPoolOptions, connect: PgConnectOptions) -> TestApp {
    TestApp::start_with(options, connect, |c| {
        c.auth.allow_insecure_issuers = true;
        c.rate_limits.login_burst = 10_000;
        c.rate_limits.per_principal_burst = 10_000;
        c.rate_limits.per_ip_burst = 10_000;
        c.quotas.max_clusters = 1000;
        (c.quotas.max_webhook_endpoints, c.quotas.max_service_accounts, c.quotas.max_api_tokens) = (1000, 1000, 1000);
        (c.quotas.max_trust_policies, c.quotas.max_deploy_hooks, c.quotas.max_namespaces_per_cluster) =
            (1000, 1000, 1000);
        (c.quotas.max_pending_invitations, c.quotas.max_invitations_per_hour) = (1000, 1000);
        c.billing.max_budgets = 1000;
        // Nothing answers DNS here: a verification fails fast (409), as the matrix allows.
        c.auth.dns_resolver = "127.0.0.1:9".into();
    })
    .await
}

/// Each role as a person and as a service-account token of that role.
async fn every_role(t: &TestApp, world: &World) -> Vec<Caller> {
    let mut callers = Vec::new();
    for role in OrgRole::ALL {
        callers.push(person(t, world, role).await);
        callers.push(account(t, world, role, json!({})).await);
    }
    callers
}

#[test]
fn every_route_has_a_row_or_a_reason() {
    let rows = rows();
    let spec = serde_json::to_value(moke_api::http::openapi()).unwrap();
    for (path, item) in spec["paths"].as_object().unwrap() {
        for method in item.as_object().unwrap().keys() {
            let route = format!("{} {path}", method.to_uppercase());
            let known = OUTSIDE.iter().any(|(r, _)| *r == route)
                || SELF_ONLY.contains(&route.as_str())
                || rows.iter().any(|r| r.route == route);
            assert!(known, "route {route} has no authorization-matrix row: add one");
        }
    }
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn roles_on_organization_resources(options: PgPoolOptions, connect: PgConnectOptions) {
    let idp = OidcProvider::start().await;
    let t = start(options, connect).await;
    let own = world(&t, "acme", &idp.issuer).await;
    let callers = every_role(&t, &own).await;
    let rows: Vec<Row> = rows().into_iter().filter(|r| !r.in_project()).collect();
    play(&t, &own, &callers, &rows, &mut 0).await;
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn roles_on_project_resources(options: PgPoolOptions, connect: PgConnectOptions) {
    let t = start(options, connect).await;
    let own = world(&t, "acme", "https://idp.example.invalid").await;
    let callers = every_role(&t, &own).await;
    let rows: Vec<Row> = rows().into_iter().filter(Row::in_project).collect();
    play(&t, &own, &callers, &rows, &mut 0).await;
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn another_orgs_members_find_nothing_whatever_their_role(options: PgPoolOptions, connect: PgConnectOptions) {
    let idp = OidcProvider::start().await;
    let t = start(options, connect).await;
    let own = world(&t, "acme", &idp.issuer).await;
    let other = world(&t, "other", &idp.issuer).await;
    let mut strangers = Vec::new();
    for role in OrgRole::ALL {
        let mut stranger = person(&t, &other, role).await;
        stranger.own_org = false;
        strangers.push(stranger);
        let mut stranger = account(&t, &other, role, json!({})).await;
        stranger.own_org = false;
        strangers.push(stranger);
    }
    play(&t, &own, &strangers, &rows(), &mut 0).await;
}

#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn scoped_tokens_reach_one_project_and_only_their_actions(options: PgPoolOptions, connect: PgConnectOptions) {
    let idp = OidcProvider::start().await;
    let t = start(options, connect).await;
    let web = world(&t, "acme", &idp.issuer).await;
    // The same organization acting in its second project.
    let data = World { project: project_world(&t.client(&web.org), "data").await, ..web.clone() };
    let project = web.project.project.clone();
    let callers = [
        account(&t, &web, OrgRole::Owner, json!({ "project": project })).await,
        account(&t, &web, OrgRole::Owner, json!({ "scopes": ["read"] })).await,
        account(&t, &web, OrgRole::Admin, json!({ "project": project, "scopes": ["read"] })).await,
    ];
    assert_eq!(callers[0].project.as_deref(), Some(project.as_str()), "the token names its project");
    assert!(callers[1].read_only && callers[2].read_only, "the tokens name their scopes");
    let mut n = 0;
    // The other project first, while its own is whole; then its own.
    play(&t, &data, &callers, &rows(), &mut n).await;
    play(&t, &web, &callers, &rows(), &mut n).await;
}

/// Each write row with `?dry_run=true`, played by a person of every role
/// and by a read-only token: a dry run is refused exactly as the real call
/// (and allowed as it), whatever it would change.
#[sqlx::test(migrator = "moke_api::MIGRATOR")]
async fn dry_runs_obey_the_permission_table(options: PgPoolOptions, connect: PgConnectOptions) {
    let idp = OidcProvider::start().await;
    let t = start(options, connect).await;
    let own = world(&t, "acme", &idp.issuer).await;
    let mut callers = Vec::new();
    for role in OrgRole::ALL {
        callers.push(person(&t, &own, role).await);
    }
    callers.push(account(&t, &own, OrgRole::Owner, json!({ "scopes": ["read"] })).await);
    let dry: Vec<Row> = rows()
        .into_iter()
        .filter(|row| row.method() != Method::GET && !SELF_ONLY.contains(&row.route))
        .map(|row| {
            let query =
                if row.query.is_empty() { "?dry_run=true".to_string() } else { format!("{}&dry_run=true", row.query) };
            Row { query: Box::leak(query.into_boxed_str()), ..row }
        })
        .collect();
    assert!(dry.len() > 50, "{} write rows", dry.len());
    play(&t, &own, &callers, &dry, &mut 0).await;
}
