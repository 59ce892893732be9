-- Every person's comparison names (as find-person.sql compares them: lower case, no punctuation, single spaces),
-- for the in-memory name scan of getPerson (built once per snapshot). Params: none. Columns: person_key, name_key.
SELECT DISTINCT person_key, trim(regexp_replace(regexp_replace(lower(person_name), '[^\p{L}\p{N}\- ]', '', 'g'), '\s+', ' ', 'g')) AS name_key
FROM people
WHERE person_key IS NOT NULL
