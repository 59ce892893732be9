-- An endpoint's consecutive failed attempts. Params: $id endpoint id. Result: consecutive_failures.
SELECT consecutive_failures FROM webhook_endpoints WHERE endpoint_id = $id
