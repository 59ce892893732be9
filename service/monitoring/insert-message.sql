-- Stores one webhook message (its id is the webhook-id header); an event emitted twice is stored once.
-- Params: $id, $type, $payload (JSON), $at.
INSERT INTO webhook_messages (message_id, event_type, payload_json, created_at) VALUES ($id, $type, $payload, $at)
ON CONFLICT DO NOTHING
