-- Derives the registry layers at publish, before company_lookup (after derive-link-documents.sql).
-- Params: none. Reads filings, documents, doc_events, people_roles, profile_facts, signals, index_entries and the
-- temporary table eight_k_item_map(item_code, item, title, event_type). Writes timeline, earnings_calendar, filing_index.
-- On a delta publish the tables it reads are temp views restricted to the changed companies (deriveRegistryDelta).

-- 1. Timeline: every 8-K item except 9.01 (exhibits), from the documents (with summaries) and the filing index.
DELETE FROM timeline;
INSERT INTO timeline
WITH doc AS (
  -- Prefer the primary document (.htm) over the complete .txt submission when both were read.
  -- Every pick is ordered by one key that ends in the document's name and content hash, so ties break the same way in
  -- every run (an incremental snapshot equals a full one; issue 18).
  SELECT e.cik, e.accession, arg_min(e.form, k) AS form, e.item, arg_min(e.event_type, k) AS event_type, arg_min(e.title, k) AS title,
         arg_min(e.summary, k) AS summary, arg_min(e.event_date, k) AS event_date, arg_min(e.filing_date, k) AS filing_date,
         arg_min(d.source_url, k) AS source_url, arg_min(e.origin_leaf_hash, k) AS origin_leaf_hash
  FROM doc_events e LEFT JOIN documents d ON d.content_sha256 = e.content_sha256,
       LATERAL (SELECT (d.document LIKE '%.txt', d.document, e.content_sha256) AS k)
  WHERE e.cik IS NOT NULL AND e.accession IS NOT NULL
  GROUP BY e.cik, e.accession, e.item
),
idx AS (
  SELECT f.cik, f.accession, f.form, coalesce(m.item, trim(u.it)) AS item, m.title, m.event_type,
         f.report_date AS event_date, f.filing_date, f.primary_document, f.origin_leaf_hash
  FROM filings f, unnest(f.items) AS u(it)
  LEFT JOIN eight_k_item_map m ON m.item_code = trim(u.it)
  WHERE f.form LIKE '8-K%'
)
SELECT coalesce(d.cik, i.cik), coalesce(d.accession, i.accession), coalesce(d.form, i.form), coalesce(d.item, i.item),
       coalesce(d.event_type, i.event_type, 'other_event'), coalesce(d.title, i.title, 'Item ' || coalesce(d.item, i.item)),
       d.summary, coalesce(i.event_date, d.event_date), coalesce(i.filing_date, d.filing_date),
       CASE WHEN i.primary_document IS NOT NULL
            THEN 'https://www.sec.gov/Archives/edgar/data/' || i.cik || '/' || replace(i.accession, '-', '') || '/' || i.primary_document
            ELSE d.source_url END,
       CASE WHEN d.cik IS NOT NULL THEN 'document' ELSE 'filing_index' END,
       coalesce(d.origin_leaf_hash, i.origin_leaf_hash)
FROM doc d FULL OUTER JOIN idx i ON d.cik = i.cik AND d.accession = i.accession AND d.item = i.item
WHERE coalesce(d.item, i.item) <> '9.01';

