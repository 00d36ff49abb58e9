//! The one HTTP client for every request Moke makes to an address a
//! customer chose: identity-provider discovery and keys, CI issuers' keys,
//! event-webhook deliveries. It refuses to reach anything but the public
//! internet (loopback, private, link-local, CGNAT, multicast, NAT64, 6to4,
//! IPv4-compatible and IPv4-mapped IPv6, and every reserved range), checking
//! the addresses a name resolves to (so a name cannot smuggle a private
//! address past the check, and the connection goes to what was checked) and
//! literal addresses before any connection. It follows no redirects, ignores
//! proxy environment variables, bounds response bodies, and tells callers
//! only a fixed code, never what it found (no port-scan oracle).
//!
//! `outbound.allow_private_targets` exempts networks an operator trusts
//! (an identity provider on the company network); tests put loopback there.

use std::future::Future;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use crate::config::OutboundConfig;

/// The only thing callers learn about a refused or failed outbound request.
pub const REFUSED_CODE: &str = "outbound_request_failed";

/// Responses larger than this are cut off as failures (JWKS, discovery
/// documents and webhook answers are all far smaller).
const MAX_RESPONSE_BYTES: usize = 1 << 20;

/// True for IPv4 addresses outside the public internet.
fn is_internal_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_unspecified()
        || ip.is_multicast()
        || ip.is_broadcast()
        || a == 0 // "this network"
        || (a == 100 && (64..128).contains(&b)) // shared address space (CGNAT)
        || (a == 192 && b == 0 && c == 0) // IETF protocol assignments
        || (a == 192 && b == 0 && c == 2) // TEST-NET-1
        || (a == 192 && b == 88 && c == 99) // 6to4 relay anycast
        || (a == 198 && (b == 18 || b == 19)) // benchmarking
        || (a == 198 && b == 51 && c == 100) // TEST-NET-2
        || (a == 203 && b == 0 && c == 113) // TEST-NET-3
        || a >= 240 // reserved, and 255.255.255.255
}

/// True for IPv6 addresses outside the public internet, including every
/// form that embeds an IPv4 address (mapped, compatible, NAT64, 6to4, Teredo).
fn is_internal_v6(ip: Ipv6Addr) -> bool {
    let segments = ip.segments();
    let first = segments[0];
    ip.is_loopback()
        || ip.is_unspecified()
        || ip.is_multicast()
        || ip.to_ipv4_mapped().is_some() // ::ffff:a.b.c.d
        || segments[..6] == [0, 0, 0, 0, 0, 0] // ::a.b.c.d (IPv4-compatible) and ::/96
        || (segments[..6] == [0x64, 0xff9b, 0, 0, 0, 0]) // NAT64 64:ff9b::/96
        || (first == 0x64 && segments[1] == 0xff9b && segments[2] == 1) // local NAT64 64:ff9b:1::/48
        || (segments[..4] == [0x100, 0, 0, 0]) // discard-only 100::/64
        || first == 0x2002 // 6to4
        || (first == 0x2001 && segments[1] == 0) // Teredo 2001::/32
        || (first == 0x2001 && segments[1] == 0x0db8) // documentation
        || (first == 0x2001 && (0x10..0x30).contains(&segments[1])) // ORCHID (v1, v2)
        || (first == 0x2001 && segments[1] == 2 && segments[2] == 0) // benchmarking 2001:2::/48
        || (first & 0xfe00) == 0xfc00 // unique local
        || (first & 0xffc0) == 0xfe80 // link-local
        || (first & 0xffc0) == 0xfec0 // site-local (deprecated)
}

/// True for addresses outside the public internet.
pub fn is_internal(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_internal_v4(v4),
        IpAddr::V6(v6) => is_internal_v6(v6),
    }
}

/// Which addresses outbound requests may reach.
#[derive(Debug, Clone, Default)]
pub struct TargetPolicy {
    allowed: Vec<ipnet::IpNet>,
}

impl TargetPolicy {
    pub fn new(config: &OutboundConfig) -> TargetPolicy {
        TargetPolicy { allowed: config.allow_private_targets.iter().filter_map(|n| n.parse().ok()).collect() }
    }

    /// True when a request may connect to `ip`.
    pub fn permits(&self, ip: IpAddr) -> bool {
        !is_internal(ip) || self.allowed.iter().any(|net| net.contains(&ip))
    }

    /// True when `ip` is reachable only because an operator allowed it.
    pub fn allow_listed(&self, ip: IpAddr) -> bool {
        is_internal(ip) && self.allowed.iter().any(|net| net.contains(&ip))
    }
}

