/**
 * What the MCP request path guarantees since it was made cheap (issue 22): every answer matches the output
 * schema its tool publishes, checked per call with the published JSON Schema (Ajv) instead of a zod parse
 * (mcp.routes.ts, `outputCheckOf`); servers are reused across requests; concurrent calls on one process each get
 * their own answer; and the text content is the exact JSON of the structured content.
 *
 * The equivalence of the two checks is pinned here: no part of any output schema is lost in JSON Schema
 * (conversion with `unrepresentable: 'throw'`), and real answers of every freight read tool, over many carriers,
 * pass both the zod output schema and the published JSON Schema. (The sec_* answers are checked against their
 * published schemas by sec-tools.test.ts.)
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { TOOLS } from '../../service/mcp/mcp.queries.ts';
import { MONITORING_TOOLS } from '../../service/mcp/monitoring.tools.ts';
import { omitNulls } from '../../service/mcp/tool-kit.ts';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { type JSONRPCRequest, JSONRPCRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { Protocol } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  answerPlainToolCall,
  answerText,
  buildMcpServer,
  DirectTransport,
  directRequestOf,
  isPlainToolCallRequest,
  mcpServersBuilt,
  outputCheckOf,
  type ServerSlot,
} from '../../service/mcp/mcp.routes.ts';
import { buildWorld, type World } from '../vetting/fmcsa-world.ts';
import { schemaProblems } from './mcp-helpers.ts';

const MONITORING = new Set(MONITORING_TOOLS.map((t) => t.name));
let w: World;
let dots: number[];
let vins: string[];
let states: string[];
const published = new Map<string, { inputSchema: { properties?: Record<string, unknown> }; outputSchema: Record<string, unknown> }>();

type Answer = {
  jsonrpc: '2.0';
  id: number | string | null;
  result?: { isError?: boolean; content: Array<{ type: string; text: string }>; structuredContent?: Record<string, unknown> };
  error?: { code: number; message: string };
};

const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
async function rpcText(id: number, method: string, params: unknown): Promise<string> {
  const r = await w.svc.app.fetch(
    new Request('http://proofline.test/mcp', { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id, method, params }) }),
  );
  expect(r.status).toBe(200);
  return r.text();
}
const rpc = async (id: number, method: string, params: unknown): Promise<Answer> => JSON.parse(await rpcText(id, method, params));
/** The result without `_meta` (the usage counts in it change with every call). */
const withoutMeta = (a: Answer) => JSON.stringify({ ...a.result, _meta: undefined });
const callTool = (id: number, name: string, args: Record<string, unknown>) => rpc(id, 'tools/call', { name, arguments: args });

beforeAll(async () => {
  w = await buildWorld();
  w.svc.deps.options.dataDir = w.config.dataDir;
  const q = (sql: string) => w.svc.deps.readers.fmcsa!.query(sql);
  // Carriers with the most records first (long answers), then others.
  dots = (
    await q(`SELECT dot_number FROM carriers ORDER BY
      (SELECT count(*) FROM inspections i WHERE i.dot_number = carriers.dot_number) +
      (SELECT count(*) FROM crashes x WHERE x.dot_number = carriers.dot_number) DESC, dot_number LIMIT 30`)
  ).map((r) => Number(r.dot_number));
  vins = (await q(`SELECT DISTINCT vin FROM crashes WHERE vin IS NOT NULL AND length(vin) = 17 ORDER BY vin LIMIT 15`)).map((r) =>
    String(r.vin),
  );
  states = (await q(`SELECT DISTINCT phy_state FROM carriers WHERE phy_state IS NOT NULL ORDER BY 1 LIMIT 8`)).map((r) =>
    String(r.phy_state),
  );
  const list = await rpc(1, 'tools/list', {});
  for (const t of (
    list.result as unknown as { tools: Array<{ name: string } & (typeof published extends Map<string, infer V> ? V : never)> }
  ).tools)
    published.set(t.name, t);
}, 120_000);
afterAll(async () => {
  await w?.close();
});

