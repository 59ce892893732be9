/**
 * POST /mcp: MCP over Streamable HTTP (JSON-RPC 2.0), built on the official
 * SDK's low-level `Server` + `WebStandardStreamableHTTPServerTransport`,
 * stateless (no session id) with JSON responses. A request that transport
 * would pass on unchanged goes to a pooled server kept connected to a
 * `DirectTransport` (`directRequestOf`, `McpDirectPool`); every other request
 * gets a new transport (a transport is never reused), connected to a server
 * taken from a second pool (`McpServerPool`); one request per server at a
 * time either way, and the answer written once (`takeAnswer`, `answerText`;
 * docs/mcp.md, "Request path").
 *
 * What the SDK does not do and this wrapper does (shared notes, discovery-mcp):
 * - GET, DELETE (and other methods) answer 405 with `Allow: POST`;
 * - a browser `Origin` not in MCP_ALLOWED_ORIGINS answers 403 (no Origin: allowed);
 * - JSON-RPC batches (removed in 2025-06-18) answer 400 / -32600;
 * - unknown tools answer -32602 (low-level Server, not McpServer); unknown arguments are tool errors;
 * - bad arguments and lookup failures are tool errors (`isError: true`) with a readable message.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { isJsonContentType } from '@modelcontextprotocol/sdk/shared/mediaType.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv-provider.js';
import type { JsonSchemaType, JsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';
import { safeParse as sdkSafeParse } from '@modelcontextprotocol/sdk/server/zod-compat.js';
import {
  CallToolRequestSchema,
  CallToolResultSchema,
  CreateTaskResultSchema,
  ErrorCode,
  GetPromptRequestSchema,
  type JSONRPCErrorResponse,
  type JSONRPCMessage,
  type JSONRPCRequest,
  JSONRPCRequestSchema,
  type JSONRPCResultResponse,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '@modelcontextprotocol/sdk/types.js';
import type { H3 } from 'h3';
import type { z } from 'zod';
import { httpStatusFor, PipelineError, publicMessage } from '../../lib/errors.ts';
import { findJsonProblem } from '../../lib/json-guard.ts';
import { MCP_BODY_LIMIT, readBodyText } from '../platform/body.ts';
import { allocTransientBody } from '../platform/bytes.ts';
import { toFastResponse } from '../platform/response-finish.ts';
import type { ServiceDeps } from '../platform/deps.ts';
import { mcpResponseAnswer } from './mcp.schema.ts';
import { describeRoute } from '../platform/route-registry.ts';
import { creditKeyOf } from '../platform/guards.ts';
import { SERVER_INSTRUCTIONS, TOOLS } from './mcp.queries.ts';
import { getPrompt, PROMPTS, RESOURCE_TEMPLATES, RESOURCES, readResource } from './mcp.resources.ts';
import { omitNulls, toolJsonSchema, type ToolContext } from './tool-kit.ts';
import { addUsageMeta, meterMcpCall } from './mcp.metering.ts';

describeRoute({
  method: 'POST',
  path: '/mcp',
  family: 'mcp',
  metered: false,
  summary: `MCP (JSON-RPC 2.0 over Streamable HTTP, stateless, JSON responses): ${TOOLS.length} tools (freight_* and sec_*), resources and prompts`,
  statuses: [400, 403, 405, 406, 415],
  response: mcpResponseAnswer,
});

const toolList = TOOLS.map((t) => ({
  name: t.name,
  title: t.title,
  description: t.description,
  inputSchema: toolJsonSchema(t.input, 'input'),
  outputSchema: toolJsonSchema(t.output, 'output'),
  annotations: { title: t.title, ...t.annotations },
}));
const byName = new Map(TOOLS.map((t) => [t.name, t]));

/** One Ajv for every server of the process: the SDK builds one per Server otherwise (the largest cost per request). */
const jsonSchemaValidator = new AjvJsonSchemaValidator();

/**
 * Every answer of a tool is checked against the output schema it publishes in tools/list before it is sent: a
 * mismatch is a tool error (and logged), never a broken contract. The check is the published JSON Schema compiled
 * by Ajv, the check the SDK's own Client makes on `structuredContent` (Client.callTool), rather than a zod parse
 * of the tool's output schema: the zod parse copies the whole answer (about a fifth of the CPU of a
 * freight_inspection_history call in a profile, issue 22), Ajv's compiled check walks it without copying. Both say
 * the same: the JSON Schema is generated from the zod schema (toolJsonSchema), and test/mcp/output-contract.test.ts
 * pins that nothing of an output schema is lost on the way (no part is unrepresentable in JSON Schema) and checks
 * real answers of every freight read tool against both (sec-tools.test.ts checks the sec_* answers' JSON Schemas).
 */
