/**
 * /mcp with the official MCP SDK client, in process (fetch = app.fetch, no
 * port), over the real fmcsa pipeline output: the 12 freight tools with the
 * specification's names and parameters (../shared/spec/001_…, MCP table),
 * structuredContent checked against each published outputSchema, tool errors
 * for bad and unknown arguments, and the transport rules the SDK leaves to us.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildWorld, type World } from '../vetting/fmcsa-world.ts';
import { connectClient, schemaProblems, type ToolResult } from './mcp-helpers.ts';

let w: World;
let client: Client;
let dots: number[];
let vin: string;

const EXPECTED_TOOLS = [
  'freight_attestation',
  'freight_carrier_lookup',
  'freight_carrier_safety',
  'freight_carrier_vet',
  'freight_compare_carriers',
  'freight_crash_by_vin',
  'freight_crash_history',
  'freight_enforcement_history',
  'freight_inspection_history',
  'freight_red_flag_search',
  'freight_status',
  'freight_vetting_history',
];

/** The MCP table of the vetting specification: tool → parameters. */
const SPEC_PARAMETERS: Record<string, string[]> = {
  freight_carrier_lookup: ['dot_number', 'mc_number', 'name'],
  freight_carrier_safety: ['dot_number'],
  freight_carrier_vet: ['dot_number', 'broker_id'],
  freight_crash_history: ['dot_number', 'limit'],
  freight_inspection_history: ['dot_number', 'limit'],
  freight_enforcement_history: ['dot_number'],
  freight_vetting_history: ['dot_number', 'vetting_id'],
  freight_compare_carriers: ['dot_numbers'],
  freight_red_flag_search: ['state', 'min_risk', 'safety_rating'],
  freight_crash_by_vin: ['vin'],
  freight_status: [],
  freight_attestation: [],
};
const outputSchemas = new Map<string, Record<string, unknown>>();

beforeAll(async () => {
  w = await buildWorld(
    {},
    {
      options: {
        publicBaseUrl: 'http://proofline.test',
        snapshotStaleHours: 48,
        version: '0.0.0-test',
        dataDir: '',
        mcpAllowedOrigins: ['https://app.example'],
      },
    },
  );
  w.svc.deps.options.dataDir = w.config.dataDir;
  const rows = await w.svc.deps.readers.fmcsa!.query(
    'SELECT c.dot_number FROM carriers c WHERE EXISTS (SELECT 1 FROM crashes x WHERE x.dot_number = c.dot_number) ORDER BY c.dot_number LIMIT 3',
  );
  dots = rows.map((r) => Number(r.dot_number));
  vin = String(
    (await w.svc.deps.readers.fmcsa!.query('SELECT vin FROM crashes WHERE vin IS NOT NULL AND length(vin) = 17 ORDER BY vin LIMIT 1'))[0]!
      .vin,
  );
  client = await connectClient(w.svc.app);
  for (const t of (await client.listTools()).tools) outputSchemas.set(t.name, t.outputSchema as Record<string, unknown>);
}, 120_000);
afterAll(async () => {
  await client?.close();
  await w?.close();
});

/** Calls a tool; a success must match its published outputSchema (JSON Schema check) and repeat as text. */
async function call(name: string, args: Record<string, unknown> = {}): Promise<ToolResult> {
  const r = (await client.callTool({ name, arguments: args })) as ToolResult;
  if (!r.isError) {
    expect(schemaProblems(outputSchemas.get(name)!, r.structuredContent), name).toEqual([]);
    expect(JSON.parse(r.content[0]!.text!)).toEqual(r.structuredContent);
  }
  return r;
}

