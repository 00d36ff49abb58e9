-- Gateways cache authenticated tokens; a revoked or shortened token must be
-- dropped from every gateway's cache at once, so changes are announced.
CREATE FUNCTION notify_token_change() RETURNS trigger AS $$
BEGIN
    PERFORM pg_notify('moke_tokens', COALESCE(NEW.id, OLD.id)::text);
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER api_tokens_notify AFTER UPDATE OF revoked_at, expires_at, role OR DELETE ON api_tokens
    FOR EACH ROW EXECUTE FUNCTION notify_token_change();
