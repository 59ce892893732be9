/**
 * POST /mcp: MCP over Streamable HTTP (JSON-RPC 2.0), built on the official
 * SDK's low-level `Server` + `WebStandardStreamableHTTPServerTransport`,
 * stateless (no session id) with JSON responses; a new server and transport
 * per request (a transport is never reused).
 *
 * What the SDK does not do and this wrapper does (shared notes, discovery-mcp):
 * - GET, DELETE (and other methods) answer 405 with `Allow: POST`;
 * - a browser `Origin` not in MCP_ALLOWED_ORIGINS answers 403 (no Origin: allowed);
 * - JSON-RPC batches (removed in 2025-06-18) answer 400 / -32600;
 * - unknown tools answer -32602 (low-level Server, not McpServer);
 * - bad arguments and lookup failures are tool errors (`isError: true`) with a readable message.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { H3 } from 'h3';
import { z } from 'zod';
import { PipelineError, publicMessage } from '../../lib/errors.ts';
import type { ServiceDeps } from '../platform/deps.ts';
import { describeRoute } from '../platform/route-registry.ts';
import { creditKeyOf } from '../platform/guards.ts';
import { TOOLS, type ToolContext } from './mcp.tools.ts';

describeRoute({
  method: 'POST',
  path: '/mcp',
  family: 'mcp',
  metered: false,
  summary: `MCP (JSON-RPC 2.0 over Streamable HTTP, stateless, JSON responses): ${TOOLS.length} freight_* tools`,
  statuses: [400, 403, 405, 406, 415],
});

const toolList = TOOLS.map((t) => ({
  name: t.name,
  title: t.title,
  description: t.description,
  inputSchema: z.toJSONSchema(t.input, { io: 'input' }) as { type: 'object'; [k: string]: unknown },
  outputSchema: z.toJSONSchema(t.output, { io: 'output' }) as { type: 'object'; [k: string]: unknown },
  ...(t.annotations ? { annotations: t.annotations } : {}),
}));
const byName = new Map(TOOLS.map((t) => [t.name, t]));

function issueText(error: z.ZodError): string {
  return error.issues.map((i) => `${i.path.length ? i.path.join('.') : 'arguments'}: ${i.message}`).join('; ');
}

/** Builds the per-request MCP server with the 12 tools. */
export function buildMcpServer(ctx: ToolContext): Server {
  const server = new Server({ name: 'proofline-freight', version: ctx.deps.options.version }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: toolList }));
  server.setRequestHandler(CallToolRequestSchema, async (req) => {
    const tool = byName.get(req.params.name);
    if (!tool)
      throw new McpError(ErrorCode.InvalidParams, `unknown tool ${req.params.name}; tools: ${TOOLS.map((t) => t.name).join(', ')}`);
    const args = tool.input.safeParse(req.params.arguments ?? {});
    if (!args.success)
      return { isError: true, content: [{ type: 'text' as const, text: `invalid arguments for ${tool.name}: ${issueText(args.error)}` }] };
    try {
      const result = await tool.run(ctx, args.data);
      const checked = tool.output.safeParse(result);
      if (!checked.success) {
        ctx.deps.log.error(
          { tool: tool.name, issues: checked.error.issues.slice(0, 3) },
          'MCP tool output does not match its output schema',
        );
        return {
          isError: true,
          content: [{ type: 'text' as const, text: `${tool.name} produced a result that does not match its output schema` }],
        };
      }
      const structured = checked.data as Record<string, unknown>;
      return { content: [{ type: 'text' as const, text: JSON.stringify(structured) }], structuredContent: structured };
    } catch (e) {
      return toolErrorOf(tool.name, e);
    }
  });
  return server;
}

/**
 * The one mapping of the error tree (lib/errors.ts) onto MCP: every failure
 * of a tool is a tool error (`isError: true`) whose text is the public message
 * plus the details a client needs (`context.response`, e.g. the balance of a
 * 402); unexpected errors say only "internal error".
 */
export function toolErrorOf(toolName: string, e: unknown): { isError: true; content: Array<{ type: 'text'; text: string }> } {
  const ctxResp = e instanceof PipelineError ? (e.context.response as Record<string, unknown> | undefined) : undefined;
  const detail = ctxResp && Object.keys(ctxResp).length ? ` ${JSON.stringify(ctxResp)}` : '';
  return { isError: true, content: [{ type: 'text' as const, text: `${toolName} failed: ${publicMessage(e)}${detail}` }] };
}

function rpcError(status: number, code: number, message: string, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }), {
    status,
    headers: { 'content-type': 'application/json', ...headers },
  });
}

export function registerMcpRoutes(app: H3, deps: ServiceDeps): void {
  app.all('/mcp', async (event) => {
    const req = event.req;
    const origin = req.headers.get('origin');
    const allowed = deps.options.mcpAllowedOrigins ?? [];
    if (origin && !allowed.includes(origin))
      return rpcError(403, -32000, `Forbidden: origin ${origin} is not allowed (MCP_ALLOWED_ORIGINS)`);
    const cors: Record<string, string> = origin ? { 'access-control-allow-origin': origin, vary: 'Origin' } : {};
    if (req.method === 'OPTIONS' && origin) {
      return new Response(null, {
        status: 204,
        headers: {
          ...cors,
          'access-control-allow-methods': 'POST',
          'access-control-allow-headers': 'content-type, accept, authorization, mcp-protocol-version, mcp-session-id',
        },
      });
    }
    if (req.method !== 'POST')
      return rpcError(405, -32000, 'Method not allowed: this stateless MCP endpoint accepts POST only.', { allow: 'POST', ...cors });
    let body: unknown;
    if ((req.headers.get('content-type') ?? '').includes('application/json')) {
      const text = await req.text();
      try {
        body = JSON.parse(text);
      } catch {
        return rpcError(400, -32700, 'Parse error: the body is not valid JSON', cors);
      }
      if (Array.isArray(body))
        return rpcError(400, -32600, 'Invalid Request: JSON-RPC batches are not supported (MCP 2025-06-18 and later)', cors);
      if (body && typeof body === 'object' && !('method' in body) && !('result' in body) && !('error' in body))
        return rpcError(400, -32600, 'Invalid Request: missing method', cors);
    }
    const server = buildMcpServer({ deps, apiKey: creditKeyOf(event) });
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    await server.connect(transport);
    try {
      const res = await transport.handleRequest(req, body === undefined ? undefined : { parsedBody: body });
      if (!origin) return res;
      const headers = new Headers(res.headers);
      for (const [k, v] of Object.entries(cors)) headers.set(k, v);
      return new Response(await res.arrayBuffer(), { status: res.status, headers });
    } finally {
      await transport.close();
      await server.close();
    }
  });
}
