-- Index of signal types: hits, companies, average strength. Params: none. Columns: signal_type, hits, companies, avg_strength.
SELECT signal_type, count(*)::INTEGER AS hits, count(DISTINCT cik)::INTEGER AS companies, round(avg(strength), 2) AS avg_strength
FROM signal_hits GROUP BY signal_type ORDER BY signal_type