const outputChecks = new Map<string, JsonSchemaValidator<unknown>>();
export function outputCheckOf(name: string): JsonSchemaValidator<unknown> {
  let check = outputChecks.get(name);
  if (!check) {
    check = jsonSchemaValidator.getValidator(toolList.find((t) => t.name === name)!.outputSchema as JsonSchemaType);
    outputChecks.set(name, check);
  }
  return check;
}

function issueText(error: z.ZodError): string {
  return error.issues
    .map((i) => {
      const where = i.path.length ? i.path.join('.') : 'arguments';
      // Strict inputs: name the unknown argument(s) and the accepted ones.
      return i.code === 'unrecognized_keys' ? `unknown argument(s) ${i.keys.join(', ')}` : `${where}: ${i.message}`;
    })
    .join('; ');
}

/**
 * What a pooled server's handlers read of the request they are answering: set by `McpServerPool.acquire` before
 * the server is connected to that request's transport, cleared when it is released. A server answers one request at a time
 * (one transport, see the pool below), so its slot never holds two requests.
 */
export interface ServerSlot {
  ctx: ToolContext;
  /** The structured result of the tool call being answered and its JSON (the text content), for `answerText`. */
  structured?: Record<string, unknown>;
  structuredText?: string;
}

let serversBuilt = 0;
/** How many MCP servers this process has built (tests read it: requests reuse them). */
export function mcpServersBuilt(): number {
  return serversBuilt;
}

type ToolCallResult = {
  content: Array<{ type: 'text'; text: string }>;
  structuredContent?: Record<string, unknown>;
  isError?: true;
};

/**
 * Answers one `tools/call` whose params the SDK's `CallToolRequestSchema` accepts. A result is built in the member
 * order the SDK's `CallToolResultSchema` parse gives it (content, structuredContent, isError), so the direct
 * servers' answers, which skip that parse (`directToolCall`), are the same bytes.
 */
async function runToolCall(slot: ServerSlot, name: string, input: unknown): Promise<ToolCallResult> {
  const ctx = slot.ctx;
  const tool = byName.get(name);
  if (!tool) throw new McpError(ErrorCode.InvalidParams, `unknown tool ${name}; tools: ${TOOLS.map((t) => t.name).join(', ')}`);
  const args = tool.input.safeParse(input ?? {});
  if (!args.success) {
    const accepted = Object.keys((toolList.find((t) => t.name === tool.name)!.inputSchema.properties as object) ?? {});
    return {
      content: [
        {
          type: 'text' as const,
          text: `invalid arguments for ${tool.name}: ${issueText(args.error)} (arguments: ${accepted.join(', ') || 'none'})`,
        },
      ],
      isError: true,
    };
  }
  // Metering happened before the SDK saw the call (meterMcpCall in the POST handler: one rule for every door);
  // its limit information is added to the result's `_meta` there.
  try {
    const structured = omitNulls(await tool.run(ctx, args.data)) as Record<string, unknown>;
    const checked = outputCheckOf(tool.name)(structured);
    if (!checked.valid) {
      ctx.deps.log.error({ tool: tool.name, issues: checked.errorMessage }, 'MCP tool output does not match its output schema');
      return {
        content: [{ type: 'text' as const, text: `${tool.name} produced a result that does not match its output schema` }],
        isError: true,
      };
    }
    // The result as produced (open objects keep fields the schema does not list), repeated as text for older clients.
    const text = JSON.stringify(structured);
    slot.structured = structured;
    slot.structuredText = text;
    return { content: [{ type: 'text' as const, text }], structuredContent: structured };
  } catch (e) {
    return toolErrorOf(tool.name, e);
  }
}

/** The one own member a `tools/call` request's params may hold besides `name` on the direct servers' short path. */
const ARGUMENTS = 'arguments';

/**
 * True when `params` is the plain shape of a `tools/call` (`name` a string, `arguments` absent or a JSON object,
 * nothing else: no `_meta`, no `task`), whose parse by the SDK's `CallToolRequestSchema` cannot fail and gives the
 * same name and arguments (a record's own members, copied; `__proto__` is left to the SDK's parse, which does not
 * copy it as an own member).
 */
