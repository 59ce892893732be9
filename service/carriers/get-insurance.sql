-- L&I insurance filings of a carrier's dockets. Params: $dot INTEGER. Amounts in thousands of dollars.
SELECT i.* EXCLUDE (source_file)
FROM insurance i
WHERE i.docket_number IN (SELECT docket_number FROM authority WHERE dot_number = $dot
                          UNION SELECT unnest([docket1, docket2, docket3]) FROM carriers WHERE dot_number = $dot)
-- Ties on the date in a fixed order (every served column), as the packed carrier_filings store has them.
ORDER BY i.effective_date DESC, i.docket_number, i.ins_type_code, i.ins_class_code, i.max_cov_amount_k, i.underl_lim_amount_k, i.policy_no,
         i.ins_form_code, i.name_company;
