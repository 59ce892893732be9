/**
 * freight_status before the first FMCSA snapshot: GET /api/status answers `no_data` with `datasets: null` (and
 * `state: null` without a state store); the MCP tool answers the same report (nulls omitted, as every MCP answer), not a tool error for its own output
 * schema (seen in the api bench's small warehouse, which holds no FMCSA snapshot).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestService, getJson, type TestService } from '../helpers/app.ts';
import { removeDir, tempDir, testConfig } from '../helpers/env.ts';

const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

describe('freight_status with no FMCSA snapshot', () => {
  let dir: string;
  let svc: TestService;
  beforeAll(async () => {
    dir = await tempDir('proofline-status-no-data-');
    svc = await buildTestService(testConfig(dir), []);
  });
  afterAll(async () => {
    await svc?.close();
    await removeDir(dir);
  });

  it('answers the no_data report over MCP as GET /api/status does', async () => {
    const rest = await getJson(svc.app, '/api/status');
    expect(rest.status).toBe(200);
    expect(rest.body).toMatchObject({ status: 'no_data', datasets: null });
    const res = await svc.app.fetch(
      new Request('http://proofline.test/mcp', {
        method: 'POST',
        headers,
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'freight_status', arguments: {} } }),
      }),
    );
    expect(res.status).toBe(200);
    const { result } = (await res.json()) as {
      result: { isError?: boolean; content: Array<{ text: string }>; structuredContent: Record<string, unknown> };
    };
    expect(result.isError, result.content[0]?.text).toBeFalsy();
    // MCP answers omit null members (mcp.md): datasets and state are absent, as the output schema allows.
    expect(result.structuredContent).toMatchObject({ status: 'no_data', tables: [], domains: [] });
    expect(result.structuredContent).not.toHaveProperty('datasets');
  });
});