function isPlainToolCall(params: unknown): params is { name: string; arguments?: Record<string, unknown> } {
  if (!params || typeof params !== 'object' || Array.isArray(params)) return false;
  for (const k in params) if (k !== 'name' && k !== ARGUMENTS) return false;
  const p = params as { name?: unknown; arguments?: unknown };
  if (typeof p.name !== 'string') return false;
  const a = p.arguments;
  if (a === undefined) return true;
  if (!a || typeof a !== 'object' || Array.isArray(a) || Object.getPrototypeOf(a) !== Object.prototype) return false;
  return !Object.hasOwn(a, '__proto__');
}

/** The SDK's "no handler" answer (Protocol answers `Method not found`, -32601, with no data). */
function methodNotFound(): Error {
  return Object.assign(new Error('Method not found'), { code: ErrorCode.MethodNotFound });
}

/**
 * The `tools/call` handler of a direct server (`McpDirectPool`), installed as the SDK `Protocol`'s public
 * `fallbackRequestHandler` rather than through `Server.setRequestHandler`, whose `tools/call` wrapper parses each
 * request twice (`CallToolRequestSchema`, once by `Protocol` and once by `Server`) and copies the result the
 * handler built through `CallToolResultSchema` (issue 22: about 40 µs and 6 KB a call, measured in process). A
 * plain call (`isPlainToolCall`) is answered from its params as they are, with the result built in the member
 * order that parse gives; any other `tools/call` goes through the SDK's own schemas and the steps of its wrapper,
 * in its order, with its messages (the same `safeParse` the SDK calls, so the same errors); any other method not
 * registered answers as `Protocol` does without a handler. test/mcp/output-contract.test.ts pins every case
 * byte for byte against a server built the SDK's way.
 */
function directToolCall(slot: ServerSlot): NonNullable<Server['fallbackRequestHandler']> {
  return async (request) => {
    if (request.method !== 'tools/call') throw methodNotFound();
    if (isPlainToolCall(request.params)) return runToolCall(slot, request.params.name, request.params.arguments);
    // Protocol's parse of the request (it throws the parse error, answered as -32603 with its message) ...
    const parsed = sdkSafeParse(CallToolRequestSchema, request);
    if (!parsed.success) throw parsed.error;
    // ... then Server's tools/call wrapper: its request check, the handler, its result check.
    const validated = sdkSafeParse(CallToolRequestSchema, parsed.data);
    if (!validated.success) throw new McpError(ErrorCode.InvalidParams, `Invalid tools/call request: ${errorText(validated.error)}`);
    const result = await runToolCall(slot, validated.data.params.name, parsed.data.params.arguments);
    if (validated.data.params.task) {
      const task = sdkSafeParse(CreateTaskResultSchema, result);
      if (!task.success) throw new McpError(ErrorCode.InvalidParams, `Invalid task creation result: ${errorText(task.error)}`);
      return task.data;
    }
    const checked = sdkSafeParse(CallToolResultSchema, result);
    if (!checked.success) throw new McpError(ErrorCode.InvalidParams, `Invalid tools/call result: ${errorText(checked.error)}`);
    return checked.data;
  };
}

/**
 * The answer to a plain `tools/call` (`isPlainToolCall`) of the direct path, built as the SDK's `Protocol` builds
 * the answer of a request (`_onrequest` in shared/protocol.js: `{ result, jsonrpc, id }`, or for a rejected handler
 * `{ jsonrpc, id, error: { code, message, data? } }` with -32603 when the error has no integer code) around what a
 * direct server's handler answers it with (`directToolCall`'s plain branch, `runToolCall`), without handing it to a
 * server. `Protocol` adds nothing else to such a request's answer: no task (no `task` member), no related task (no
 * `_meta`), and the request is never cancelled (its server would have to be closed mid-request). What it does per
 * request and this skips (issue 22, the MCP tools' warm p99 at full scale): the message's type guards, two of them
 * failing zod parses for a request (`isJSONRPCResultResponse`, `isJSONRPCErrorResponse`), and an `AbortController`.
 * Each failing zod parse returns an object literal with its own `error` getter, which gets a hidden class of its
 * own (allocated in the old generation), and Node's AbortSignal survives a young collection likewise: together about
 * 1.2 KB of every call was promoted to the old generation (--trace-gc-nvp, 100,000 calls in process: 1,661 B a call
 * through `deliver`, 3 B without the guards and the controller), so each scavenge copied 4-5 MB and paused 15-25 ms
 * on the full-scale server. test/mcp/output-contract.test.ts compares it with both kinds of server byte for byte.
 */
