-- Every hosted cluster has its own certificate authority: an intermediate
-- of the Moke root kept in Vault's PKI mount as an issuer. Kept apart from
-- `clusters` (no foreign key) so the CA outlives the cluster row until a
-- sweep has destroyed it in Vault.
CREATE TABLE cluster_cas (
    cluster_id              uuid PRIMARY KEY,
    org_id                  uuid NOT NULL,
    -- The PKI mount holding the issuer (cluster CAs are spread over several).
    mount                   text NOT NULL,
    issuer_id               text NOT NULL,
    key_id                  text NOT NULL,
    certificate_pem         text NOT NULL,
    -- Client certificates carry the generation they were issued in; the
    -- control plane refuses older ones. Revoking credentials bumps it.
    credentials_generation  bigint NOT NULL DEFAULT 1,
    -- The control plane's certificate request (from the region) and the
    -- certificate Vault signed for it.
    serving_csr             text,
    serving_certificate_pem text,
    created_at              timestamptz NOT NULL DEFAULT now(),
    destroyed_at            timestamptz
);
CREATE INDEX cluster_cas_pending_idx ON cluster_cas (cluster_id)
    WHERE serving_csr IS NOT NULL AND serving_certificate_pem IS NULL;

-- Region reports may now ask for a control-plane certificate.
CREATE FUNCTION notify_serving_csr() RETURNS trigger AS $$
BEGIN
    PERFORM pg_notify('moke_csr', NEW.cluster_id::text);
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER cluster_cas_csr_notify AFTER UPDATE OF serving_csr ON cluster_cas
    FOR EACH ROW WHEN (NEW.serving_csr IS NOT NULL) EXECUTE FUNCTION notify_serving_csr();
