-- Carrier identity by DOT, census columns only (the risk columns come from the packed store).
-- Params: $dot INTEGER. One row or none.
SELECT c.* EXCLUDE (source_file, content_sha256)
FROM carriers c
WHERE c.dot_number = $dot;
