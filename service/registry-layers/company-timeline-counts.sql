-- Event counts by type for one company's timeline. Params: $cik INTEGER. Columns: event_type, n.
SELECT event_type, count(*)::INTEGER AS n FROM timeline WHERE cik = $cik GROUP BY event_type ORDER BY n DESC, event_type
