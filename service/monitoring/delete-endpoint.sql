-- Removes an endpoint of an account (its deliveries and attempts stay as history). Params: $id, $account.
DELETE FROM webhook_endpoints WHERE endpoint_id = $id AND account_id = $account
