-- One webhook message. Params: $id message id. Result: event_type, payload_json.
SELECT event_type, payload_json FROM webhook_messages WHERE message_id = $id