export async function answerPlainToolCall(
  slot: ServerSlot,
  request: JSONRPCRequest & { params: { name: string; arguments?: Record<string, unknown> } },
): Promise<JSONRPCResultResponse | JSONRPCErrorResponse> {
  try {
    const result = await runToolCall(slot, request.params.name, request.params.arguments);
    return { result, jsonrpc: '2.0', id: request.id } as JSONRPCResultResponse;
  } catch (e) {
    const err = e as { code?: unknown; message?: string; data?: unknown };
    const error: { code: number; message: string; data?: unknown } = {
      code: Number.isSafeInteger(err.code) ? (err.code as number) : ErrorCode.InternalError,
      message: err.message ?? 'Internal error',
    };
    if (err.data !== undefined) error.data = err.data;
    return { jsonrpc: '2.0', id: request.id, error };
  }
}

/** True for a request of the direct path that `answerPlainToolCall` answers (a plain `tools/call`). */
export function isPlainToolCallRequest(
  request: JSONRPCRequest,
): request is JSONRPCRequest & { params: { name: string; arguments?: Record<string, unknown> } } {
  return request.method === 'tools/call' && isPlainToolCall(request.params);
}

/** How the SDK's tools/call wrapper words a parse error. */
function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Builds an MCP server: every tool of the registry (mcp.queries.ts), the resources and the prompts; handlers read
 * the request's context from `slot`. `direct`: a server of the direct pool, whose `tools/call` is `directToolCall`.
 */
export function buildMcpServer(slot: ServerSlot, version: string, options: { direct?: boolean } = {}): Server {
  serversBuilt++;
  const server = new Server(
    { name: 'proofline', title: 'Proofline', version },
    { capabilities: { tools: {}, resources: {}, prompts: {} }, instructions: SERVER_INSTRUCTIONS, jsonSchemaValidator },
  );
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: toolList }));
  if (options.direct) server.fallbackRequestHandler = directToolCall(slot);
  else server.setRequestHandler(CallToolRequestSchema, async (req) => runToolCall(slot, req.params.name, req.params.arguments));
  server.setRequestHandler(ListResourcesRequestSchema, async () => ({ resources: RESOURCES }));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({ resourceTemplates: RESOURCE_TEMPLATES }));
  server.setRequestHandler(ReadResourceRequestSchema, async (req) => {
    try {
      return await readResource(slot.ctx, req.params.uri);
    } catch (e) {
      if (e instanceof McpError) throw e;
      throw new McpError(e instanceof PipelineError && e.kind === 'not_found' ? -32002 : ErrorCode.InvalidParams, publicMessage(e), {
        uri: req.params.uri,
      });
    }
  });
  server.setRequestHandler(ListPromptsRequestSchema, async () => ({ prompts: PROMPTS }));
  server.setRequestHandler(GetPromptRequestSchema, async (req) => getPrompt(req.params.name, req.params.arguments));
  return server;
}

/** How many idle servers a process keeps (more are built when more requests run at once, and dropped after). */
export const MCP_SERVER_POOL_SIZE = 32;

/**
 * The servers of one app, reused across requests. The SDK's `Protocol` serves one transport at a time (`connect`
 * throws while one is attached; `close` detaches it, aborts what is in flight and drops every pending correlation),
 * and a stateless transport serves one request (webStandardStreamableHttp.js: "Create a new transport per request").
 * So each request that needs the transport (`directRequestOf` is undefined for it: initialize, notifications, what
 * the transport answers itself) takes an idle server (or builds one), connects it to its own new transport, and gives it back
 * once the transport is closed: two requests in flight never share a server, ids never meet. What a server keeps
 * between requests: its handlers (the same for all), and the client capabilities of the last `initialize` it
 * answered, which the SDK reads only before the server sends a request to the client (sampling, elicitation,
 * roots), which this server never does.
 */
export class McpServerPool {
  private readonly idle: Array<{ server: Server; slot: ServerSlot }> = [];
  constructor(private readonly version: string) {}

  acquire(ctx: ToolContext): { server: Server; slot: ServerSlot } {
    const got = this.idle.pop();
    if (got) {
      got.slot.ctx = ctx;
      return got;
    }
    const slot: ServerSlot = { ctx };
    return { server: buildMcpServer(slot, this.version), slot };
  }

  release(s: { server: Server; slot: ServerSlot }): void {
    // Only a detached server goes back (a transport whose close failed leaves it attached: it is dropped).
    if (s.server.transport !== undefined || this.idle.length >= MCP_SERVER_POOL_SIZE) return;
    clearSlot(s.slot);
    this.idle.push(s);
  }
}

/** The context of an idle server: no request, so nothing to answer from. */
const RELEASED = { deps: undefined, apiKey: null } as unknown as ToolContext;

