-- Billing events (invoice.*, budget.*) reach only endpoints that subscribe
-- to them by name, which only a creator who may read billing can do; `*`
-- keeps meaning every other event. Replaces the function only.
CREATE OR REPLACE FUNCTION emit_event(org uuid, kind text, body jsonb) RETURNS uuid AS $$
DECLARE
    event_id uuid := gen_random_uuid();
BEGIN
    INSERT INTO events (id, org_id, event_type, payload) VALUES (event_id, org, kind, body);
    INSERT INTO webhook_deliveries (id, event_id, endpoint_id)
        SELECT gen_random_uuid(), event_id, e.id FROM webhook_endpoints e
        WHERE e.org_id = org AND e.disabled_at IS NULL
          AND EXISTS (SELECT 1 FROM unnest(e.event_types) AS pattern
                      WHERE kind LIKE replace(replace(pattern, '%', '\%'), '*', '%')
                        AND (kind NOT LIKE 'invoice.%' OR pattern LIKE 'invoice.%')
                        AND (kind NOT LIKE 'budget.%' OR pattern LIKE 'budget.%'));
    PERFORM pg_notify('moke_webhooks', '');
    RETURN event_id;
END;
$$ LANGUAGE plpgsql;