/// Why an outbound request failed: for the log only. Callers answer with
/// [`REFUSED_CODE`] whatever it says.
#[derive(Debug, thiserror::Error)]
pub enum OutboundError {
    #[error("refused: {0}")]
    Refused(String),
    #[error("request failed: {0}")]
    Request(#[from] reqwest::Error),
    #[error("the response is larger than {MAX_RESPONSE_BYTES} bytes")]
    TooLarge,
    #[error("could not build the request: {0}")]
    Build(String),
}

/// What a customer may learn of a failed request: one of a few fixed
/// categories, never the underlying error. A refused address and a failed
/// connection read alike, so nobody learns what a name resolves to.
pub fn failure_category(error: &OutboundError) -> &'static str {
    const NO_CONNECTION: &str = "could not connect to a public address";
    match error {
        OutboundError::Refused(_) => NO_CONNECTION,
        OutboundError::TooLarge => "the answer was too large",
        OutboundError::Build(_) => "the request could not be made",
        OutboundError::Request(error) if error.is_timeout() => "timed out",
        OutboundError::Request(error)
            if error.is_connect() || format!("{error:?}").contains("not a public address") =>
        {
            NO_CONNECTION
        }
        OutboundError::Request(_) => "the request failed",
    }
}

/// How long a name may take to resolve before the request fails.
const RESOLVE_TIMEOUT: Duration = Duration::from_secs(5);

/// The resolver of the guarded client: an asynchronous one (a slow name
/// holds no thread and is abandoned at [`RESOLVE_TIMEOUT`]), and answers a
/// request may not reach are dropped at resolution time.
struct GuardedResolver {
    policy: TargetPolicy,
    resolver: Option<Arc<hickory_resolver::TokioResolver>>,
}

impl reqwest::dns::Resolve for GuardedResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let policy = self.policy.clone();
        let resolver = self.resolver.clone();
        let host = name.as_str().to_string();
        Box::pin(async move {
            let failed = |why: String| -> Box<dyn std::error::Error + Send + Sync> { why.into() };
            let resolver = resolver.ok_or_else(|| failed("no DNS resolver is configured".into()))?;
            let answers = tokio::time::timeout(RESOLVE_TIMEOUT, resolver.lookup_ip(host.as_str()))
                .await
                .map_err(|_| failed(format!("resolving {host} timed out")))?
                .map_err(|e| failed(format!("resolving {host} failed: {e}")))?;
            let permitted: Vec<SocketAddr> =
                answers.iter().filter(|ip| policy.permits(*ip)).map(|ip| SocketAddr::new(ip, 0)).collect();
            if permitted.is_empty() {
                return Err(failed(format!("refused: {host} is not a public address")));
            }
            Ok(Box::new(permitted.into_iter()) as reqwest::dns::Addrs)
        })
    }
}

/// The guarded client (cheap to clone).
#[derive(Clone)]
pub struct OutboundClient {
    client: reqwest::Client,
    policy: TargetPolicy,
}

impl OutboundClient {
    pub fn new(config: &OutboundConfig, user_agent: &str) -> OutboundClient {
        crate::install_crypto_provider();
        let policy = TargetPolicy::new(config);
        let resolver = match hickory_resolver::TokioResolver::builder_tokio().and_then(|builder| builder.build()) {
            Ok(resolver) => Some(Arc::new(resolver)),
            Err(error) => {
                tracing::warn!(error = %error, "no DNS resolver: outbound requests reach literal addresses only");
                None
            }
        };
        let client = reqwest::Client::builder()
            .dns_resolver(Arc::new(GuardedResolver { policy: policy.clone(), resolver }))
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .timeout(Duration::from_secs(config.timeout_seconds))
            .connect_timeout(Duration::from_secs(config.timeout_seconds.min(5)))
            .user_agent(user_agent)
            .build()
            .expect("outbound HTTP client");
        OutboundClient { client, policy }
    }

    pub fn policy(&self) -> &TargetPolicy {
        &self.policy
    }

    /// Refuses a URL whose host is a literal address the policy forbids
    /// (literal addresses never reach the resolver), and anything but http(s).
    pub fn check_url(&self, url: &reqwest::Url) -> Result<(), OutboundError> {
        if !matches!(url.scheme(), "http" | "https") {
            return Err(OutboundError::Refused(format!("scheme {} is not allowed", url.scheme())));
        }
        let literal = match url.host() {
            Some(url::Host::Ipv4(ip)) => Some(IpAddr::V4(ip)),
            Some(url::Host::Ipv6(ip)) => Some(IpAddr::V6(ip)),
            Some(url::Host::Domain(_)) => None,
            None => return Err(OutboundError::Refused("the URL has no host".into())),
        };
        match literal {
            Some(ip) if !self.policy.permits(ip) => {
                Err(OutboundError::Refused(format!("{ip} is not a public address")))
            }
            _ => Ok(()),
        }
    }

