-- The plan of a credit account and its monitoring settings (absent account: free plan, auto_watch off).
-- Params: $id account id. Result: plan (nullable), auto_watch (nullable), watched (count of watchlist rows).
SELECT
  (SELECT plan FROM accounts WHERE account_id = $id) AS plan,
  (SELECT auto_watch FROM monitoring_settings WHERE account_id = $id) AS auto_watch,
  (SELECT count(*)::INTEGER FROM watchlist WHERE account_id = $id) AS watched
