-- Stores one webhook message (the payload its deliveries are signed over); an event emitted twice is stored once.
-- Params: $message_id, $event_type, $payload_json, $created_at.
INSERT INTO webhook_messages (message_id, event_type, payload_json, created_at)
VALUES ($message_id, $event_type, $payload_json, $created_at)
ON CONFLICT DO NOTHING
