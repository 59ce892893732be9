-- Sets one state_meta value. Params: $k key, $v value.
INSERT INTO state_meta (key, value) VALUES ($k, $v) ON CONFLICT (key) DO UPDATE SET value = excluded.value
