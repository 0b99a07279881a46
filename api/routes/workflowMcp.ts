import { z } from 'zod';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { CallToolResult, ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import { bodyParser } from '@koa/bodyparser';
import {
  routeGroup,
  type AnyRoute,
  ANY_KEY_READ,
  MAX_BODY_DEPTH,
  PUBLIC,
  type RouteResult,
  SESSION_ADMIN,
  SESSION_READ,
  WORKSPACE_ADMIN,
} from '../http/route';
import { requestOrigin } from '../http/urls';
import { bareAuthErrors, pathId, idParams } from '../schemas';
import { mcpServerWithUrlSchema } from '../schemas/workflowMcp';
import type { AppContext } from '../context';
import type { Access } from '../middleware/auth';
import { bearerToken } from '../../services/accounts/auth';
import { DomainError, forbidden } from '../../services/kernel/errors';
import { lazyModule } from '../../services/kernel/lazyModule';
import { findUnstorableText } from '../../services/kernel/storableText';
import {
  authorizeMcp,
  callMcpTool,
  createMcpServer,
  deleteMcpServer,
  listMcpServers,
  listMcpTools,
  MCP_EXECUTE_REQUIRED,
  type McpAuthority,
} from '../../services/workflowMcp';

const MCP_PATH = '/api/v1/workflows/mcp/{workspaceId}/{serverSlug}';
const mcpUrl = (ctx: AppContext, workspaceId: string, slug: string) => `${requestOrigin(ctx)}/api/v1/workflows/mcp/${workspaceId}/${slug}`;

const createBody = z
  .object({
    name: z.string().trim().min(1).max(200),
    slug: z
      .string()
      .regex(/^[a-z0-9][a-z0-9-]{0,62}$/, 'slug must be 1-63 lowercase letters, digits or "-", starting with a letter or digit'),
    tools: z
      .array(
        z
          .object({
            workflowId: z.string().min(1),
            name: z
              .string()
              .regex(/^[A-Za-z0-9_-]{1,64}$/, 'tool names are 1-64 letters, digits, "_" or "-"')
              .optional(),
            description: z.string().max(2000).optional(),
            inputSchema: z.record(z.string(), z.unknown()).optional(),
          })
          .strict(),
      )
      .min(1)
      .max(100),
  })
  .strict();

/** Stored servers, under the workspace key (`/api/v1/…`) and the session (`/api/…`). */
function serverRoutesAt(base: string, access: { read: Access; write: Access }, suffix: string, tag: string): AnyRoute[] {
  const serverRoute = routeGroup({ tags: [tag], family: 'bare', access: access.read, errors: bareAuthErrors, pathPrefix: base });
  return [
    serverRoute({
      method: 'get',
      path: '',
      operationId: `listWorkflowMcpServers${suffix}`,
      summary: 'Workflow MCP servers of the workspace, newest first, with their endpoint URLs',
      responses: {
        200: { description: '`{ servers: [{ server, url }] }`', schema: z.strictObject({ servers: z.array(mcpServerWithUrlSchema) }) },
      },
      handler: async (ctx, { principal }) => {
        const servers = await listMcpServers(ctx.state.em, principal!);
        return { status: 200, body: { servers: servers.map((server) => ({ server, url: mcpUrl(ctx, server.workspaceId, server.slug) })) } };
      },
    }),
    serverRoute({
      method: 'post',
      path: '',
      operationId: `createWorkflowMcpServer${suffix}`,
      summary: 'Store a workflow MCP server exposing workflows of the workspace as tools (Admin or Owner)',
      access: access.write,
      body: createBody,
      responses: {
        201: { description: '`{ server, url }`', schema: mcpServerWithUrlSchema },
        409: 'Slug already used in this workspace',
      },
      handler: async (ctx, { principal, body }) => {
        const server = await createMcpServer(ctx.state.em, principal!, body);
        return { status: 201, body: { server, url: mcpUrl(ctx, server.workspaceId, server.slug) } };
      },
    }),
    serverRoute({
      method: 'delete',
      path: '/{id}',
      operationId: `deleteWorkflowMcpServer${suffix}`,
      summary: 'Delete a stored workflow MCP server (Admin or Owner); its endpoint answers 404 at once',
      access: access.write,
      params: idParams,
      responses: {
        200: { description: 'Deleted', schema: z.strictObject({ deleted: z.literal(true) }) },
        404: 'MCP server not found',
      },
      handler: async (ctx, { principal, params }) => {
        await deleteMcpServer(ctx.state.em, principal!, params.id);
        return { status: 200, body: { deleted: true } };
      },
    }),
  ];
}

/** True when a JSON-RPC message (or batch) asks for tools/call. */
function callsTool(body: unknown): boolean {
  const messages = Array.isArray(body) ? body : [body];
  return messages.some((m) => m && typeof m === 'object' && (m as { method?: unknown }).method === 'tools/call');
}

/**
 * A JSON-RPC error a request handler throws: the SDK answers `{ code, message, data }` as they
 * are (its own McpError would prefix the message with "MCP error <code>:", which the client's
 * McpError then prefixes again).
 */
class JsonRpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

/**
 * Service errors of a tool call in JSON-RPC terms, as the MCP spec's tools "Error Handling" has
 * them: an unknown tool and arguments the advertised schema refuses are -32602 Invalid params
 * (with the failing paths in the message and `data.errors`); a broken tool is -32603.
 */
function asJsonRpcError(err: unknown, codes: typeof ErrorCode): unknown {
  if (!(err instanceof DomainError)) return err;
  if (err.kind === 'not_found' || err.kind === 'invalid') return new JsonRpcError(codes.InvalidParams, err.message, err.details);
  if (err.kind === 'internal') return new JsonRpcError(codes.InternalError, err.message);
  return err;
}

/** The MCP SDK (and its ajv), loaded with the first MCP request (services/kernel/lazyModule.ts). */
const loadMcpSdk = lazyModule(async () => {
  const [server, transport, types] = await Promise.all([
    import('@modelcontextprotocol/sdk/server/index.js'),
    import('@modelcontextprotocol/sdk/server/streamableHttp.js'),
    import('@modelcontextprotocol/sdk/types.js'),
  ]);
  return {
    Server: server.Server,
    StreamableHTTPServerTransport: transport.StreamableHTTPServerTransport,
    CallToolRequestSchema: types.CallToolRequestSchema,
    ListToolsRequestSchema: types.ListToolsRequestSchema,
    ErrorCode: types.ErrorCode,
  };
});

async function mcpServerFor(ctx: AppContext, authority: McpAuthority): Promise<Server> {
  const { Server, CallToolRequestSchema, ListToolsRequestSchema, ErrorCode } = await loadMcpSdk();
  const server = new Server(
    { name: `workflows-${authority.server.slug}`, version: '1.0.0' },
    { capabilities: { tools: {} }, instructions: authority.server.name },
  );
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: await listMcpTools(ctx.state.em, authority.server) }));
  server.setRequestHandler(CallToolRequestSchema, async (request): Promise<CallToolResult> => {
    const outcome = await callMcpTool(
      ctx.state.em,
      ctx.deps.services.runs.launcher,
      authority,
      request.params.name,
      request.params.arguments ?? {},
      ctx.deps.config.webhookSyncBudgetMs,
    ).catch((err: unknown) => {
      throw asJsonRpcError(err, ErrorCode);
    });
    const runUrl = (id: string) => `${requestOrigin(ctx)}/api/v1/runs/${id}`;
    switch (outcome.kind) {
      case 'succeeded':
        return {
          content: [{ type: 'text', text: JSON.stringify(outcome.output ?? null) }],
          structuredContent: {
            runId: outcome.runId,
            status: 'succeeded',
            output: outcome.output ?? null,
            links: { run: runUrl(outcome.runId) },
          },
        };
      case 'pending':
        return {
          content: [{ type: 'text', text: `Run ${outcome.runId} is ${outcome.status}; follow it at ${runUrl(outcome.runId)}` }],
          structuredContent: { runId: outcome.runId, status: outcome.status, links: { run: runUrl(outcome.runId) } },
        };
      default:
        return {
          isError: true,
          content: [{ type: 'text', text: outcome.error }],
          structuredContent: {
            runId: outcome.runId,
            status: 'failed',
            error: outcome.error,
            links: outcome.runId ? { run: runUrl(outcome.runId) } : null,
          },
        };
    }
  });
  return server;
}

