-- Deliveries not yet delivered nor given up (re-enqueued when a delivery runner starts). Result: delivery_id.
SELECT delivery_id FROM webhook_deliveries WHERE status = 'pending' ORDER BY seq
