-- The account owning a custody document: the account that paid for the vetting it was opened with.
-- Params: $id document id. Result: account_id (no row when the document has no vetting).
SELECT v.account_id FROM care_documents d JOIN vetting_records v ON v.vetting_id = d.vetting_id WHERE d.document_id = $id