const mcpParams = z.object({ workspaceId: pathId, serverSlug: z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/, 'Unknown MCP server') });
const jsonRpcMessage = z.looseObject({ jsonrpc: z.literal('2.0'), id: z.union([z.string(), z.number()]).optional() });
const jsonRpcErrorMessage = z.strictObject({
  jsonrpc: z.literal('2.0'),
  id: z.union([z.string(), z.number(), z.null()]),
  error: z.strictObject({ code: z.number().int(), message: z.string(), data: z.unknown().optional() }),
});

/** The only method the endpoint serves; every other one is 405 with this `Allow`, whatever the path's router knows. */
const MCP_ALLOW = 'POST';

const mcpResponses = {
  200: {
    description: 'JSON-RPC 2.0 response (or batch) of the MCP SDK: initialize, tools/list, tools/call results and their JSON-RPC errors',
    schema: z.union([jsonRpcMessage, z.array(jsonRpcMessage)]),
  },
  400: { description: 'JSON-RPC error: -32700 Parse error for a body that is not JSON or not JSON-RPC', schema: jsonRpcErrorMessage },
  403: 'Personal, copilot or gateway key; or a tools/call without execute authority',
  404: "MCP server not found (also outside the key's workspace or selection)",
  405: '`Allow: POST` for every other method (GET, DELETE…): the server is stateless, with no stream to open and no session to end',
  413: { description: 'JSON-RPC error -32600: the body is over BODY_LIMIT', schema: jsonRpcErrorMessage },
  default: {
    description:
      'Other MCP Streamable HTTP answers of the SDK (202 without body for notifications, 406/415 for wrong Accept or Content-Type)',
  },
};

