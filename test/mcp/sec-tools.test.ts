/**
 * The registry over MCP (issue 23), through the official SDK client in process,
 * over the small deterministic sample (registry, quotes, transcripts):
 * every sec_* tool answers like its REST route, its structuredContent matches
 * its published outputSchema (JSON Schema check), every origin leaf in it
 * recomputes, and an agent can follow origin.parent with sec_verify and get
 * chained receipts. Also: the whole tools/list passes the Inspector's
 * --strict portability rules, every argument is described, resources and
 * prompts answer.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TOOLS } from '../../service/mcp/mcp.queries.ts';
import { getJson, type TestService } from '../helpers/app.ts';
import { buildRegistryWorld } from '../helpers/registry-world.ts';
import { removeDir } from '../helpers/env.ts';
import { REPO_ROOT } from '../helpers/shared.ts';
import { connectClient, leafRecomputes, leavesIn, lintTools, schemaProblems, type ToolResult } from './mcp-helpers.ts';

let root: string;
let svc: TestService;
let client: Client;
const outputSchemas = new Map<string, Record<string, unknown>>();
const called = new Set<string>();

beforeAll(async () => {
  ({ root, svc } = await buildRegistryWorld('proofline-mcp-sec-'));
  client = await connectClient(svc.app);
  for (const t of (await client.listTools()).tools) outputSchemas.set(t.name, t.outputSchema as Record<string, unknown>);
}, 600_000);
afterAll(async () => {
  await client?.close();
  await svc?.close();
  if (root) await removeDir(root);
});

/** Calls a tool that must succeed: structuredContent valid against the outputSchema, repeated as text, every origin leaf recomputing. */
async function call(name: string, args: Record<string, unknown> = {}): Promise<Record<string, any>> {
  const r = (await client.callTool({ name, arguments: args })) as ToolResult;
  expect(r.isError, `${name}: ${r.content[0]?.text}`).toBeFalsy();
  called.add(name);
  const sc = r.structuredContent!;
  expect(schemaProblems(outputSchemas.get(name)!, sc), name).toEqual([]);
  expect(JSON.parse(r.content[0]!.text!)).toEqual(sc);
  for (const leaf of leavesIn(sc)) expect(leafRecomputes(leaf), `${name}: leaf ${leaf.leaf_hash}`).toBe(true);
  return sc;
}
const rest = async (p: string) => (await getJson(svc.app, p)).body;
/** The REST body as MCP serves it: null fields omitted, except inside origin leaves and receipts. */
function withoutNulls(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(withoutNulls);
  if (!v || typeof v !== 'object') return v;
  const o = v as Record<string, unknown>;
  if ((typeof o.leaf_hash === 'string' && 'canon' in o) || 'signature' in o) return o;
  return Object.fromEntries(
    Object.entries(o)
      .filter(([k, x]) => x !== null && k !== 'usage_meta')
      .map(([k, x]) => [k, withoutNulls(x)]),
  );
}