    /// Checks a URL a customer saves (an event endpoint): http(s), and not a
    /// literal address or a `localhost` name the policy forbids. Names are
    /// not resolved here (every request resolves and checks them), so saving
    /// a URL tells nobody what a name resolves to. Answers whether the host
    /// is a literal address in `outbound.allow_private_targets`.
    pub fn check_saved_url(&self, url: &reqwest::Url) -> Result<bool, OutboundError> {
        self.check_url(url)?;
        let literal = match url.host() {
            Some(url::Host::Ipv4(ip)) => Some(IpAddr::V4(ip)),
            Some(url::Host::Ipv6(ip)) => Some(IpAddr::V6(ip)),
            Some(url::Host::Domain(name)) => {
                let name = name.trim_end_matches('.').to_ascii_lowercase();
                if name == "localhost" || name.ends_with(".localhost") {
                    return Err(OutboundError::Refused(format!("{name} is a loopback name")));
                }
                None
            }
            None => None,
        };
        Ok(literal.is_some_and(|ip| self.policy.allow_listed(ip)))
    }

    /// Sends a request after checking its URL; reads at most
    /// [`MAX_RESPONSE_BYTES`] of the answer.
    pub async fn execute(
        &self,
        request: reqwest::Request,
    ) -> Result<(reqwest::StatusCode, http::HeaderMap, Vec<u8>), OutboundError> {
        self.check_url(request.url())?;
        let response = self.client.execute(request).await?;
        let status = response.status();
        let headers = response.headers().clone();
        if response.content_length().is_some_and(|n| n > MAX_RESPONSE_BYTES as u64) {
            return Err(OutboundError::TooLarge);
        }
        let mut response = response;
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await? {
            if body.len() + chunk.len() > MAX_RESPONSE_BYTES {
                return Err(OutboundError::TooLarge);
            }
            body.extend_from_slice(&chunk);
        }
        Ok((status, headers, body))
    }

    /// A request builder on the guarded client; send it with [`OutboundClient::execute`].
    pub fn request(&self, method: reqwest::Method, url: reqwest::Url) -> reqwest::RequestBuilder {
        self.client.request(method, url)
    }

    /// GETs a JSON document (a discovery document, a key set).
    pub async fn get_json<T: serde::de::DeserializeOwned>(&self, url: &str) -> Result<T, OutboundError> {
        let url = reqwest::Url::parse(url).map_err(|e| OutboundError::Build(e.to_string()))?;
        let request = self.client.get(url).build()?;
        let (status, _, body) = self.execute(request).await?;
        if !status.is_success() {
            return Err(OutboundError::Refused(format!("answered {status}")));
        }
        serde_json::from_slice(&body).map_err(|e| OutboundError::Build(format!("not JSON: {e}")))
    }
}

/// The OIDC library's HTTP calls go through the guard too.
impl<'c> openidconnect::AsyncHttpClient<'c> for OutboundClient {
    type Error = openidconnect::HttpClientError<OutboundError>;
    type Future = Pin<Box<dyn Future<Output = Result<openidconnect::HttpResponse, Self::Error>> + Send + 'c>>;

    fn call(&'c self, request: openidconnect::HttpRequest) -> Self::Future {
        Box::pin(async move {
            let request: reqwest::Request =
                request.try_into().map_err(|e: reqwest::Error| openidconnect::HttpClientError::Other(e.to_string()))?;
            let (status, headers, body) =
                self.execute(request).await.map_err(|e| openidconnect::HttpClientError::Other(e.to_string()))?;
            let mut builder = http::Response::builder().status(status);
            for (name, value) in headers.iter() {
                builder = builder.header(name, value);
            }
            builder.body(body).map_err(openidconnect::HttpClientError::Http)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_non_public_range_is_internal() {
        for text in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "224.0.0.1",
            "255.255.255.255",
            "192.0.0.8",
            "192.0.2.1",
            "198.18.0.1",
            "198.51.100.7",
            "203.0.113.9",
            "240.0.0.1",
            "::1",
            "::",
            "fe80::1",
            "fc00::1",
            "fd12::1",
            "ff02::1",
            "::ffff:127.0.0.1",
            "::ffff:169.254.169.254",
            "::127.0.0.1",
            "::10.0.0.1",
            "64:ff9b::a9fe:a9fe",
            "64:ff9b:1::1",
            "2002:7f00:1::",
            "2001::1",
            "2001:db8::1",
            "100::1",
            "fec0::1",
            "2001:10::1",
            "2001:2::1",
        ] {
            assert!(is_internal(text.parse().unwrap()), "{text} must be refused");
        }
        for text in ["1.1.1.1", "8.8.8.8", "93.184.215.14", "2606:4700:4700::1111", "2a00:1450:4001:80b::200e"] {
            assert!(!is_internal(text.parse().unwrap()), "{text} is public");
        }
    }

    #[test]
    fn allow_listed_networks_are_reachable() {
        let policy = TargetPolicy::new(&OutboundConfig {
            allow_private_targets: vec!["127.0.0.1/32".into()],
            timeout_seconds: 5,
        });
        assert!(policy.permits("127.0.0.1".parse().unwrap()));
        assert!(!policy.permits("127.0.0.2".parse().unwrap()));
        assert!(!policy.permits("10.0.0.1".parse().unwrap()));
    }
}