/** Empties the slot of a server going back to its pool: no request, and no answer of the last one kept. */
function clearSlot(slot: ServerSlot): void {
  slot.ctx = RELEASED;
  slot.structured = undefined;
  slot.structuredText = undefined;
}

/**
 * A transport (the SDK's `Transport` interface) that stays connected to one server and carries one request at a
 * time, for the requests whose every check the Streamable HTTP transport would pass (`directRequestOf`): the
 * request is handed to the server's `Protocol` as that transport hands it (`onmessage`, the message as its
 * `JSONRPCMessageSchema` parse returns it) and the answer is taken where `Protocol` sends it, as `takeAnswer` does.
 * What it saves per request (issue 22: an MCP call allocated ~92 KB against 35 KB for its REST twin): a transport,
 * the server's connect and close (the close builds an McpError with a stack trace), the transport's request
 * bookkeeping (headers copied to an object, a URL, a UUID, stream maps) and two failing `InitializeRequestSchema`
 * parses. Messages that are not an answer (notifications a handler sends about its request) are dropped, as the
 * Streamable HTTP transport drops them in JSON-response mode (no stream to write them to).
 */
export class DirectTransport implements Transport {
  onmessage?: Transport['onmessage'];
  onclose?: () => void;
  onerror?: (error: Error) => void;
  private answer: ((m: JSONRPCResultResponse | JSONRPCErrorResponse) => void) | undefined;

  async start(): Promise<void> {}

  async close(): Promise<void> {
    this.onclose?.();
  }

  async send(message: JSONRPCMessage): Promise<void> {
    // An answer: an id and a result or an error (as in takeAnswer).
    if ('id' in message && ('result' in message || 'error' in message)) {
      const answer = this.answer;
      this.answer = undefined;
      answer?.(message as JSONRPCResultResponse | JSONRPCErrorResponse);
    }
  }

  /** Hands `request` to the connected server; resolves with its answer. One request at a time. */
  deliver(request: JSONRPCRequest): Promise<JSONRPCResultResponse | JSONRPCErrorResponse> {
    return new Promise((resolve) => {
      this.answer = resolve;
      this.onmessage!(request);
    });
  }
}

interface DirectServer {
  server: Server;
  slot: ServerSlot;
  transport: DirectTransport;
}

/** The servers of one app connected to their own `DirectTransport`, reused across requests, one request at a time. */
export class McpDirectPool {
  private readonly idle: DirectServer[] = [];
  constructor(private readonly version: string) {}

  async acquire(ctx: ToolContext): Promise<DirectServer> {
    const got = this.idle.pop();
    if (got) {
      got.slot.ctx = ctx;
      return got;
    }
    const slot: ServerSlot = { ctx };
    const server = buildMcpServer(slot, this.version, { direct: true });
    const transport = new DirectTransport();
    await server.connect(transport);
    return { server, slot, transport };
  }

  release(s: DirectServer): void {
    if (this.idle.length >= MCP_SERVER_POOL_SIZE) return;
    clearSlot(s.slot);
    this.idle.push(s);
  }
}

/**
 * The request of a POST when the Streamable HTTP transport would pass it to its server unchanged, else undefined
 * (the request then goes through that transport, which gives every other answer: 406, 415, 400, 202, initialize).
 * The checks are that transport's own, in its order (webStandardStreamableHttp.js, handlePostRequest, stateless,
 * one message per POST): Accept lists both application/json and text/event-stream (substring, as it does); the
 * Content-Type's media type is JSON (its `isJsonContentType`); the message parses as a JSON-RPC request
 * (`JSONRPCMessageSchema` is a union whose first member is `JSONRPCRequestSchema`, and a zod union returns the
 * first member that parses, so this is the value its parse returns); it is not `initialize` (that request needs
 * no protocol version header and sets up the server: it keeps the transport's path); and an MCP-Protocol-Version
 * header, if any, is a supported version.
 */
export function directRequestOf(headers: Headers, body: unknown): JSONRPCRequest | undefined {
  if (!body || typeof body !== 'object' || (body as { method?: unknown }).method === 'initialize' || !('id' in body)) return undefined;
  const accept = headers.get('accept');
  if (!accept?.includes('application/json') || !accept.includes('text/event-stream')) return undefined;
  if (!isJsonContentType(headers.get('content-type'))) return undefined;
  const version = headers.get('mcp-protocol-version');
  if (version !== null && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) return undefined;
  if (isPlainRequest(body)) return body;
  const parsed = JSONRPCRequestSchema.safeParse(body);
  return parsed.success ? (parsed.data as JSONRPCRequest) : undefined;
}

