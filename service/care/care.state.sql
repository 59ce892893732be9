-- State statements of the proof-of-care family, portable to the embedded DuckDB store and PostgreSQL:
-- positional parameters, shared types. Loaded by name (loadStatements). Custody events are append-only.
-- name: vetting_hash
-- $1 vetting_id → data_hash
SELECT data_hash FROM vetting_records WHERE vetting_id = $1
-- name: head
-- $1 document_id → event_count, head_hash, vetting_id (read after tx.lock('care:<id>'))
SELECT event_count, head_hash, vetting_id FROM care_documents WHERE document_id = $1
-- name: stages
-- $1 document_id → each stage recorded on the document, once, in first-seen order (the stage rules ask only which
-- stages exist: at most six rows whatever the chain's length, instead of one per event)
SELECT stage FROM care_events WHERE document_id = $1 GROUP BY stage ORDER BY min(seq)
-- name: document
-- $1 document_id → the document row
SELECT * FROM care_documents WHERE document_id = $1
-- name: events
-- $1 document_id → its events in chain order
SELECT * FROM care_events WHERE document_id = $1 ORDER BY seq
-- name: recent_documents
-- $1 limit, $2/$3 the cursor's (created_at, document_id) or NULL → documents, newest first, keyset-paged
-- (documents created meanwhile never shift a page)
SELECT * FROM care_documents
WHERE ($2::VARCHAR IS NULL OR created_at < $2::VARCHAR OR (created_at = $2::VARCHAR AND document_id < $3::VARCHAR))
ORDER BY created_at DESC, document_id DESC LIMIT $1
