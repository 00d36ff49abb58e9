//! Type-prefixed identifiers (`cl_0192…`): UUIDv7 inside, a prefix naming the
//! resource kind outside, so an id pasted in the wrong place is refused with a
//! clear message instead of a confusing 404.

use std::fmt;
use std::marker::PhantomData;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use uuid::Uuid;

/// A kind of resource with its id prefix.
pub trait IdKind: Send + Sync + 'static {
    const PREFIX: &'static str;
    const KIND: &'static str;
    /// The name of this kind's id schema in the OpenAPI document, e.g. `OrgId`.
    const SCHEMA: &'static str;
}

/// A prefixed identifier of resource kind `K`.
pub struct Id<K: IdKind>(Uuid, PhantomData<K>);

impl<K: IdKind> Id<K> {
    /// A new, time-ordered id.
    pub fn generate() -> Self {
        Id(Uuid::now_v7(), PhantomData)
    }
    pub fn from_uuid(uuid: Uuid) -> Self {
        Id(uuid, PhantomData)
    }
    pub fn uuid(&self) -> Uuid {
        self.0
    }
}

impl<K: IdKind> Clone for Id<K> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<K: IdKind> Copy for Id<K> {}
impl<K: IdKind> PartialEq for Id<K> {
    fn eq(&self, other: &Self) -> bool {
        self.0 == other.0
    }
}
impl<K: IdKind> Eq for Id<K> {}
impl<K: IdKind> std::hash::Hash for Id<K> {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.hash(state)
    }
}

impl<K: IdKind> fmt::Display for Id<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}_{}", K::PREFIX, self.0.simple())
    }
}

/// In GraphQL every id is the built-in `ID` scalar, in its prefixed text form.
impl<K: IdKind> async_graphql::OutputType for Id<K> {
    fn type_name() -> std::borrow::Cow<'static, str> {
        <async_graphql::ID as async_graphql::OutputType>::type_name()
    }

    fn create_type_info(registry: &mut async_graphql::registry::Registry) -> String {
        <async_graphql::ID as async_graphql::OutputType>::create_type_info(registry)
    }

    async fn resolve(
        &self,
        _: &async_graphql::ContextSelectionSet<'_>,
        _: &async_graphql::Positioned<async_graphql::parser::types::Field>,
    ) -> async_graphql::ServerResult<async_graphql::Value> {
        Ok(async_graphql::Value::String(self.to_string()))
    }
}

impl<K: IdKind> fmt::Debug for Id<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// Why a text is not an id of the expected kind.
#[derive(Debug, thiserror::Error)]
#[error("expected a {kind} id like {prefix}_0192f3a4b5c67d8e9f00112233445566")]
pub struct IdParseError {
    pub kind: &'static str,
    pub prefix: &'static str,
}

impl<K: IdKind> FromStr for Id<K> {
    type Err = IdParseError;
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let error = || IdParseError { kind: K::KIND, prefix: K::PREFIX };
        let rest = text.strip_prefix(K::PREFIX).and_then(|rest| rest.strip_prefix('_')).ok_or_else(error)?;
        if rest.len() != 32 {
            return Err(error());
        }
        Uuid::parse_str(rest).map(Id::from_uuid).map_err(|_| error())
    }
}

impl<K: IdKind> Serialize for Id<K> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de, K: IdKind> Deserialize<'de> for Id<K> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

impl<K: IdKind> utoipa::PartialSchema for Id<K> {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        utoipa::openapi::ObjectBuilder::new()
            .schema_type(utoipa::openapi::schema::Type::String)
            .description(Some(format!("{} id, `{}_` followed by 32 hex digits", K::KIND, K::PREFIX)))
            .pattern(Some(format!("^{}_[0-9a-f]{{32}}$", K::PREFIX)))
            .into()
    }
}

/// One schema per kind, so an `sa_…` value never meets the pattern of an `org_…` one.
impl<K: IdKind> utoipa::ToSchema for Id<K> {
    fn name() -> std::borrow::Cow<'static, str> {
        K::SCHEMA.into()
    }
}

