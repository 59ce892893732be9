/**
 * Contract tables of the carrier vetting and proof-of-care specification
 * (`../shared/spec/001_2c993ec8aa6fda8f.txt`), transcribed from its tables: one
 * row per field the specification names, with its type. Fields whose shape the
 * specification leaves "not shown" are not listed (the endpoints are still
 * called and must answer JSON; see spec-001.test.ts).
 */
import type { ContractField, ContractTable } from './shape.ts';

const SPEC = '001_2c993ec8aa6fda8f.txt';

/** The seven BASIC categories, snake_case (the specification names `unsafe_driving` and `crash_indicator`). */
export const BASIC_CATEGORIES = [
  'unsafe_driving',
  'hours_of_service_compliance',
  'driver_fitness',
  'controlled_substances_alcohol',
  'vehicle_maintenance',
  'hazardous_materials_compliance',
  'crash_indicator',
] as const;

const vettingRecordFields: ContractField[] = [
  { path: 'vetting_id', type: 'string', required: true },
  { path: 'dot_number', type: 'integer', required: true },
  { path: 'carrier', type: 'string', required: true },
  { path: 'risk_score', type: 'integer', required: true },
  { path: 'risk_level', type: 'string', required: true },
  { path: 'recommendation', type: 'string', required: true },
  { path: 'red_flags', type: 'array', required: true },
  { path: 'red_flags[]', type: 'string', required: false },
  { path: 'data_hash', type: 'string', required: true },
  { path: 'vetting_date', type: 'datetime', required: true },
  { path: 'basics', type: 'object', required: true },
  // "Numeric BASIC scores keyed by category": a category without a published score is absent, never null.
  ...BASIC_CATEGORIES.map((c): ContractField => ({ path: `basics.${c}`, type: 'number', required: false })),
  { path: 'snapshot_available', type: 'boolean', required: true },
];

/** "Vetting record": the answer of POST /api/vet, each history record and each batch record. */
export const vettingRecord: ContractTable = { spec: `${SPEC}: Vetting record`, fields: vettingRecordFields };

/** "A record retrieved by id also includes `snapshot_json`" (GET /api/vetting?id=). */
export const vettingRecordById: ContractTable = {
  spec: `${SPEC}: Vetting record (retrieved by id)`,
  fields: [...vettingRecordFields, { path: 'snapshot_json', type: 'string', required: true }],
};

/** "Care document creation request": the response carries `document_id` (prefix `POGC-`). */
export const careCreated: ContractTable = {
  spec: `${SPEC}: Care document creation`,
  fields: [{ path: 'document_id', type: 'string', required: true }],
};

/** "Care verification result" (GET /api/care/{id}/verify). */
export const careVerification: ContractTable = {
  spec: `${SPEC}: Care verification result`,
  fields: [
    { path: 'valid', type: 'boolean', required: true },
    { path: 'events_verified', type: 'integer', required: true },
    { path: 'problems', type: 'array', required: true },
  ],
};

/** "Limits": the plans with their prices (GET /api/plans; the specification names the plans, prices, credits and batch sizes). */
export const plans: ContractTable = {
  spec: `${SPEC}: Limits`,
  fields: [
    { path: 'plans', type: 'array', required: true },
    { path: 'plans[].plan', type: 'string', required: true },
    { path: 'plans[].price', type: 'string', required: true },
    { path: 'plans[].lookups', type: 'string', required: true },
    { path: 'plans[].vettings', type: 'string', required: true },
    { path: 'plans[].batch_limit', type: 'integer', required: true, nullable: true },
  ],
};

/** Prefixes every path of `table` (a record nested in another answer, e.g. `records[].`). */
export function nested(table: ContractTable, prefix: string, spec = table.spec): ContractTable {
  return { spec, fields: table.fields.map((f) => ({ ...f, path: `${prefix}${f.path}` })) };
}