-- 2. Earnings calendar: confirmed dates from 8-K item 2.02.
--    Acceptance time in Eastern time: the SGML header when a complete submission or wrapper was read (authoritative);
--    else the submissions `acceptanceDateTime`, whose `Z` label is true UTC for some recordings and Eastern wall-clock
--    for others. A label is provably UTC when its time is before 06:00 or from 22:00 (EDGAR accepts 06:00-22:00 ET), or
--    from 17:30 on the same date as filingDate (an Eastern 17:30+ acceptance is filed the next business day); it is
--    provably Eastern when from 17:30 with a later filingDate. Otherwise the company's provable labels decide by majority,
--    and with none the label is read as Eastern (the newest recordings).
--    `timing_established` says how the timing is known (issue 26; NVIDIA's 2026-02-25 16:31Z label is Eastern, while
--    its other labels are UTC, so a majority is a guess): `sgml_header`; `acceptance_utc_proven` /
--    `acceptance_eastern_proven` (the label is proven by the rules above); `both_readings_agree` (unproven label, but
--    read as UTC and as Eastern it gives the same BMO/AMC/DMH); `uncertain` (the two readings disagree: `timing` is the
--    majority guess and must not be taken as known); `history` for predicted rows.
DELETE FROM earnings_calendar;
INSERT INTO earnings_calendar
WITH lab AS (
  SELECT f.cik, f.accession, f.form, f.filing_date, f.primary_document, f.origin_leaf_hash, f.items,
         CAST(substr(f.acceptance_datetime, 1, 19) AS TIMESTAMP) AS label_ts
  FROM filings f WHERE f.acceptance_datetime IS NOT NULL AND length(f.acceptance_datetime) >= 19
),
proof AS (
  SELECT *,
    CASE
      WHEN form IN ('3', '4', '5', '3/A', '4/A', '5/A') THEN NULL
      WHEN strftime(label_ts, '%H:%M') < '06:00' OR strftime(label_ts, '%H:%M') >= '22:00' THEN 'utc'
      WHEN strftime(label_ts, '%H:%M') >= '17:30' AND CAST(label_ts AS DATE) = filing_date THEN 'utc'
      WHEN strftime(label_ts, '%H:%M') >= '17:30' AND CAST(label_ts AS DATE) < filing_date THEN 'et'
    END AS proven
  FROM lab
),
company_mode AS (
  SELECT cik, CASE WHEN count(*) FILTER (WHERE proven = 'utc') > count(*) FILTER (WHERE proven = 'et') THEN 'utc' ELSE 'et' END AS mode
  FROM proof GROUP BY cik
),
readings AS (
  SELECT p.*, m.mode, timezone('America/New_York', timezone('UTC', p.label_ts)) AS et_if_utc, p.label_ts AS et_if_et
  FROM proof p JOIN company_mode m USING (cik)
  WHERE p.form LIKE '8-K%' AND list_contains(p.items, '2.02')
),
json_et AS (
  SELECT cik, accession, filing_date, primary_document, origin_leaf_hash,
         coalesce(proven, mode) AS label_mode,
         CASE WHEN coalesce(proven, mode) = 'utc' THEN et_if_utc ELSE et_if_et END AS et_ts,
         CASE WHEN proven = 'utc' THEN 'acceptance_utc_proven'
              WHEN proven = 'et' THEN 'acceptance_eastern_proven'
              WHEN (CASE WHEN strftime(et_if_utc, '%H:%M') < '09:30' THEN 'BMO' WHEN strftime(et_if_utc, '%H:%M') >= '16:00' THEN 'AMC' ELSE 'DMH' END)
                 = (CASE WHEN strftime(et_if_et, '%H:%M') < '09:30' THEN 'BMO' WHEN strftime(et_if_et, '%H:%M') >= '16:00' THEN 'AMC' ELSE 'DMH' END)
                THEN 'both_readings_agree'
              ELSE 'uncertain' END AS established
  FROM readings
),
doc AS (
  -- The document that carries the acceptance time first, then by content hash: the same pick in every run.
  SELECT cik, accession, arg_min(event_date, k) AS event_date, arg_min(filing_date, k) AS filing_date,
         arg_min(CAST(acceptance_et AS TIMESTAMP), k) AS et_ts, arg_min(origin_leaf_hash, k) AS origin_leaf_hash
  FROM doc_events, LATERAL (SELECT (acceptance_et IS NULL, content_sha256) AS k) WHERE item = '2.02' AND cik IS NOT NULL
  GROUP BY cik, accession
),
conf AS (
  SELECT coalesce(d.cik, j.cik) AS cik, coalesce(d.accession, j.accession) AS accession,
         coalesce(d.et_ts, j.et_ts) AS et_ts,
         CASE WHEN d.et_ts IS NOT NULL THEN 'sgml_header'
              WHEN j.et_ts IS NOT NULL THEN CASE j.label_mode WHEN 'utc' THEN 'acceptance_utc' ELSE 'acceptance_et_labelled_z' END END AS timing_basis,
         CASE WHEN d.et_ts IS NOT NULL AND j.et_ts IS NOT NULL THEN CASE WHEN abs(epoch(d.et_ts) - epoch(j.et_ts)) < 120 THEN 'agrees' ELSE 'disagrees' END END AS acceptance_check,
         CASE WHEN d.et_ts IS NOT NULL THEN 'sgml_header' WHEN j.et_ts IS NOT NULL THEN j.established ELSE 'unknown' END AS timing_established,
         coalesce(CAST(coalesce(d.et_ts, j.et_ts) AS DATE), j.filing_date, d.filing_date, d.event_date) AS event_date,
         j.primary_document, coalesce(d.origin_leaf_hash, j.origin_leaf_hash) AS origin_leaf_hash
  FROM doc d FULL OUTER JOIN json_et j ON d.cik = j.cik AND d.accession = j.accession
)
SELECT cik, event_date, true,
       CASE WHEN et_ts IS NULL THEN 'unknown'
            WHEN strftime(et_ts, '%H:%M') < '09:30' THEN 'BMO'
            WHEN strftime(et_ts, '%H:%M') >= '16:00' THEN 'AMC'
            ELSE 'DMH' END,
       strftime(et_ts, '%Y-%m-%dT%H:%M:%S'), timing_basis, acceptance_check, accession, 1.0,
       '8-K item 2.02 (results of operations) filed', 
       CASE WHEN primary_document IS NOT NULL THEN 'https://www.sec.gov/Archives/edgar/data/' || cik || '/' || replace(accession, '-', '') || '/' || primary_document END,
       origin_leaf_hash, timing_established