describe('MCP tools', () => {
  it('lists the 12 freight tools with the specification parameters, every one described', async () => {
    const { tools } = await client.listTools();
    const freight = tools.filter((t) => t.name.startsWith('freight_'));
    expect(freight.map((t) => t.name).sort()).toEqual(EXPECTED_TOOLS);
    for (const t of freight) {
      expect(t.inputSchema.type).toBe('object');
      expect(t.outputSchema?.type).toBe('object');
      expect(t.description!.length).toBeGreaterThan(20);
      const props = (t.inputSchema.properties ?? {}) as Record<string, { description?: string }>;
      for (const p of SPEC_PARAMETERS[t.name]!) expect(Object.keys(props), `${t.name}.${p}`).toContain(p);
      for (const [p, s] of Object.entries(props)) expect(s.description, `${t.name}.${p} has a description`).toBeTruthy();
      expect((t.inputSchema as { additionalProperties?: unknown }).additionalProperties, t.name).toBe(false);
    }
  });

  it('annotates readers read-only and the vetting tool as a non-destructive, credit-spending write', async () => {
    const { tools } = await client.listTools();
    for (const t of tools.filter((x) => x.name !== 'freight_carrier_vet')) expect(t.annotations?.readOnlyHint, t.name).toBe(true);
    const vet = tools.find((t) => t.name === 'freight_carrier_vet')!;
    expect(vet.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: false, idempotentHint: false });
    expect(vet.description).toMatch(/1 credit/);
    const flags = tools.find((t) => t.name === 'freight_red_flag_search')!;
    const code = (flags.inputSchema.properties as Record<string, { enum?: string[] }>).code!;
    expect(code.enum).toContain('OOS_ORDER_ACTIVE');
  });

  it('looks up carriers, safety, crashes, inspections, enforcement and crashes by VIN', async () => {
    const lookup = await call('freight_carrier_lookup', { dot_number: dots[0] });
    expect(lookup.isError).toBeFalsy();
    expect(lookup.structuredContent!.results[0].dot_number).toBe(dots[0]);
    expect(JSON.parse(lookup.content[0]!.text!)).toEqual(lookup.structuredContent);
    const byState = await call('freight_carrier_lookup', { state: 'TX', limit: 3 });
    expect(byState.structuredContent!.results.length).toBeLessThanOrEqual(3);
    for (const name of ['freight_carrier_safety', 'freight_crash_history', 'freight_inspection_history', 'freight_enforcement_history']) {
      const r = await call(name, { dot_number: String(dots[0]) });
      expect(r.isError, `${name}: ${r.content[0]?.text}`).toBeFalsy();
      expect(JSON.stringify(r.structuredContent)).toContain(String(dots[0]));
    }
    const crashes = await call('freight_crash_history', { dot_number: dots[0] });
    expect(crashes.structuredContent!.total_crashes).toBeGreaterThan(0);
    const one = await call('freight_crash_history', { dot_number: dots[0], limit: 1 });
    expect(one.structuredContent).toMatchObject({ total_crashes: crashes.structuredContent!.total_crashes, returned_crashes: 1 });
    expect(new Set(one.structuredContent!.vehicles.map((v: { crash_id: unknown }) => String(v.crash_id))).size).toBe(1);
    const insp = await call('freight_inspection_history', { dot_number: dots[0], limit: 1 });
    expect(insp.structuredContent!.inspections.length).toBeLessThanOrEqual(1);
    const byVin = await call('freight_crash_by_vin', { vin });
    expect(byVin.isError).toBeFalsy();
    expect(JSON.stringify(byVin.structuredContent)).toContain(vin);
  });

  it('vets a carrier (one credit), then finds the record in the vetting history', async () => {
    const v = await call('freight_carrier_vet', { dot_number: dots[1], broker_id: 'mcp-broker' });
    expect(v.isError, v.content[0]?.text).toBeFalsy();
    expect(v.structuredContent).toMatchObject({
      dot_number: dots[1],
      snapshot_available: true,
      credits: { account_id: 'broker:mcp-broker', balance: 29 },
    });
    const h = await call('freight_vetting_history', { dot_number: dots[1] });
    expect(h.structuredContent!.records.map((r: { vetting_id: string }) => r.vetting_id)).toContain(v.structuredContent!.vetting_id);
    const one = await call('freight_vetting_history', { vetting_id: v.structuredContent!.vetting_id });
    expect(one.structuredContent!.records[0].snapshot_json).toContain('"schema":"proofline/vetting-snapshot@1"');
  });

  it('compares carriers, searches red flags, reports status and attestation', async () => {
    const cmp = await call('freight_compare_carriers', { dot_numbers: dots });
    expect(cmp.structuredContent!.count).toBe(3);
    const scores = cmp.structuredContent!.carriers.map((c: { risk_score: number }) => c.risk_score);
    expect(scores).toEqual([...scores].sort((a, b) => a - b));
    const flags = await call('freight_red_flag_search', { limit: 5 });
    expect(flags.isError, flags.content[0]?.text).toBeFalsy();
    expect(Array.isArray(flags.structuredContent!.results)).toBe(true);
    // min_risk (a score or a level) and safety_rating filter, never silently ignored.
    const high = await call('freight_red_flag_search', { min_risk: 'HIGH', limit: 50 });
    for (const r of high.structuredContent!.results) expect(r.risk_score).toBeGreaterThanOrEqual(35);
    const byScore = await call('freight_red_flag_search', { min_risk: 60 });
    expect(byScore.structuredContent!.total).toBeLessThanOrEqual(high.structuredContent!.total);
    const rated = await call('freight_red_flag_search', { safety_rating: 'C', limit: 50 });
    for (const r of rated.structuredContent!.results) expect(r.safety_rating).toBe('C');
    const status = await call('freight_status');
    expect(status.structuredContent).toMatchObject({ status: 'ok' });
    expect(status.structuredContent!.tables.some((t: { table: string }) => t.table === 'carriers')).toBe(true);
    const att = await call('freight_attestation');
    expect(att.structuredContent!.root_hash).toMatch(/^[a-f0-9]{64}$/);
    expect(att.structuredContent!.signature.alg).toBe('Ed25519');
  });

  it('answers bad arguments with a readable tool error', async () => {
    const r = await call('freight_carrier_safety', { dot_number: 'twelve' });
    expect(r.isError).toBe(true);
    expect(r.content[0]!.text).toMatch(/invalid arguments for freight_carrier_safety: dot_number/);
    const none = await call('freight_carrier_lookup', {});
    expect(none.isError).toBe(true);
    expect(none.content[0]!.text).toMatch(/give dot_number, mc_number or name/);
    // Unknown arguments (the old names too) are tool errors, never silently ignored.
    const old = await call('freight_carrier_safety', { dot: dots[0] });
    expect(old.isError).toBe(true);
    expect(old.content[0]!.text).toMatch(/unknown argument\(s\) dot/);
    const extra = await call('freight_red_flag_search', { state: 'TX', rating: 'U' });
    expect(extra.isError).toBe(true);
    // broker_id is optional, but someone must pay: without it and without an API key, a tool error names it.
    const noPayer = await call('freight_carrier_vet', { dot_number: dots[2] });
    expect(noPayer.isError).toBe(true);
    expect(noPayer.content[0]!.text).toMatch(/broker_id/);
    const missing = await call('freight_carrier_safety', { dot_number: 99_999_990 });
    expect(missing.isError).toBe(true);
    expect(missing.content[0]!.text).toMatch(/freight_carrier_safety failed/);
    await expect(client.callTool({ name: 'freight_nope', arguments: {} })).rejects.toThrow(/unknown tool/);
  });
});