macro_rules! id_kinds {
    ($($(#[$doc:meta])* $kind:ident => $prefix:literal, $name:literal, $schema:literal;)*) => {
        $(
            $(#[$doc])*
            pub enum $kind {}
            impl IdKind for $kind {
                const PREFIX: &'static str = $prefix;
                const KIND: &'static str = $name;
                const SCHEMA: &'static str = $schema;
            }
        )*
    };
}

id_kinds! {
    /// An organization.
    OrgKind => "org", "organization", "OrgId";
    /// A project.
    ProjectKind => "prj", "project", "ProjectId";
    /// A hosted Kubernetes cluster.
    ClusterKind => "cl", "cluster", "ClusterId";
    /// A node pool of a cluster.
    NodePoolKind => "np", "node pool", "NodePoolId";
    /// A long-running operation.
    OperationKind => "op", "operation", "OperationId";
    /// An API token.
    TokenKind => "tok", "API token", "TokenId";
    /// An audit event.
    AuditEventKind => "aud", "audit event", "AuditEventId";
    /// A person.
    UserKind => "usr", "user", "UserId";
    /// A service account.
    ServiceAccountKind => "sa", "service account", "ServiceAccountId";
    /// A login session.
    SessionKind => "ses", "session", "SessionId";
    /// An invitation to join an organization.
    InvitationKind => "inv", "invitation", "InvitationId";
    /// A CI workload-identity trust policy.
    TrustPolicyKind => "tp", "trust policy", "TrustPolicyId";
    /// A Deployment in a hosted cluster.
    DeploymentKind => "dep", "deployment", "DeploymentId";
    /// A Service in a hosted cluster.
    ServiceKind => "svc", "service", "ServiceId";
    /// An inbound CI/CD deploy webhook.
    DeployHookKind => "hk", "deploy hook", "DeployHookId";
    /// A customer's event webhook endpoint.
    WebhookEndpointKind => "whe", "webhook endpoint", "WebhookEndpointId";
    /// An event (a message sent to webhook endpoints).
    EventKind => "msg", "event", "EventId";
    /// One event's delivery to one endpoint.
    WebhookDeliveryKind => "whd", "webhook delivery", "WebhookDeliveryId";
    /// A domain an organization claims.
    DomainKind => "dom", "domain", "DomainId";
    /// A device sign-in (OAuth 2.0 Device Authorization Grant).
    DeviceAuthorizationKind => "dva", "device sign-in", "DeviceAuthorizationId";
    /// An organization's invoice for one month.
    InvoiceKind => "bill", "invoice", "InvoiceId";
    /// A promotional or prepaid credit an organization holds.
    CreditGrantKind => "cred", "credit grant", "CreditGrantId";
    /// A monthly budget with alert thresholds.
    BudgetKind => "bud", "budget", "BudgetId";
}

pub type OrgId = Id<OrgKind>;
pub type ProjectId = Id<ProjectKind>;
pub type ClusterId = Id<ClusterKind>;
pub type NodePoolId = Id<NodePoolKind>;
pub type OperationId = Id<OperationKind>;
pub type TokenId = Id<TokenKind>;
pub type AuditEventId = Id<AuditEventKind>;
pub type UserId = Id<UserKind>;
pub type ServiceAccountId = Id<ServiceAccountKind>;
pub type SessionId = Id<SessionKind>;
pub type InvitationId = Id<InvitationKind>;
pub type TrustPolicyId = Id<TrustPolicyKind>;
pub type DeploymentId = Id<DeploymentKind>;
pub type ServiceId = Id<ServiceKind>;
pub type DeployHookId = Id<DeployHookKind>;
pub type WebhookEndpointId = Id<WebhookEndpointKind>;
pub type EventId = Id<EventKind>;
pub type WebhookDeliveryId = Id<WebhookDeliveryKind>;
pub type DomainId = Id<DomainKind>;
pub type DeviceAuthorizationId = Id<DeviceAuthorizationKind>;
pub type InvoiceId = Id<InvoiceKind>;
pub type CreditGrantId = Id<CreditGrantKind>;
pub type BudgetId = Id<BudgetKind>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip_and_refuse_other_kinds() {
        let id = ClusterId::generate();
        let text = id.to_string();
        assert!(text.starts_with("cl_"));
        assert_eq!(text.parse::<ClusterId>().unwrap(), id);
        assert!(text.replace("cl_", "prj_").parse::<ClusterId>().is_err());
        assert!("cl_xyz".parse::<ClusterId>().is_err());
    }
}
