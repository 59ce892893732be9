-- Number of filings matching company-filings.sql. Params: $cik INTEGER, $form VARCHAR. Columns: n.
SELECT count(*)::INTEGER AS n FROM filing_index f
WHERE f.cik = $cik AND ($form IS NULL OR f.form = $form OR starts_with(f.form, $form || '/') OR ($form = '10-K' AND f.form IN ('10-K405', '10-KT')))