/**
 * True for the plain shape of a JSON-RPC request, which `JSONRPCRequestSchema` accepts and gives back member for
 * member (its parse copies it: the same values, no member added): only `jsonrpc` "2.0", `id` a string or a safe
 * integer, `method` a string and `params` absent or a JSON object without `_meta`. The request is then handed on
 * as it is, not copied (issue 22: a zod parse per call); anything else is parsed by the SDK's schema as before.
 */
function isPlainRequest(body: object): body is JSONRPCRequest {
  for (const k in body) if (k !== 'jsonrpc' && k !== 'id' && k !== 'method' && k !== 'params') return false;
  const m = body as { jsonrpc?: unknown; id?: unknown; method?: unknown; params?: unknown };
  if (m.jsonrpc !== '2.0' || typeof m.method !== 'string') return false;
  if (typeof m.id !== 'string' && !Number.isSafeInteger(m.id)) return false;
  const p = m.params;
  if (p === undefined) return !Object.hasOwn(body, 'params');
  if (!p || typeof p !== 'object' || Array.isArray(p) || Object.getPrototypeOf(p) !== Object.prototype) return false;
  return !Object.hasOwn(p, '_meta') && !Object.hasOwn(p, '__proto__');
}

/**
 * The one mapping of the error tree (lib/errors.ts) onto MCP: every failure
 * of a tool is a tool error (`isError: true`) whose text is the public message
 * plus the details a client needs (`context.response`, e.g. the balance of a
 * 402); unexpected errors say only "internal error".
 */
export function toolErrorOf(toolName: string, e: unknown): { content: Array<{ type: 'text'; text: string }>; isError: true } {
  const ctxResp = e instanceof PipelineError ? (e.context.response as Record<string, unknown> | undefined) : undefined;
  const detail = ctxResp && Object.keys(ctxResp).length ? ` ${JSON.stringify(ctxResp)}` : '';
  // In the member order of the SDK's CallToolResultSchema parse (runToolCall).
  return { content: [{ type: 'text' as const, text: `${toolName} failed: ${publicMessage(e)}${detail}` }], isError: true };
}

function rpcError(status: number, code: number, message: string, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }), {
    status,
    headers: { 'content-type': 'application/json', ...headers },
  });
}

export function registerMcpRoutes(app: H3, deps: ServiceDeps): void {
  const pool = new McpServerPool(deps.options.version);
  const direct = new McpDirectPool(deps.options.version);
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
      const text = await readBodyText(req, MCP_BODY_LIMIT).catch((e: unknown) => e as Error);
      if (text instanceof Error)
        return rpcError(httpStatusFor(text), -32600, `Invalid Request: ${text.message}`, { ...cors, connection: 'close' });
      try {
        body = JSON.parse(text);
      } catch {
        return rpcError(400, -32700, 'Parse error: the body is not valid JSON', cors);
      }
      const problem = findJsonProblem(text);
      if (problem) return rpcError(400, -32602, `Invalid params: '${problem.path}': ${problem.problem}`, cors);
      if (Array.isArray(body))
        return rpcError(400, -32600, 'Invalid Request: JSON-RPC batches are not supported (MCP 2025-06-18 and later)', cors);
      if (body && typeof body === 'object' && !('method' in body) && !('result' in body) && !('error' in body))
        return rpcError(400, -32600, 'Invalid Request: missing method', cors);
    }
    const gate = await meterMcpCall(deps, event, body, cors); // one metering rule for every door (mcp.metering.ts)
    if (gate && 'refused' in gate) return gate.refused;
    const ctx: ToolContext = { deps, apiKey: creditKeyOf(event) };
    let limits: Record<string, string> | undefined;
    if (gate) for (const [k, v] of Object.entries(gate.counted.headers)) if (k.startsWith('ratelimit-')) (limits ??= {})[k] = v;
    const request = body === undefined ? undefined : directRequestOf(req.headers, body);
    if (request && isPlainToolCallRequest(request)) {
      // The most common case, a plain tools/call: answered as the direct server would answer it, without the SDK's
      // per-request dispatch (answerPlainToolCall).
      const slot: ServerSlot = { ctx };
      return finishAnswer(await answerPlainToolCall(slot, request), slot, gate, limits, cors);
    }
    if (request) {
      // Any other request the Streamable HTTP transport would pass on unchanged: a pooled server that stays
      // connected to its DirectTransport.
      const held = await direct.acquire(ctx);
      try {
        const answer = await held.transport.deliver(request);
        return finishAnswer(answer, held.slot, gate, limits, cors);
      } finally {
        // Given back once the server's own bookkeeping of the request has settled (the SDK forgets the request's
        // abort controller in a `finally` after `send`).
        setImmediate(() => direct.release(held));
      }
    }
    const pooled = pool.acquire(ctx);
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    await pooled.server.connect(transport);
    const answer = takeAnswer(transport);
    try {
      const res = await Promise.race([transport.handleRequest(req, body === undefined ? undefined : { parsedBody: body }), answer]);
      if (res instanceof Response) {
        // The transport's own answer (406, 415, 400 for a bad envelope or protocol version, 202 for notifications):
        // its headers are mutable, the limit headers and CORS are set in place.
        for (const [k, v] of Object.entries({ ...limits, ...cors })) res.headers.set(k, v);
        return res;
      }
      return finishAnswer(res, pooled.slot, gate, limits, cors);
    } finally {
      // Closed once the handler's own bookkeeping has settled (the SDK forgets the request's abort controller in a
      // `finally` after `send`): closing earlier would abort a finished request, for nothing, at some cost.
      setImmediate(() => {
        closeTransport(transport).then(
          () => pool.release(pooled),
          (err: unknown) => deps.log.warn({ err }, 'MCP transport close failed; its server is dropped'),
        );
      });
    }
  });
}

