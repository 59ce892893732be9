-- One state_meta value. Params: $k key. Result: value.
SELECT value FROM state_meta WHERE key = $k