describe('MCP transport rules', () => {
  const rpc = (init: RequestInit) => w.svc.app.fetch(new Request('http://proofline.test/mcp', init));
  const json = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

  it('answers GET and DELETE with 405 and Allow: POST', async () => {
    for (const method of ['GET', 'DELETE']) {
      const r = await rpc({ method });
      expect(r.status).toBe(405);
      expect(r.headers.get('allow')).toBe('POST');
    }
  });

  it('forbids a disallowed Origin and admits an allow-listed one', async () => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });
    const bad = await rpc({
      method: 'POST',
      headers: { ...json, origin: 'http://evil.example', 'mcp-protocol-version': '2025-11-25' },
      body,
    });
    expect(bad.status).toBe(403);
    const ok = await rpc({
      method: 'POST',
      headers: { ...json, origin: 'https://app.example', 'mcp-protocol-version': '2025-11-25' },
      body,
    });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('access-control-allow-origin')).toBe('https://app.example');
  });

  it('rejects batches and malformed JSON', async () => {
    const batch = await rpc({ method: 'POST', headers: json, body: JSON.stringify([{ jsonrpc: '2.0', id: 1, method: 'tools/list' }]) });
    expect(batch.status).toBe(400);
    expect(((await batch.json()) as { error: { code: number } }).error.code).toBe(-32600);
    const bad = await rpc({ method: 'POST', headers: json, body: '{nope' });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { code: number } }).error.code).toBe(-32700);
  });
});
