-- L&I insurance filings of a carrier's dockets. Params: $dot INTEGER. Amounts in thousands of dollars.
SELECT i.* EXCLUDE (source_file)
FROM insurance i
WHERE i.docket_number IN (SELECT docket_number FROM authority WHERE dot_number = $dot
                          UNION SELECT unnest([docket1, docket2, docket3]) FROM carriers WHERE dot_number = $dot)
ORDER BY i.effective_date DESC;
