-- Carrier name index, the split (issue 22 item 4: every name is split once, for the terms, the pairs and the digit
-- runs alike). One row per lower-cased legal or DBA name of a carrier, as the temp table carrier_name_split:
--  - name_lc: the name as lower() gives it, the same lower() the search's contains() applies
--    (service/carriers/search-carriers*.sql);
--  - parts: its maximal runs of [a-z0-9], as string_split_regex gives them: the first is '' when the name starts with
--    a separator, the last '' when it ends with one;
--  - seps: its separator runs ([^a-z0-9]+) in order, one fewer than parts, so part i is followed by seps[i], then by
--    part i + 1.
-- Read by derive-carrier-name-terms.sql (the postings) and jobs/fmcsa/carrier-name-sets.ts (the pairs' postings and
-- the digit runs), then dropped (jobs/fmcsa/carrier-name-index.ts).
CREATE OR REPLACE TEMP TABLE carrier_name_split AS
WITH named AS (
  SELECT dot_number, power_units, phy_state, lower(legal_name) AS name_lc FROM carriers WHERE legal_name IS NOT NULL
  UNION ALL
  SELECT dot_number, power_units, phy_state, lower(dba_name) FROM carriers WHERE dba_name IS NOT NULL
)
SELECT dot_number, power_units, phy_state, name_lc, string_split_regex(name_lc, '[^a-z0-9]+') AS parts,
  regexp_extract_all(name_lc, '[^a-z0-9]+') AS seps
FROM named
