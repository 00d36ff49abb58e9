//! Request rate limits (GCRA, via `governor`): per principal, per client IP,
//! and a stricter one per IP for sign-in, sign-up, password reset and token
//! exchange. Limits are per gateway process; per-account backoff against
//! password guessing is kept in the database (see [`crate::app::iam::sessions`]) so
//! it holds across gateways.

use std::hash::Hash;
use std::net::IpAddr;
use std::num::NonZeroU32;

use governor::clock::{Clock, DefaultClock};
use governor::middleware::StateInformationMiddleware;
use governor::state::keyed::DefaultKeyedStateStore;
use governor::{Quota, RateLimiter};
use uuid::Uuid;

use crate::app::{Error, Result};
use crate::config::RateLimitConfig;

type Keyed<K> = RateLimiter<K, DefaultKeyedStateStore<K>, DefaultClock, StateInformationMiddleware>;

/// One limit: a burst of `burst` requests, refilled at `limit` per `window_seconds`.
struct Limit<K: Hash + Eq + Clone> {
    limiter: Keyed<K>,
    limit: u32,
    window_seconds: u64,
}

/// What a request that passed may still do.
#[derive(Debug, Clone, Copy)]
pub struct Allowance {
    pub limit: u32,
    pub window_seconds: u64,
    pub remaining: u32,
}

impl<K: Hash + Eq + Clone> Limit<K> {
    fn new(limit: u32, window_seconds: u64, burst: u32) -> Limit<K> {
        let nonzero = |n: u32| NonZeroU32::new(n.max(1)).expect("at least one");
        let quota =
            if window_seconds == 60 { Quota::per_minute(nonzero(limit)) } else { Quota::per_second(nonzero(limit)) };
        let limiter =
            RateLimiter::keyed(quota.allow_burst(nonzero(burst))).with_middleware::<StateInformationMiddleware>();
        Limit { limiter, limit, window_seconds }
    }

    fn check(&self, key: &K, clock: &DefaultClock) -> Result<Allowance> {
        match self.limiter.check_key(key) {
            Ok(state) => Ok(Allowance {
                limit: self.limit,
                window_seconds: self.window_seconds,
                remaining: state.remaining_burst_capacity(),
            }),
            Err(not_until) => Err(Error::RateLimited {
                limit: self.limit,
                window_seconds: self.window_seconds,
                retry_after_seconds: not_until.wait_time_from(clock.now()).as_secs_f64().ceil().max(1.0) as u64,
            }),
        }
    }
}

/// The gateway's rate limiters.
pub struct RateLimits {
    principal: Limit<Uuid>,
    ip: Limit<IpAddr>,
    login: Limit<IpAddr>,
    clock: DefaultClock,
}

impl RateLimits {
    pub fn new(config: &RateLimitConfig) -> RateLimits {
        RateLimits {
            principal: Limit::new(config.per_principal_per_second, 1, config.per_principal_burst),
            ip: Limit::new(config.per_ip_per_second, 1, config.per_ip_burst),
            login: Limit::new(config.login_per_ip_per_minute, 60, config.login_burst),
            clock: DefaultClock::default(),
        }
    }

    /// Counts a request of an authenticated principal.
    pub fn check_principal(&self, principal: Uuid) -> Result<Allowance> {
        self.principal.check(&principal, &self.clock)
    }

    /// Counts any request from a client address.
    pub fn check_ip(&self, ip: IpAddr) -> Result<Allowance> {
        self.ip.check(&client_key(ip), &self.clock)
    }

    /// Counts a sign-in, sign-up, password reset or token exchange from a client address.
    pub fn check_login(&self, ip: Option<&str>) -> Result<()> {
        match ip.and_then(|ip| ip.parse::<IpAddr>().ok()) {
            Some(ip) => self.login.check(&client_key(ip), &self.clock).map(|_| ()),
            None => Ok(()),
        }
    }

    /// Forgets keys whose limits have fully refilled (call periodically).
    /// (Kept beside the checks so every per-address limit uses [`client_key`].)
    pub fn retain_recent(&self) {
        self.principal.limiter.retain_recent();
        self.ip.limiter.retain_recent();
        self.login.limiter.retain_recent();
    }
}

/// The key per-address limits count under: an IPv4 address, or the /64 an
/// IPv6 address belongs to (one subscriber is usually given a whole /64, so
/// counting single addresses would let one client rotate past any limit).
/// IPv4-mapped IPv6 addresses count as their IPv4 address.
pub fn client_key(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V4(_) => ip,
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => {
                let s = v6.segments();
                IpAddr::V6(std::net::Ipv6Addr::new(s[0], s[1], s[2], s[3], 0, 0, 0, 0))
            }
        },
    }
}

#[cfg(test)]
mod client_key_tests {
    use super::client_key;

    #[test]
    fn ipv6_counts_per_64() {
        let a = client_key("2001:db8:1:2:aaaa::1".parse().unwrap());
        let b = client_key("2001:db8:1:2:ffff:1:2:3".parse().unwrap());
        let other = client_key("2001:db8:1:3::1".parse().unwrap());
        assert_eq!(a, b);
        assert_ne!(a, other);
        assert_eq!(client_key("::ffff:192.0.2.1".parse().unwrap()), client_key("192.0.2.1".parse().unwrap()));
        assert_ne!(client_key("192.0.2.1".parse().unwrap()), client_key("192.0.2.2".parse().unwrap()));
    }
}
