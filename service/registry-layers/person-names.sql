-- Every person's comparison names (as find-person.sql compares them: lower case, no punctuation, single spaces),
-- for the in-memory name scan of getPerson (built once per snapshot), with the id of the person's registry_person
-- record (jobs/registry/packed-person.sql). Params: none. Columns: person_key, pid, name_key.
SELECT DISTINCT person_key, (hash(person_key) % 2147483647)::INTEGER AS pid, trim(regexp_replace(regexp_replace(lower(person_name), '[^\p{L}\p{N}\- ]', '', 'g'), '\s+', ' ', 'g')) AS name_key
FROM people
WHERE person_key IS NOT NULL