/** The MCP endpoint itself: no route access check, `authorizeMcp` decides on every request. */
const mcpRoute = routeGroup({ tags: ['Workflow MCP servers'], family: 'bare', access: PUBLIC, errors: bareAuthErrors });

const jsonRpcErrorAnswer = (status: number, code: number, message: string, id: string | number | null = null) => ({
  status,
  body: { jsonrpc: '2.0', id, error: { code, message } },
});

/**
 * The request's JSON-RPC body, parsed here rather than by the app's body parser so that a
 * malformed body is answered the protocol's way (400, -32700 Parse error) and not as a REST
 * 400. Same limit as every JSON body (BODY_LIMIT). A body that is not `application/json` is
 * left empty: the SDK answers it 415.
 */
async function readJsonRpcBody(ctx: AppContext): Promise<{ ok: true; body: unknown } | { ok: false; answer: RouteResult }> {
  let failure: { status?: number } | undefined;
  const parse = bodyParser({
    parsedMethods: ['POST'],
    enableTypes: ['json'],
    jsonLimit: ctx.deps.config.bodyLimit,
    encoding: 'utf-8',
    onError: (err) => {
      failure = err as { status?: number };
    },
  });
  await parse(ctx, async () => {});
  const { ErrorCode } = await loadMcpSdk();
  if (failure?.status === 413) {
    return { ok: false, answer: jsonRpcErrorAnswer(413, ErrorCode.InvalidRequest, `Request body exceeds ${ctx.deps.config.bodyLimit}.`) };
  }
  if (failure) return { ok: false, answer: jsonRpcErrorAnswer(400, ErrorCode.ParseError, 'Parse error: Invalid JSON') };
  const body: unknown = ctx.request.body;
  // What the app's parser refuses in any body (api/http/route.ts); the arguments become a run's input.
  const finding = findUnstorableText(body, { root: '', maxDepth: MAX_BODY_DEPTH });
  if (finding) {
    const id = !Array.isArray(body) && body && typeof body === 'object' ? (body as { id?: unknown }).id : undefined;
    const problem =
      finding.problem === 'too deeply nested'
        ? `is nested more than ${MAX_BODY_DEPTH} levels deep`
        : `${finding.problem}; such text cannot be stored`;
    const code = finding.path.startsWith('params.') ? ErrorCode.InvalidParams : ErrorCode.InvalidRequest;
    const answer = jsonRpcErrorAnswer(
      400,
      code,
      `${finding.path || 'the body'} ${problem}`,
      typeof id === 'string' || typeof id === 'number' ? id : null,
    );
    return { ok: false, answer };
  }
  return { ok: true, body };
}

