-- Packed store registry_tickers (issue 22): per ticker key (textKey(ticker) of lib/warehouse/packed-store.ts: the
-- first 28 bits of its MD5; several tickers may share one key, the reader picks its own), the CIK each company_lookup
-- ticker resolves to, as {rows: [{ticker, cik}]}: service/company resolves a ticker here, then reads the CIK's
-- registry_identity record (find-company.sql's `l.ticker = $ticker`; tickers are unique in company_lookup).
-- Only the keys of temp table _pack_keys(k) (a batch: registry-packed.ts). Columns: k (ticker key), v (JSON text).
SELECT ('0x' || left(md5(ticker), 7))::INTEGER AS k,
       to_json(struct_pack(rows := list(struct_pack(ticker := ticker, cik := cik) ORDER BY ticker, cik)))::VARCHAR AS v
FROM company_lookup
WHERE ('0x' || left(md5(ticker), 7))::INTEGER IN (SELECT k FROM _pack_keys)
GROUP BY 1
