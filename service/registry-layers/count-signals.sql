-- Number of hits matching list-signals.sql (same params except limit). Columns: n.
SELECT count(*)::INTEGER AS n
FROM signal_hits h
WHERE ($ticker IS NULL OR h.ticker = $ticker)
  AND ($type IS NULL OR h.signal_type = $type)
  AND ($exchange IS NULL OR lower(h.exchange) = lower($exchange))
  AND h.strength >= coalesce($min_strength, 1)
  AND ($also IS NULL OR h.cik IN (SELECT cik FROM signal_hits WHERE signal_type = $also AND strength >= coalesce($min_strength, 1)))
