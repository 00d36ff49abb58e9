-- A control plane's certificate request that cannot be signed (its issuer
-- gone, a malformed request) is retried on its own backoff and, after its
-- attempts, set aside with its error (shown when a kubeconfig is asked
-- for): it never blocks the requests of other clusters. A new request from
-- the region starts over.
ALTER TABLE cluster_cas
    ADD COLUMN serving_attempts integer NOT NULL DEFAULT 0,
    ADD COLUMN serving_retry_at timestamptz,
    ADD COLUMN serving_error    text;
