-- The OAuth 2.0 Device Authorization Grant (RFC 8628), how `moke auth
-- login` signs a person in: a device asks for a device code and a short
-- user code, the person (signed in elsewhere) confirms or denies the user
-- code, and the device's polling receives a personal API token once.

CREATE TABLE device_authorizations (
    id               uuid PRIMARY KEY,
    -- SHA-256 of the device code (32 random bytes, base64url): the device's secret.
    device_code_hash bytea NOT NULL UNIQUE,
    -- Normalized: 8 characters of BCDFGHJKLMNPQRSTVWXZ, without the '-'.
    user_code        text NOT NULL UNIQUE CHECK (user_code ~ '^[BCDFGHJKLMNPQRSTVWXZ]{8}$'),
    client_name      text,
    -- pending -> approved -> issued, or pending -> denied.
    status           text NOT NULL DEFAULT 'pending'
                     CHECK (status IN ('pending', 'approved', 'denied', 'issued')),
    -- Seconds a device waits between polls; each `slow_down` adds 5.
    interval_seconds integer NOT NULL,
    last_polled_at   timestamptz,
    created_at       timestamptz NOT NULL DEFAULT now(),
    expires_at       timestamptz NOT NULL,
    source_ip        text,
    user_agent       text,
    -- Who decided, in which organization, through which session: the token
    -- is minted as that person acting there through that session, which
    -- must still be live when the device collects it.
    decided_by       uuid REFERENCES users(id) ON DELETE CASCADE,
    org_id           uuid REFERENCES organizations(id) ON DELETE CASCADE,
    session_id       uuid REFERENCES sessions(id) ON DELETE CASCADE,
    decided_at       timestamptz,
    -- The token the device received.
    token_id         uuid REFERENCES api_tokens(id) ON DELETE SET NULL,
    issued_at        timestamptz,
    CHECK (status = 'pending' OR (decided_by IS NOT NULL AND decided_at IS NOT NULL)),
    CHECK (status NOT IN ('approved', 'issued') OR (org_id IS NOT NULL AND session_id IS NOT NULL))
);
-- The hourly sweep of expired sign-in leftovers.
CREATE INDEX device_authorizations_expires_idx ON device_authorizations (expires_at);

-- Confirmations and denials a person attempted in the current window:
-- user codes have about 34 bits, so guessing one is limited per person
-- (across every gateway, hence in the database).
CREATE TABLE device_code_attempts (
    user_id           uuid PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
    window_started_at timestamptz NOT NULL,
    attempts          integer NOT NULL
);