/** The HTTP answer of a JSON-RPC answer: usage in the result's `_meta`, the limit headers, CORS, the JSON written once. */
function finishAnswer(
  message: JSONRPCResultResponse | JSONRPCErrorResponse,
  slot: ServerSlot,
  gate: Awaited<ReturnType<typeof meterMcpCall>>,
  limits: Record<string, string> | undefined,
  cors: Record<string, string>,
): Response {
  if (gate && 'counted' in gate) addUsageMeta(message, gate.counted.usage);
  return toFastResponse({
    status: 200,
    headers: { 'content-type': 'application/json', ...limits, ...cors },
    body: answerText(message, slot),
  });
}

/**
 * Closes a per-request transport. Closing detaches its server, whose `Protocol` then builds an McpError
 * ("Connection closed") for the requests it was waiting on from the client; this server sends none, so the error
 * is never read, and its stack trace (about 2% of the CPU of a call, issue 22) is not captured: the close runs
 * synchronously up to that point (close and Protocol's onclose have no await), under a stack trace limit of 0,
 * restored before anything else runs.
 */
function closeTransport(transport: WebStandardStreamableHTTPServerTransport): Promise<void> {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return transport.close();
  } finally {
    Error.stackTraceLimit = limit;
  }
}

/** The place-holders of `structuredContent` and of the text content while an answer is serialised (strings no tool answer is: they hold NULs). */
const STRUCTURED_MARK = '\u0000proofline:structuredContent\u0000';
const TEXT_MARK = '\u0000proofline:text\u0000';
const STRUCTURED_MEMBER = '"structuredContent":';
const TEXT_MEMBER = '"text":';
const STRUCTURED_MARK_JSON = `${STRUCTURED_MEMBER}${JSON.stringify(STRUCTURED_MARK)}`;
const TEXT_MARK_JSON = `${TEXT_MEMBER}${JSON.stringify(TEXT_MARK)}`;

/**
 * The JSON of an answer, as text or as its UTF-8 bytes. A tool result carries its structured content twice, as
 * `structuredContent` and as its JSON in the text content (for clients without structured output); that JSON was
 * made once by the tool handler, and is used again here, for both, instead of serialising the same object a second
 * time and the text a third. It is used only when the result still holds that very object's members (the SDK's
 * result check copies the object, not its members) and that text, otherwise the answer is serialised as it is.
 *
 * The answer is serialised with both replaced by place-holders (a small skeleton: id, `_meta`, the content's type),
 * and written as bytes: the skeleton's parts around the place-holders, the structured JSON as the member's value,
 * and `JSON.stringify(text)` as the text's value, which is exactly what `JSON.stringify(message)` writes for that
 * member. The text is `JSON.stringify` output, which holds no control character and no lone surrogate (both are
 * escaped in it), so `JSON.stringify(text)` only adds a backslash before each `"` and `\` and the two quotes: its
 * UTF-8 length is the text's plus the characters added. Each member name is found outside any string: inside a
 * JSON string every quote is escaped, so `"text":"` and `"structuredContent":"` followed by a place-holder are the
 * result's own members (issue 22: the joined strings this replaces, the escaped text and the whole answer,
 * flattened to be measured and written, were the largest allocations of a call; the escaping and the UTF-8
 * copies are native (`JSON.stringify`, `Buffer.write`): the byte loops over the answer they replace cost half the
 * CPU of this function, 482 against 244 µs for a 77 KB answer, for the same number of young collections).
 */