describe('registry tools', () => {
  it('answers sec_company by ticker and by CIK with the REST identity card and its origin', async () => {
    const card = await call('sec_company', { ticker: 'AAPL' });
    expect(card.identity.ticker).toBe('AAPL');
    expect(card.origin.leaf_hash).toMatch(/^[a-f0-9]{64}$/);
    expect(card).toEqual(withoutNulls(await rest('/api/company/AAPL')));
    const byCik = await call('sec_company', { ticker: String(card.identity.cik) });
    expect(byCik.identity.ticker).toBe('AAPL');
    // optional fields are omitted, never null
    expect(JSON.stringify({ ...card, origin: undefined })).not.toContain('null');
  });

  it('serves the layers: profile, timeline, filings by form, earnings, people, person', async () => {
    const profile = await call('sec_profile', { ticker: 'AAPL' });
    expect(profile).toEqual(withoutNulls(await rest('/api/company/AAPL/profile')));
    const full = await call('sec_profile', { ticker: 'AAPL', origins: 'full' });
    expect(leavesIn(full).length).toBeGreaterThan(leavesIn(profile).length);
    const timeline = await call('sec_timeline', { ticker: 'AAPL', limit: 5 });
    expect(timeline.events.length).toBeLessThanOrEqual(5);
    // The REST page adds `next`, the URL of the next page (an HTTP link; MCP pages with next_cursor alone).
    const { next: _next, ...timelineRest } = await rest('/api/company/AAPL/timeline?limit=5');
    expect(timeline).toEqual(withoutNulls(timelineRest));
    const page2 = await call('sec_timeline', { ticker: 'AAPL', limit: 5, cursor: timeline.next_cursor });
    expect(page2.events[0]).not.toEqual(timeline.events[0]);
    const filings = await call('sec_filings', { ticker: 'AAPL', form: '10-K', limit: 3 });
    expect(filings.filings.length).toBeGreaterThan(0);
    for (const f of filings.filings) expect(f.form).toMatch(/^10-K/);
    await call('sec_earnings', { ticker: 'AAPL' });
    const people = await call('sec_people', { ticker: 'AAPL' });
    const someone = String(people.executives[0].name).split(' ').at(-1)!;
    const person = await call('sec_person', { name: someone });
    expect(person.career.length).toBeGreaterThan(0);
  });

  it('filters signals with every parameter and lists the index without any', async () => {
    const index = await call('sec_signals');
    expect(index.types.length).toBeGreaterThan(0);
    const type = index.types.find((t: { hits: number }) => t.hits > 0).type;
    const hits = await call('sec_signals', { type, limit: 3 });
    expect(hits.signals.length).toBeGreaterThan(0);
    expect(hits.signals.length).toBeLessThanOrEqual(3);
    const ticker = hits.signals[0].ticker;
    const filtered = await call('sec_signals', { type, ticker, min_strength: 1, limit: 5 });
    for (const s of filtered.signals) expect(s.ticker).toBe(ticker);
    const strong = await call('sec_signals', { type, min_strength: 3 });
    for (const s of strong.signals) expect(s.strength).toBe(3);
    // limit alone selects hits, never the index
    const limited = await call('sec_signals', { limit: 2 });
    expect(limited.signals.length).toBeLessThanOrEqual(2);
    expect(limited.types).toBeUndefined();
    await call('sec_signals', { type, also: type, exchange: 'Nasdaq' });
  });

  it('searches the registry, quotes, transcripts and facts', async () => {
    const found = await call('sec_search', { q: 'apple', limit: 2 });
    expect(found.results.companies[0].ticker).toBe('AAPL');
    const quote = await call('sec_quote', { ticker: 'AAPL' });
    expect(quote.quote.close).toBeGreaterThan(0);
    const history = await call('sec_quote_history', { ticker: 'AAPL', limit: 3 });
    expect(history.quotes).toHaveLength(3);
    // each day's leaf chains to the previous day's
    expect(history.quotes[0].origin.parent).toBe(history.quotes[1].origin.leaf_hash);
    // Listing tools page with `cursor` like their routes: the next page continues where this one stopped.
    const older = await call('sec_quote_history', { ticker: 'AAPL', limit: 3, cursor: history.next_cursor });
    expect(history.quotes[2].origin.parent).toBe(older.quotes[0].origin.leaf_hash);
    const people2 = await call('sec_search', { q: 'a', limit: 2, category: 'people' });
    const people3 = await call('sec_search', { q: 'a', limit: 2, category: 'people', cursor: people2.next_cursor });
    expect(people3.results.people[0].name).not.toBe(people2.results.people[0].name);
    expect(people3.results.companies).toEqual([]);
    const transcripts = await call('sec_transcripts', { ticker: 'AAPL' });
    expect(transcripts.transcript_count).toBeGreaterThan(0);
    const facts = await call('sec_facts', { ticker: 'AAPL', topic: 'ai', limit: 2 });
    expect(facts.facts.length).toBeLessThanOrEqual(2);
    const across = await call('sec_transcript_search', { topic: 'ai', limit: 2 });
    expect(across.topics[0].topic).toBe('ai');
    const first = await call('sec_transcript_search', { topic: 'ai', first: true });
    expect(first.facts).toBeUndefined();
  });

  it('follows origin.parent with sec_verify and chains the receipts', async () => {
    // The default card carries the short origin {leaf_hash, source}; sec_verify returns the whole leaf, whose
    // parent the agent follows next (detail=full would give the same leaf on the card itself).
    const card = await call('sec_company', { ticker: 'AAPL' });
    const full = await call('sec_company', { ticker: 'AAPL', detail: 'full' });
    expect(full.origin).toMatchObject(card.origin);
    const a = await call('sec_verify', { leaf_hash: card.origin.leaf_hash });
    expect(a).toMatchObject({ found: true, leaf: full.origin, chain: { valid: true } });
    expect(a.receipt.prev_nonce).toBeNull();
    const b = await call('sec_verify', { leaf_hash: a.leaf.parent, prev_nonce: a.receipt.nonce });
    expect(b.leaf.leaf_hash).toBe(a.leaf.parent);
    expect(b.receipt.prev_nonce).toBe(a.receipt.nonce);
    expect(b.receipt.prev_receipt_hash).toBe(a.receipt_hash);
    const unknown = (await client.callTool({ name: 'sec_verify', arguments: { leaf_hash: 'f'.repeat(64) } })) as ToolResult;
    expect(unknown.isError).toBe(true);
    expect(unknown.content[0]!.text).toMatch(/"found":false/);
  });

  it('answers bad or unknown arguments and unknown companies with readable tool errors', async () => {
    for (const [name, args, msg] of [
      ['sec_company', { ticker: 'AAPL', cik: 1 }, /unknown argument\(s\) cik/],
      ['sec_company', {}, /ticker/],
      ['sec_company', { ticker: 'ZZZZQ' }, /sec_company failed: no company/],
      ['sec_filings', { ticker: 'AAPL', form: 'S-1' }, /form/],
      ['sec_signals', { type: 'nope' }, /type/],
      ['sec_verify', { leaf_hash: 'abc' }, /leaf_hash/],
    ] as const) {
      const r = (await client.callTool({ name, arguments: args })) as ToolResult;
      expect(r.isError, `${name} ${JSON.stringify(args)}`).toBe(true);
      expect(r.content[0]!.text).toMatch(msg);
    }
  });

  it('has called every registry tool', () => {
    expect([...called].sort()).toEqual(
      TOOLS.filter((t) => t.name.startsWith('sec_'))
        .map((t) => t.name)
        .sort(),
    );
  });
});

