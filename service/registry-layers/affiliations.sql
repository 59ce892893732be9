-- Other companies where the people of one company hold roles (board seats, offices), for the profile.
-- Params: $cik INTEGER. Columns: person_name, company_name, ticker, cik, role, role_type, last_seen.
-- Ordered by every column (ties broken, so the 50 kept are always the same ones; the packed store
-- registry_profile keeps the same 50 in the same order: jobs/registry/packed-profile.sql).
SELECT DISTINCT other.person_name, other.company_name, other.ticker, other.cik, other.role, other.role_type, other.last_seen
FROM people mine JOIN people other ON other.person_key = mine.person_key AND other.cik <> mine.cik
WHERE mine.cik = $cik
ORDER BY other.person_name, other.company_name, other.ticker, other.cik, other.role, other.role_type, other.last_seen
LIMIT 50
