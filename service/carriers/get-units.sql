-- Inspected units (VINs) of a carrier's newest inspections. Params: $dot INTEGER, $limit (inspections), $offset (inspections skipped: cursor pages).
WITH i AS (SELECT inspection_id, insp_date FROM inspections WHERE dot_number = $dot ORDER BY insp_date DESC, inspection_id LIMIT $limit OFFSET $offset)
SELECT u.* EXCLUDE (source_file), i.insp_date FROM inspection_units u JOIN i USING (inspection_id)
ORDER BY i.insp_date DESC, u.inspection_id, u.insp_unit_number;