/**
 * The workflow MCP server: the official SDK's Streamable HTTP transport in stateless mode,
 * one SDK server per request. Authority is decided on every request before the SDK sees it,
 * then the body is read: an unauthenticated caller never gets it parsed.
 */
async function handleMcp(ctx: AppContext, params: z.output<typeof mcpParams>): Promise<RouteResult> {
  const authority = await authorizeMcp(
    ctx.state.em,
    bearerToken(ctx.get('authorization') || undefined),
    params.workspaceId,
    params.serverSlug,
  );
  if (ctx.method !== 'POST') {
    return {
      status: 405,
      body: { error: 'This MCP server is stateless: POST JSON-RPC messages; it offers no server-initiated stream and no session to end.' },
      headers: { Allow: MCP_ALLOW },
    };
  }
  const read = await readJsonRpcBody(ctx);
  if (!read.ok) return read.answer;
  if (!authority.canExecute && callsTool(read.body)) throw forbidden(MCP_EXECUTE_REQUIRED);
  const server = await mcpServerFor(ctx, authority);
  const { StreamableHTTPServerTransport } = await loadMcpSdk();
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  await server.connect(transport);
  const finished = new Promise<void>((resolve) => {
    ctx.res.once('finish', resolve);
    ctx.res.once('close', resolve);
  });
  ctx.respond = false;
  try {
    await transport.handleRequest(ctx.req, ctx.res, read.body);
    await finished;
  } finally {
    await transport.close();
    await server.close();
  }
  return { status: ctx.res.statusCode, body: undefined };
}

export const workflowMcpRoutes: AnyRoute[] = [
  ...serverRoutesAt('/api/v1/workflow-mcp-servers', { read: ANY_KEY_READ, write: WORKSPACE_ADMIN }, '', 'Workflow MCP servers'),
  ...serverRoutesAt('/api/workflow-mcp-servers', { read: SESSION_READ, write: SESSION_ADMIN }, 'Session', 'Workflow MCP servers (session)'),
  // Every method is routed (POST serves, the others answer 405 after the authority check), so
  // GET, DELETE and the rest all carry the same `Allow: POST`, not the router's list of routes.
  ...(['post', 'get', 'delete', 'put', 'patch'] as const).map((method) =>
    mcpRoute({
      method,
      path: MCP_PATH,
      operationId: `workflowMcp${method.charAt(0).toUpperCase()}${method.slice(1)}`,
      summary:
        method === 'post'
          ? 'Workflow MCP server (Streamable HTTP, stateless): initialize, tools/list, tools/call'
          : 'Workflow MCP server: authority check, then 405 `Allow: POST` (stateless: no stream, no session)',
      params: mcpParams,
      ...(method === 'post'
        ? { rawBody: { contentType: 'application/json', description: 'A JSON-RPC 2.0 message or batch (at most BODY_LIMIT)' } }
        : {}),
      responses: mcpResponses,
      handler: async (ctx, { params }) => handleMcp(ctx, params),
    }),
  ),
];