describe('MCP output contract', () => {
  it('loses no part of any output schema in the published JSON Schema (so the per-call Ajv check is the zod check)', () => {
    for (const t of TOOLS) expect(() => z.toJSONSchema(t.output, { io: 'output', unrepresentable: 'throw' }), t.name).not.toThrow();
  });

  it('rejects an answer that breaks the published output schema (the per-call check is in place)', () => {
    expect(outputCheckOf('freight_carrier_safety')({ dot_number: 'not a number' }).valid).toBe(false);
    expect(outputCheckOf('freight_inspection_history')({}).valid).toBe(false);
  });

  it('answers every freight read tool over many carriers with structured content valid against both schemas, repeated byte for byte as text', async () => {
    const argsOf = (name: string): Array<Record<string, unknown>> => {
      const props = Object.keys(published.get(name)!.inputSchema.properties ?? {});
      if (props.includes('dot_numbers')) return dots.slice(0, 10).map((d, i) => ({ dot_numbers: [d, dots[(i + 7) % dots.length]] }));
      if (props.includes('vin')) return vins.map((vin) => ({ vin }));
      if (name === 'freight_red_flag_search') return [{}, ...states.map((state) => ({ state }))];
      if (props.includes('dot_number')) return dots.map((dot_number) => ({ dot_number }));
      return [{}];
    };
    let id = 100;
    let checked = 0;
    for (const t of TOOLS) {
      // Monitoring lists belong to an account (none here): they are checked by mcp.test.ts.
      if (!t.name.startsWith('freight_') || !t.annotations.readOnlyHint || MONITORING.has(t.name)) continue;
      let ok = 0;
      for (const args of argsOf(t.name)) {
        const text = await rpcText(++id, 'tools/call', { name: t.name, arguments: args });
        const a = JSON.parse(text) as Answer;
        expect(a.id).toBe(id);
        if (a.result?.isError) continue; // a carrier without such records: a tool error, no structured content
        const sc = a.result!.structuredContent!;
        const zodCheck = t.output.safeParse(sc);
        expect(zodCheck.success, `${t.name} ${JSON.stringify(args)}: ${zodCheck.error?.message}`).toBe(true);
        expect(schemaProblems(published.get(t.name)!.outputSchema, sc), t.name).toEqual([]);
        // The text content is the JSON of the structured content, and the answer holds it verbatim twice.
        expect(a.result!.content[0]!.text).toBe(JSON.stringify(sc));
        expect(text).toContain(`"structuredContent":${JSON.stringify(sc)}`);
        ok++;
      }
      expect(ok, `${t.name}: no successful answer`).toBeGreaterThan(0);
      checked += ok;
    }
    expect(checked).toBeGreaterThan(100);
  });
});

describe('MCP servers reused across requests', () => {
  it('builds no server for sequential requests once one exists', async () => {
    await callTool(1, 'freight_carrier_safety', { dot_number: dots[0] });
    const built = mcpServersBuilt();
    for (let i = 0; i < 20; i++) await callTool(i + 2, 'freight_carrier_safety', { dot_number: dots[i % dots.length] });
    await rpc(30, 'tools/list', {});
    expect(mcpServersBuilt()).toBe(built);
  });

  it('gives each of many concurrent requests on one process its own answer (ids and results never mixed)', async () => {
    const expected = new Map<number, string>();
    for (const [i, dot] of dots.entries()) {
      const a = await callTool(1, 'freight_inspection_history', { dot_number: dot });
      expected.set(i, withoutMeta(a));
    }
    const unknown = { code: -32602 };
    const builtBefore = mcpServersBuilt();
    // Every carrier's history twice, a bad argument, an unknown tool and a tools/list, all at once, twice over.
    for (let round = 0; round < 2; round++) {
      const calls: Array<Promise<void>> = [];
      for (const [i, dot] of [...dots.entries(), ...dots.entries()]) {
        const id = round * 1000 + calls.length;
        calls.push(
          callTool(id, 'freight_inspection_history', { dot_number: dot }).then((a) => {
            expect(a.id).toBe(id);
            expect(withoutMeta(a)).toBe(expected.get(i));
          }),
        );
      }
      const bad = round * 1000 + 900;
      calls.push(
        callTool(bad, 'freight_carrier_safety', { dot_number: 'twelve' }).then((a) => {
          expect(a.id).toBe(bad);
          expect(a.result!.isError).toBe(true);
        }),
        callTool(bad + 1, 'freight_nope', {}).then((a) => {
          expect(a.id).toBe(bad + 1);
          expect(a.error).toMatchObject(unknown);
        }),
        rpc(`list-${round}` as unknown as number, 'tools/list', {}).then((a) => {
          expect(a.id).toBe(`list-${round}`);
          expect((a.result as unknown as { tools: unknown[] }).tools).toHaveLength(TOOLS.length);
        }),
      );
      await Promise.all(calls);
    }
    // The requests were in flight together: more servers than one were needed, each serving one request at a time.
    expect(mcpServersBuilt()).toBeGreaterThan(builtBefore + 1);
  });
});