export function answerText(message: JSONRPCResultResponse | JSONRPCErrorResponse, slot: ServerSlot): string | Uint8Array {
  const result = (message as { result?: { structuredContent?: Record<string, unknown>; content?: Array<{ text?: unknown }> } }).result;
  const structured = slot.structured;
  const text = slot.structuredText;
  const sc = result?.structuredContent;
  const first = result?.content?.[0];
  if (!result || !sc || !structured || text === undefined || !first || first.text !== text || !sameMembers(sc, structured))
    return JSON.stringify(message);
  result.structuredContent = STRUCTURED_MARK as unknown as Record<string, unknown>;
  first.text = TEXT_MARK;
  let json: string;
  try {
    json = JSON.stringify(message);
  } finally {
    result.structuredContent = sc;
    first.text = text;
  }
  const atStructured = json.indexOf(STRUCTURED_MARK_JSON);
  const atText = json.indexOf(TEXT_MARK_JSON);
  if (atStructured < 0 || atText < 0) return JSON.stringify(message);
  // The text as a JSON string: exactly what JSON.stringify(message) writes for that member.
  const escaped = JSON.stringify(text);
  // The skeleton's parts: before the first place-holder's value, between the two, after the second.
  const textFirst = atText < atStructured;
  const [at1, member1, mark1, at2, member2, mark2] = textFirst
    ? [atText, TEXT_MEMBER, TEXT_MARK_JSON, atStructured, STRUCTURED_MEMBER, STRUCTURED_MARK_JSON]
    : [atStructured, STRUCTURED_MEMBER, STRUCTURED_MARK_JSON, atText, TEXT_MEMBER, TEXT_MARK_JSON];
  const head = json.slice(0, at1 + member1.length);
  const middle = json.slice(at1 + mark1.length, at2 + member2.length);
  const tail = json.slice(at2 + mark2.length);
  const [value1, value2] = textFirst ? [escaped, text] : [text, escaped];
  // The escaped text's UTF-8 length without a second scan: it is the text's plus one byte per added character
  // (a backslash before each `"` and `\`, and the two quotes), all ASCII.
  const textBytes = Buffer.byteLength(text);
  const valueBytes = 2 * textBytes + escaped.length - text.length;
  // The bytes come from the body slab, or a reused buffer when large, handed back once the node listener wrote them (bytes.ts).
  const view = allocTransientBody(Buffer.byteLength(head) + valueBytes + Buffer.byteLength(middle) + Buffer.byteLength(tail));
  const out = Buffer.from(view.buffer, view.byteOffset, view.byteLength);
  let n = out.write(head, 0);
  n += out.write(value1, n);
  n += out.write(middle, n);
  n += out.write(value2, n);
  n += out.write(tail, n);
  return n === out.length ? view : JSON.stringify(message); // every byte accounted for (a write never overflows silently here)
}

/** True when `a` and `b` have the same own members, in the same order, holding the same values. */
function sameMembers(a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  for (let i = 0; i < ka.length; i++) if (ka[i] !== kb[i] || a[ka[i]!] !== b[kb[i]!]) return false;
  return true;
}

/**
 * The JSON-RPC answer of the one request a stateless transport carries, taken where the SDK's `Protocol` hands it
 * to the transport (`send`, the Transport interface). In JSON-response mode the transport's `send` only collects the
 * answers of the POST and resolves `handleRequest` with `new Response(JSON.stringify(answer))`
 * (webStandardStreamableHttp.js); with one request per POST (batches are refused before the SDK) that answer is
 * exactly this message. Taking it here lets the route write it once, as a finished answer the node listener ends
 * in one write, instead of building a web Response whose body stream is read back. Messages that are not an
 * answer (notifications a handler sends) go to the transport as before. The transport's pending `handleRequest`
 * promise is dropped when the transport is closed (close clears its stream map), so nothing is left behind.
 */
function takeAnswer(transport: WebStandardStreamableHTTPServerTransport): Promise<JSONRPCResultResponse | JSONRPCErrorResponse> {
  return new Promise((resolve) => {
    const send = transport.send.bind(transport);
    transport.send = async (message, options) => {
      // An answer: an id and a result or an error (the SDK's own guards are zod parses of the whole answer).
      if ('id' in message && ('result' in message || 'error' in message)) resolve(message as JSONRPCResultResponse | JSONRPCErrorResponse);
      else await send(message, options);
    };
  });
}
