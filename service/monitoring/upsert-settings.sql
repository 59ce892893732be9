-- Sets an account's monitoring settings. Params: $id account id, $auto_watch, $at ISO time.
INSERT INTO monitoring_settings (account_id, auto_watch, updated_at) VALUES ($id, $auto_watch, $at)
ON CONFLICT (account_id) DO UPDATE SET auto_watch = excluded.auto_watch, updated_at = excluded.updated_at
