/**
 * Raw EDGAR shapes (validated at the boundary, unknown fields tolerated) and
 * the typed rows the registry tables hold. Rows are snake_case and pass
 * through to the warehouse and JSON responses unchanged.
 */
import { z } from 'zod';

/** `company_tickers_exchange.json`: `{fields: [...], data: [[cik, name, ticker, exchange], ...]}`. */
export const tickersExchangeFileSchema = z.object({
  fields: z.array(z.string()),
  data: z.array(z.array(z.union([z.string(), z.number(), z.null()]))),
});

/** `company_tickers.json`: `{"0": {cik_str, ticker, title}, ...}`. */
export const tickersFileSchema = z.record(
  z.string(),
  z.object({ cik_str: z.union([z.number(), z.string()]), ticker: z.string(), title: z.string() }).loose(),
);

export interface TickerRow {
  cik: number;
  cik_padded: string;
  ticker: string;
  name: string;
  exchange: string | null;
  /** Position in the file: the first ticker of a CIK is its primary listing. */
  rank: number;
}

const addressSchema = z
  .object({
    street1: z.string().nullish(),
    street2: z.string().nullish(),
    city: z.string().nullish(),
    stateOrCountry: z.string().nullish(),
    zipCode: z.string().nullish(),
    stateOrCountryDescription: z.string().nullish(),
    isForeignLocation: z.union([z.number(), z.boolean()]).nullish(),
    country: z.string().nullish(),
    countryCode: z.string().nullish(),
  })
  .loose();

/** Parallel column arrays of `filings.recent` and of the bare overflow pages. */
export const filingColumnsSchema = z
  .object({
    accessionNumber: z.array(z.string()),
    filingDate: z.array(z.string()),
    reportDate: z.array(z.string().nullable()).optional(),
    acceptanceDateTime: z.array(z.string().nullable()).optional(),
    act: z.array(z.string().nullable()).optional(),
    form: z.array(z.string()),
    fileNumber: z.array(z.string().nullable()).optional(),
    filmNumber: z.array(z.string().nullable()).optional(),
    items: z.array(z.string().nullable()).optional(),
    size: z.array(z.number().nullable()).optional(),
    isXBRL: z.array(z.union([z.number(), z.boolean()]).nullable()).optional(),
    isInlineXBRL: z.array(z.union([z.number(), z.boolean()]).nullable()).optional(),
    primaryDocument: z.array(z.string().nullable()).optional(),
    primaryDocDescription: z.array(z.string().nullable()).optional(),
  })
  .loose();

export const submissionsFileSchema = z
  .object({
    cik: z.union([z.string(), z.number()]),
    entityType: z.string().nullish(),
    sic: z.string().nullish(),
    sicDescription: z.string().nullish(),
    ownerOrg: z.string().nullish(),
    name: z.string(),
    tickers: z.array(z.string()).default([]),
    exchanges: z.array(z.string().nullable()).default([]),
    ein: z.string().nullish(),
    lei: z.string().nullish(),
    description: z.string().nullish(),
    website: z.string().nullish(),
    investorWebsite: z.string().nullish(),
    category: z.string().nullish(),
    fiscalYearEnd: z.string().nullish(),
    stateOfIncorporation: z.string().nullish(),
    stateOfIncorporationDescription: z.string().nullish(),
    addresses: z.object({ mailing: addressSchema.nullish(), business: addressSchema.nullish() }).loose().nullish(),
    phone: z.string().nullish(),
    flags: z.string().nullish(),
    formerNames: z.array(z.object({ name: z.string(), from: z.string().nullish(), to: z.string().nullish() }).loose()).default([]),
    filings: z
      .object({
        recent: filingColumnsSchema,
        files: z
          .array(
            z
              .object({
                name: z.string(),
                filingCount: z.number().optional(),
                filingFrom: z.string().optional(),
                filingTo: z.string().optional(),
              })
              .loose(),
          )
          .default([]),
      })
      .loose(),
  })
  .loose();

export interface Address {
  street1: string | null;
  street2: string | null;
  city: string | null;
  state_or_country: string | null;
  zip_code: string | null;
  country: string | null;
}

export interface CompanyRow {
  cik: number;
  cik_padded: string;
  name: string;
  entity_type: string | null;
  sic: string | null;
  sic_description: string | null;
  owner_org: string | null;
  category: string | null;
  fiscal_year_end: string | null;
  state_of_incorporation: string | null;
  state_of_incorporation_description: string | null;
  ein: string | null;
  lei: string | null;
  phone: string | null;
  website: string | null;
  investor_website: string | null;
  description: string | null;
  tickers: string[];
  exchanges: (string | null)[];
  business_address: Address | null;
  mailing_address: Address | null;
  former_names: Array<{ name: string; from: string | null; to: string | null }>;
  /** Overflow pages named in `filings.files` (fetched separately). */
  filing_pages: string[];
}

export interface FilingRow {
  cik: number;
  accession: string;
  form: string;
  filing_date: string;
  report_date: string | null;
  acceptance_datetime: string | null;
  act: string | null;
  file_number: string | null;
  film_number: string | null;
  items: string[];
  size: number | null;
  is_xbrl: boolean;
  is_inline_xbrl: boolean;
  primary_document: string | null;
  primary_doc_description: string | null;
}
