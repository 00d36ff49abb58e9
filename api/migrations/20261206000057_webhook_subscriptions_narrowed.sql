-- An endpoint's event types can be narrowed (PATCH). Deliveries already
-- queued for it of a type it no longer subscribes to then fail rather than
-- go out: a customer who drops billing events from an endpoint expects no
-- amounts to reach it afterwards. The matching rule moves into one function
-- that `emit_event` and the narrowing both use. The function is new and
-- `emit_event` keeps its signature and behaviour, so the gateway running
-- before this migration works against it unchanged.
CREATE OR REPLACE FUNCTION event_type_subscribed(kind text, patterns text[]) RETURNS boolean AS $$
    SELECT EXISTS (SELECT 1 FROM unnest(patterns) AS pattern
                   WHERE kind LIKE replace(replace(pattern, '%', '\%'), '*', '%')
                     -- Billing events go only where they are named outright.
                     AND (kind NOT LIKE 'invoice.%' OR pattern LIKE 'invoice.%')
                     AND (kind NOT LIKE 'budget.%' OR pattern LIKE 'budget.%'));
$$ LANGUAGE sql IMMUTABLE;

CREATE OR REPLACE FUNCTION emit_event(org uuid, kind text, body jsonb) RETURNS uuid AS $$
DECLARE
    event_id uuid := gen_random_uuid();
BEGIN
    INSERT INTO events (id, org_id, event_type, payload) VALUES (event_id, org, kind, body);
    INSERT INTO webhook_deliveries (id, event_id, endpoint_id)
        SELECT gen_random_uuid(), event_id, e.id FROM webhook_endpoints e
        WHERE e.org_id = org AND e.disabled_at IS NULL AND event_type_subscribed(kind, e.event_types);
    PERFORM pg_notify('moke_webhooks', '');
    RETURN event_id;
END;
$$ LANGUAGE plpgsql;