describe('tool contracts', () => {
  it('passes the Inspector --strict schema rules with no error and no warning', async () => {
    const { tools } = await client.listTools();
    expect(tools).toHaveLength(TOOLS.length);
    expect(lintTools(tools)).toEqual([]);
  });

  it('describes every argument, names tools portably, annotates every tool and gives instructions', async () => {
    const { tools } = await client.listTools();
    for (const t of tools) {
      expect(t.name).toMatch(/^[A-Za-z0-9_.-]{1,128}$/);
      expect(t.annotations?.readOnlyHint, t.name).toBeTypeOf('boolean');
      for (const [p, s] of Object.entries((t.inputSchema.properties ?? {}) as Record<string, { description?: string }>))
        expect(s.description, `${t.name}.${p}`).toBeTruthy();
      expect(JSON.stringify(t.outputSchema)).not.toMatch(/"type":\[/);
    }
    expect(client.getInstructions()).toMatch(/sec_verify/);
  });

  it('is documented: docs/mcp.md names every registry tool and the freight tools are in vetting-and-care.md', async () => {
    const mcpDoc = await readFile(path.join(REPO_ROOT, 'docs/mcp.md'), 'utf8');
    const vetDoc = await readFile(path.join(REPO_ROOT, 'docs/vetting-and-care.md'), 'utf8');
    for (const t of TOOLS) expect(t.name.startsWith('sec_') ? mcpDoc : vetDoc, t.name).toContain(`| \`${t.name}\` |`);
  });

  it('serves the identity-card and risk-model resources and the prompts', async () => {
    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates.map((r) => r.uriTemplate)).toContain('proofline://company/{ticker}');
    const card = await client.readResource({ uri: 'proofline://company/AAPL' });
    const { usage_meta: _u, ...restCard } = await rest('/api/company/AAPL');
    expect(JSON.parse(String((card.contents[0] as { text: string }).text))).toEqual(restCard);
    const rules = await client.readResource({ uri: 'proofline://risk-model/rules' });
    const doc = JSON.parse(String((rules.contents[0] as { text: string }).text));
    expect(doc.rules.map((r: { code: string }) => r.code)).toContain('OOS_ORDER_ACTIVE');
    await expect(client.readResource({ uri: 'proofline://nothing' })).rejects.toThrow(/not found/);
    const { prompts } = await client.listPrompts();
    expect(prompts.map((p) => p.name).sort()).toEqual(['verify_company_facts', 'vet_carrier_for_dispatch']);
    const p = await client.getPrompt({ name: 'verify_company_facts', arguments: { ticker: 'AAPL' } });
    expect(JSON.stringify(p.messages)).toMatch(/sec_verify/);
  });
});