describe('MCP requests answered without a transport per request (DirectTransport)', () => {
  /** The answer of the Streamable HTTP transport (stateless, JSON responses) to one POST, as the SDK writes it. */
  async function throughTransport(slot: ServerSlot, message: unknown): Promise<string> {
    const server = buildMcpServer(slot, 'test');
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    await server.connect(transport);
    const r = await transport.handleRequest(
      new Request('http://proofline.test/mcp', { method: 'POST', headers, body: JSON.stringify(message) }),
    );
    const text = await r.text();
    await transport.close();
    return text;
  }

  it('gives the answer the Streamable HTTP transport gives, byte for byte, on one server reused for every request', async () => {
    const slot: ServerSlot = { ctx: { deps: w.svc.deps, apiKey: null } };
    const server = buildMcpServer(slot, 'test');
    const direct = new DirectTransport();
    await server.connect(direct);
    const messages: unknown[] = [
      ...dots.slice(0, 5).map((dot_number, i) => ({
        jsonrpc: '2.0',
        id: i + 1,
        method: 'tools/call',
        params: { name: 'freight_inspection_history', arguments: { dot_number } },
      })),
      { jsonrpc: '2.0', id: 'a', method: 'tools/call', params: { name: 'freight_carrier_safety', arguments: { dot_number: dots[0] } } },
      { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'freight_carrier_safety', arguments: { dot_number: 'twelve' } } },
      { jsonrpc: '2.0', id: 8, method: 'tools/call', params: { name: 'freight_nope', arguments: {} } },
      { jsonrpc: '2.0', id: 9, method: 'tools/call', params: { arguments: {} } },
      { jsonrpc: '2.0', id: 10, method: 'tools/list', params: {} },
      { jsonrpc: '2.0', id: 11, method: 'resources/list' },
      { jsonrpc: '2.0', id: 12, method: 'prompts/list', params: { _meta: { progressToken: 3 } } },
      { jsonrpc: '2.0', id: 13, method: 'no/such/method', params: {} },
      { jsonrpc: '2.0', id: 14, method: 'ping' },
    ];
    for (const m of messages) {
      const request = directRequestOf(new Headers(headers), m);
      expect(request, JSON.stringify(m)).toBeDefined();
      const message = await direct.deliver(request as JSONRPCRequest);
      const answer = JSON.stringify(message);
      // What the route writes (the structured JSON reused, written as bytes) is that JSON, byte for byte.
      expect(Buffer.from(answerText(message, slot)).toString('utf8')).toBe(answer);
      expect(answer).toBe(await throughTransport(slot, m));
    }
  });

  it("answers tools/call on a direct server (the SDK's fallback handler) as a server built the SDK's way does, byte for byte", async () => {
    const connect = async (direct: boolean) => {
      const slot: ServerSlot = { ctx: { deps: w.svc.deps, apiKey: null } };
      const server = buildMcpServer(slot, 'test', { direct });
      const transport = new DirectTransport();
      await server.connect(transport);
      return { slot, transport };
    };
    const fast = await connect(true);
    const sdk = await connect(false);
    const call = (params: unknown) => ({ jsonrpc: '2.0', method: 'tools/call', params });
    const messages: Array<Record<string, unknown>> = [
      ...dots
        .slice(0, 8)
        .flatMap((dot_number) =>
          ['freight_inspection_history', 'freight_carrier_safety', 'freight_crash_history', 'freight_enforcement_history'].map((name) =>
            call({ name, arguments: { dot_number } }),
          ),
        ),
      ...vins.slice(0, 3).map((vin) => call({ name: 'freight_crash_by_vin', arguments: { vin } })),
      call({ name: 'freight_carrier_safety', arguments: { dot_number: 'twelve' } }),
      call({ name: 'freight_carrier_safety', arguments: { dot_number: dots[0], extra: 1 } }),
      call({ name: 'freight_carrier_safety', arguments: { dot_number: 1 } }),
      call({ name: 'freight_carrier_safety' }),
      call({ name: 'freight_nope', arguments: {} }),
      call({ arguments: {} }),
      call({ name: 7, arguments: {} }),
      call({ name: 'freight_carrier_safety', arguments: [1] }),
      call({ name: 'freight_carrier_safety', arguments: null }),
      call({ name: 'freight_carrier_safety', arguments: 'x' }),
      call({ name: 'freight_carrier_safety', arguments: { dot_number: dots[0] }, other: true }),
      call({ name: 'freight_carrier_safety', arguments: { dot_number: dots[0] }, _meta: { progressToken: 'p' } }),
      call({ name: 'freight_carrier_safety', arguments: { dot_number: dots[0] }, _meta: { progressToken: [] } }),
      call({ name: 'freight_carrier_safety', arguments: { dot_number: dots[0] }, task: { ttl: 1000 } }),
      call({ name: 'freight_carrier_safety', arguments: JSON.parse(`{"dot_number": ${dots[0]}, "__proto__": {"x": 1}}`) }),
      call(undefined),
      call([]),
      { jsonrpc: '2.0', method: 'no/such/method', params: {} },
      {
        jsonrpc: '2.0',
        method: 'completion/complete',
        params: { ref: { type: 'ref/prompt', name: 'x' }, argument: { name: 'a', value: 'b' } },
      },
      { jsonrpc: '2.0', method: 'tools/list', params: {} },
      { jsonrpc: '2.0', method: 'ping' },
    ];
    let id = 1000;
    let delivered = 0;
    let plain = 0;
    for (const m of messages) {
      const message = { ...m, id: ++id };
      const request = directRequestOf(new Headers(headers), message);
      if (request === undefined) continue; // a bad envelope (params an array, a `_meta` with an array token): the transport answers it
      delivered++;
      const a = await fast.transport.deliver(request as JSONRPCRequest);
      const b = await sdk.transport.deliver(request as JSONRPCRequest);
      expect(JSON.stringify(a), JSON.stringify(message)).toBe(JSON.stringify(b));
      expect(Buffer.from(answerText(a, fast.slot)).toString('utf8')).toBe(Buffer.from(answerText(b, sdk.slot)).toString('utf8'));
      // The route answers a plain tools/call without a server (answerPlainToolCall): the same answer, byte for byte.
      if (isPlainToolCallRequest(request as JSONRPCRequest)) {
        plain++;
        const slot: ServerSlot = { ctx: { deps: w.svc.deps, apiKey: null } };
        const c = await answerPlainToolCall(slot, request as Parameters<typeof answerPlainToolCall>[1]);
        expect(JSON.stringify(c), JSON.stringify(message)).toBe(JSON.stringify(b));
        expect(Buffer.from(answerText(c, slot)).toString('utf8')).toBe(Buffer.from(answerText(b, sdk.slot)).toString('utf8'));
      }
    }
    expect(delivered).toBe(messages.length - 2);
    expect(plain).toBe(40); // 32 + 3 answers, 3 bad arguments, an unknown tool, a call without arguments
  });

  it("answers a plain tools/call over HTTP without the SDK's per-request dispatch; other requests keep it", async () => {
    // Protocol._onrequest runs the message's type guards (two failing zod parses for a request) and builds an
    // AbortController per request: about 1.2 KB a call promoted to the old generation (answerPlainToolCall).
    const dispatched = vi.spyOn(Protocol.prototype as unknown as { _onrequest: () => void }, '_onrequest');
    try {
      const post = async (body: unknown) => {
        const res = await w.svc.app.fetch(
          new Request('http://proofline.test/mcp', { method: 'POST', headers, body: JSON.stringify(body) }),
        );
        return (await res.json()) as { result?: { structuredContent?: unknown; isError?: boolean }; error?: unknown };
      };
      const call = await post({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'freight_carrier_safety', arguments: { dot_number: dots[0] } },
      });
      expect(call.result?.structuredContent).toBeDefined();
      const unknown = await post({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'freight_nope', arguments: {} } });
      expect(unknown.error).toBeDefined();
      expect(dispatched).not.toHaveBeenCalled();
      const list = await post({ jsonrpc: '2.0', id: 3, method: 'tools/list', params: {} });
      expect(list.result).toBeDefined();
      expect(dispatched).toHaveBeenCalledTimes(1);
    } finally {
      dispatched.mockRestore();
    }
  });

  it("hands on the request the SDK's JSONRPCRequestSchema parse gives, or none when it fails, over arbitrary envelopes", () => {
    const h = new Headers(headers);
    const json = fc.jsonValue({ maxDepth: 2 });
    const member = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined });
    const envelope = fc.record(
      {
        jsonrpc: member(fc.constantFrom('2.0', '1.0', 2)),
        id: member(fc.oneof(fc.integer(), fc.string(), fc.double(), fc.constant(null), fc.constant(2 ** 60))),
        method: member(fc.oneof(fc.constantFrom('tools/call', 'tools/list', 'ping'), fc.integer())),
        params: member(
          fc.oneof(
            fc.dictionary(fc.constantFrom('name', 'arguments', 'cursor', '_meta', '__proto__', 'x'), json),
            fc.record({ _meta: fc.record({ progressToken: fc.oneof(fc.string(), fc.integer(), fc.constant([])) }) }),
            json,
          ),
        ),
        extra: member(json),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(envelope, (e) => {
        const body = JSON.parse(JSON.stringify(e)) as Record<string, unknown>; // as the route has it: parsed JSON
        const parsed = JSONRPCRequestSchema.safeParse(body);
        const expected = body.method === 'initialize' || !('id' in body) || !parsed.success ? undefined : parsed.data;
        expect(directRequestOf(h, body)).toEqual(expected);
      }),
      { numRuns: 2000 },
    );
  });

  it('writes an answer holding any text (non-ASCII, escapes, the member name inside strings) as its JSON, byte for byte', () => {
    const structured = {
      name: 'Société Générale — “quotes” \\ "structuredContent":"x" \u2028 😀',
      nested: { list: [1, 'ü', null, { a: '\n\t\u0001\u007f \ud800 lone, "text":"\u0000proofline:text\u0000"' }] },
    };
    const structuredText = JSON.stringify(structured);
    const slot: ServerSlot = { ctx: { deps: w.svc.deps, apiKey: null }, structured, structuredText };
    const message = {
      jsonrpc: '2.0' as const,
      id: 'é',
      result: {
        content: [{ type: 'text' as const, text: structuredText }],
        structuredContent: { ...structured },
        _meta: { 'proofline/usage': { tier: 'ñ' } },
      },
    };
    const written = answerText(message, slot);
    expect(written).toBeInstanceOf(Uint8Array);
    expect(Buffer.from(written).toString('utf8')).toBe(JSON.stringify(message));
    // The text content before or after the structured content: both orders are written as serialised.
    const reordered = {
      jsonrpc: '2.0' as const,
      id: 3,
      result: { structuredContent: { ...structured }, isError: false, content: [{ type: 'text' as const, text: structuredText }] },
    };
    expect(Buffer.from(answerText(reordered, slot)).toString('utf8')).toBe(JSON.stringify(reordered));
    // A result whose structured content is not the handler's object is serialised as it is.
    const other = { ...message, result: { ...message.result, structuredContent: { name: 'other' } } };
    expect(answerText(other, slot)).toBe(JSON.stringify(other));
  });

  it('writes the JSON of any answer byte for byte, over arbitrary structured content and text', () => {
    const value = fc.jsonValue({ maxDepth: 3, stringUnit: 'binary' });
    fc.assert(
      fc.property(fc.dictionary(fc.string({ unit: 'binary' }), value), fc.boolean(), (structured, textFirst) => {
        const structuredText = JSON.stringify(structured);
        const slot: ServerSlot = { ctx: { deps: w.svc.deps, apiKey: null }, structured, structuredText };
        const content = [{ type: 'text' as const, text: structuredText }];
        const result = textFirst
          ? { content, structuredContent: { ...structured }, _meta: { 'proofline/usage': { n: 1 } } }
          : { structuredContent: { ...structured }, content };
        const message = { jsonrpc: '2.0' as const, id: 1, result };
        expect(Buffer.from(answerText(message, slot)).toString('utf8')).toBe(JSON.stringify(message));
      }),
      { numRuns: 300 },
    );
  });

  it('leaves to the Streamable HTTP transport every request it answers itself (406, 415, 400, 202, initialize)', async () => {
    const call = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'freight_status', arguments: {} } };
    const post = async (h: Record<string, string>, body: unknown) => {
      const r = await w.svc.app.fetch(new Request('http://proofline.test/mcp', { method: 'POST', headers: h, body: JSON.stringify(body) }));
      const text = await r.text();
      return { status: r.status, answer: text ? JSON.parse(text) : null };
    };
    const cases: Array<{ h: Record<string, string>; body: unknown; status: number; code?: number; message?: RegExp }> = [
      { h: { ...headers, accept: 'application/json' }, body: call, status: 406, code: -32000, message: /^Not Acceptable/ },
      { h: { ...headers, accept: 'text/event-stream' }, body: call, status: 406, code: -32000, message: /^Not Acceptable/ },
      // The route reads this body (its content-type names application/json) but its media type is not JSON.
      { h: { ...headers, 'content-type': 'text/plain; a=application/json' }, body: call, status: 415, code: -32000 },
      {
        h: { ...headers, 'mcp-protocol-version': '1999-01-01' },
        body: call,
        status: 400,
        code: -32000,
        message: /Unsupported protocol version/,
      },
      { h: headers, body: { ...call, extra: 1 }, status: 400, code: -32700, message: /Invalid JSON-RPC message/ },
      { h: headers, body: { jsonrpc: '2.0', id: 1, method: 7 }, status: 400, code: -32700 },
      { h: headers, body: { jsonrpc: '1.0', id: 1, method: 'tools/list' }, status: 400, code: -32700 },
      { h: headers, body: { jsonrpc: '2.0', method: 'notifications/initialized' }, status: 202 },
    ];
    for (const c of cases) {
      expect(directRequestOf(new Headers(c.h), c.body), JSON.stringify(c)).toBeUndefined();
      const { status, answer } = await post(c.h, c.body);
      expect(status, JSON.stringify(c)).toBe(c.status);
      if (c.code !== undefined) expect(answer.error.code, JSON.stringify(c)).toBe(c.code);
      if (c.message) expect(answer.error.message, JSON.stringify(c)).toMatch(c.message);
    }
    // initialize (no protocol version header needed) keeps the transport's path and answers in stateless mode.
    const init = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    };
    expect(directRequestOf(new Headers(headers), init)).toBeUndefined();
    const { status, answer } = await post(headers, init);
    expect(status).toBe(200);
    expect(answer.result.protocolVersion).toBe('2025-06-18');
    expect(answer.result.serverInfo.name).toBe('proofline');
    // A supported protocol version header, or none, keeps a tools/call on the direct path.
    expect(directRequestOf(new Headers({ ...headers, 'mcp-protocol-version': '2025-06-18' }), call)).toBeDefined();
    expect(directRequestOf(new Headers(headers), call)).toBeDefined();
  });
});

