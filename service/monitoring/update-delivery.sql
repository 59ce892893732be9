-- Records a delivery's state after an attempt or a redelivery. Params: $id, $status, $attempts, $error, $at.
UPDATE webhook_deliveries SET status = $status, attempts = $attempts, last_error = $error, updated_at = $at WHERE delivery_id = $id