FROM conf WHERE event_date IS NOT NULL
QUALIFY row_number() OVER (PARTITION BY cik, event_date ORDER BY (et_ts IS NULL), accession) = 1;

-- Predicted: the next date from the company's own history. With a confirmed date about a year before the next
-- expected quarter, predicted = that date + 364 days (same weekday, seasonality kept); else last + the median gap
-- of the last four gaps when that gap is quarterly (70-110 days) or annual (330-400). Confidence falls with the
-- spread of past gaps; predicted rows always carry confirmed = false.
INSERT INTO earnings_calendar
WITH c AS (
  SELECT cik, event_date, timing, origin_leaf_hash, row_number() OVER (PARTITION BY cik ORDER BY event_date DESC) AS rn,
         event_date - lag(event_date) OVER (PARTITION BY cik ORDER BY event_date) AS gap
  FROM earnings_calendar WHERE confirmed
),
timing_mode AS (
  -- The most frequent timing; a tie goes to the timing of the latest date (mode() broke ties differently per run).
  SELECT cik, arg_max(timing, (k, latest)) AS timing
  FROM (SELECT cik, timing, count(*) AS k, max(event_date) AS latest FROM c WHERE timing IS NOT NULL GROUP BY cik, timing)
  GROUP BY cik
),
stats AS (
  SELECT cik, max(event_date) AS last_date, count(*) AS n,
         median(gap) FILTER (WHERE rn <= 4) AS med_gap, coalesce(stddev_samp(gap) FILTER (WHERE rn <= 4), 30) AS sd_gap,
         min(m.timing) AS timing, arg_max(origin_leaf_hash, event_date) AS last_leaf
  FROM c LEFT JOIN timing_mode m USING (cik) GROUP BY cik HAVING count(*) >= 2
),
nxt AS (
  SELECT s.*,
    CASE WHEN s.med_gap BETWEEN 70 AND 110 THEN s.last_date + CAST(round(s.med_gap) AS INTEGER)
         WHEN s.med_gap BETWEEN 330 AND 400 THEN s.last_date + CAST(round(s.med_gap) AS INTEGER) END AS naive
  FROM stats s
),
seasonal AS (
  SELECT n.cik, max(c.event_date) + 364 AS seasonal_date
  FROM nxt n JOIN c ON c.cik = n.cik AND c.event_date BETWEEN n.naive - 364 - 21 AND n.naive - 364 + 21
  GROUP BY n.cik
)
SELECT n.cik, coalesce(s.seasonal_date, n.naive), false, coalesce(n.timing, 'unknown'), NULL, 'history', NULL, NULL,
       round(greatest(0.3, least(0.9, (CASE WHEN s.seasonal_date IS NOT NULL THEN 0.75 ELSE 0.6 END) + 0.05 * least(n.n - 2, 4) - n.sd_gap / 100.0)), 2),
       CASE WHEN s.seasonal_date IS NOT NULL THEN 'one year after the matching confirmed date (' || n.n || ' confirmed dates)'
            ELSE 'last confirmed date + median gap of ' || CAST(round(n.med_gap) AS INTEGER) || ' days (' || n.n || ' confirmed dates)' END,
       NULL, n.last_leaf, 'history'
