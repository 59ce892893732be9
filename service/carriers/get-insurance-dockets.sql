-- L&I insurance filings of a carrier's dockets, the census dockets given (read from the packed census row):
-- the same rows and order as get-insurance.sql without its read of carriers. Params: $dot INTEGER,
-- $docket1, $docket2, $docket3 (VARCHAR|null). Amounts in thousands of dollars.
SELECT i.* EXCLUDE (source_file)
FROM insurance i
WHERE i.docket_number IN (SELECT docket_number FROM authority WHERE dot_number = $dot
                          UNION SELECT unnest([$docket1, $docket2, $docket3]))
-- Ties on the date in a fixed order (every served column), as the packed carrier_filings store has them.
ORDER BY i.effective_date DESC, i.docket_number, i.ins_type_code, i.ins_class_code, i.max_cov_amount_k, i.underl_lim_amount_k, i.policy_no,
         i.ins_form_code, i.name_company;
