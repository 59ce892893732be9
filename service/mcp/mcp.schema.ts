/**
 * Answer schema of POST /mcp: one JSON-RPC 2.0 response (stateless Streamable HTTP with JSON responses; batches are
 * refused). `result` is the MCP method's result (tools/call: `content`, `structuredContent` per the tool's output
 * schema in tools/list, and `_meta.usage_meta`); `error` a JSON-RPC error. Checked live by
 * test/api/openapi-conformance.test.ts.
 */
import { z } from 'zod';

export const mcpResponseAnswer = z.union([
  z.object({
    jsonrpc: z.literal('2.0'),
    id: z.union([z.string(), z.number()]),
    result: z.record(z.string(), z.unknown()).describe('the result of the MCP method (tools/call, tools/list, resources/read, ...)'),
  }),
  z.object({
    jsonrpc: z.literal('2.0'),
    id: z.union([z.string(), z.number()]).nullable(),
    error: z.object({ code: z.number().int(), message: z.string(), data: z.unknown().optional() }),
  }),
]);
