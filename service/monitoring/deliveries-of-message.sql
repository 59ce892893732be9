-- The deliveries already made of one message. Params: $message message id. Result: delivery_id.
SELECT delivery_id FROM webhook_deliveries WHERE message_id = $message