describe('omitNulls', () => {
  /** The deep copy it replaced (every object and array copied), the reference for what the answer's JSON is. */
  function copyWithoutNulls(v: unknown): unknown {
    if (!v || typeof v !== 'object') return v;
    if (Array.isArray(v)) return v.map(copyWithoutNulls);
    const o = v as Record<string, unknown>;
    if ((typeof o.leaf_hash === 'string' && 'canon' in o && 'alg' in o) || 'signature' in o) return o;
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(o)) if (o[k] !== null && o[k] !== undefined) out[k] = copyWithoutNulls(o[k]);
    return out;
  }

  it('gives the JSON the deep copy gives, over arbitrary values, without changing its input', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 5 }), (v) => {
        const before = JSON.stringify(v);
        expect(JSON.stringify(omitNulls(v))).toBe(JSON.stringify(copyWithoutNulls(v)));
        expect(JSON.stringify(v)).toBe(before);
      }),
      { numRuns: 500 },
    );
  });

  it('returns what holds no null as it is, and copies only the objects on the way to a null', () => {
    const clean = { a: 1, b: [1, null, { c: 'x' }], d: { e: { f: true } } };
    expect(omitNulls(clean)).toBe(clean);
    const withNull = { a: 1, keep: { k: 1 }, deep: { x: null, y: 2 }, list: [{ z: undefined }, 3] };
    const out = omitNulls(withNull) as typeof withNull;
    expect(out).not.toBe(withNull);
    expect(out.keep).toBe(withNull.keep);
    expect(JSON.stringify(out)).toBe('{"a":1,"keep":{"k":1},"deep":{"y":2},"list":[{},3]}');
    expect(withNull.deep.x).toBeNull();
    // Hashed or signed objects travel verbatim, nulls included.
    const leaf = { leaf_hash: 'h', alg: 'sha256', canon: 'rfc8785', v: null };
    expect(omitNulls({ leaf }) as { leaf: unknown }).toEqual({ leaf });
  });

  it('copies class instances and own __proto__ members as the deep copy does', () => {
    class Point {
      x = 1;
      y = null;
      get sum() {
        return 2;
      }
      toJSON() {
        return 'point';
      }
    }
    const v = { p: new Point(), d: new Date(0), o: JSON.parse('{"__proto__":{"a":1},"b":2}') as Record<string, unknown> };
    expect(JSON.stringify(omitNulls(v))).toBe(JSON.stringify(copyWithoutNulls(v)));
    expect(JSON.stringify(omitNulls(v))).toBe('{"p":{"x":1},"d":{},"o":{"b":2}}');
  });
});