FROM nxt n LEFT JOIN seasonal s USING (cik)
WHERE n.naive IS NOT NULL AND coalesce(s.seasonal_date, n.naive) > n.last_date;

-- 3. Filing index with EDGAR URLs and extraction status.
DELETE FROM filing_index;
INSERT INTO filing_index
WITH doc AS (
  SELECT cik, accession,
         CASE WHEN bool_or(status = 'failed') THEN 'failed' WHEN bool_or(status = 'extracted') THEN 'extracted' ELSE 'skipped' END AS status,
         string_agg(DISTINCT reason, '; ' ORDER BY reason) AS reason, arg_min(form, k) AS form, arg_min(document, k) AS document,
         arg_min(filing_date, k) AS filing_date, arg_min(origin_leaf_hash, k) AS origin_leaf_hash
  FROM documents, LATERAL (SELECT (document LIKE '%.txt', document, content_sha256) AS k)
  WHERE cik IS NOT NULL AND accession IS NOT NULL GROUP BY cik, accession
),
idx AS (
  SELECT cik, accession, arg_min(form, k) AS form, min(date_filed) AS date_filed, arg_min(file_name, k) AS file_name,
         arg_min(origin_leaf_hash, k) AS origin_leaf_hash
  FROM index_entries, LATERAL (SELECT (date_filed, file_name, origin_leaf_hash) AS k) WHERE accession IS NOT NULL GROUP BY cik, accession
),
listed AS (
  SELECT f.cik, f.accession, f.form, f.filing_date, f.report_date, f.acceptance_datetime, f.items, f.primary_document, 'submissions' AS listed_in, f.origin_leaf_hash
  FROM filings f
  UNION ALL
  SELECT i.cik, i.accession, i.form, i.date_filed, NULL, NULL, NULL, NULL, 'index', i.origin_leaf_hash
  FROM idx i WHERE NOT EXISTS (SELECT 1 FROM filings f WHERE f.cik = i.cik AND f.accession = i.accession)
  UNION ALL
  SELECT d.cik, d.accession, coalesce(d.form, 'unknown'), d.filing_date, NULL, NULL, NULL, d.document, 'document', d.origin_leaf_hash
  FROM doc d WHERE d.filing_date IS NOT NULL
    AND NOT EXISTS (SELECT 1 FROM filings f WHERE f.cik = d.cik AND f.accession = d.accession)
    AND NOT EXISTS (SELECT 1 FROM idx i WHERE i.cik = d.cik AND i.accession = d.accession)
)
SELECT l.cik, l.accession, l.form, l.filing_date, l.report_date, l.acceptance_datetime, l.items, l.primary_document,
       CASE WHEN l.primary_document IS NOT NULL
            THEN 'https://www.sec.gov/Archives/edgar/data/' || l.cik || '/' || replace(l.accession, '-', '') || '/' || l.primary_document END,
       'https://www.sec.gov/Archives/edgar/data/' || l.cik || '/' || replace(l.accession, '-', '') || '/' || l.accession || '-index.html',
       coalesce(d.status, CASE WHEN regexp_matches(l.form, '^(8-K|10-K|3|4|5)(/A)?$|^10-K405$|^10-KT$') THEN 'pending' ELSE 'skipped' END),
       -- A filing with a parsed document keeps that document's reason (NULL when it was extracted cleanly); only a
       -- filing without one says "document not fetched yet", and it is then `pending`, never `extracted` (issue 19).
       CASE WHEN d.status IS NOT NULL THEN d.reason
            WHEN regexp_matches(l.form, '^(8-K|10-K|3|4|5)(/A)?$|^10-K405$|^10-KT$') THEN 'document not fetched yet'
            ELSE 'no extractor for form ' || l.form END,
       l.listed_in, l.origin_leaf_hash
FROM listed l LEFT JOIN doc d ON d.cik = l.cik AND d.accession = l.accession;
