import { z } from 'zod';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { routeGroup, type AnyRoute, ANY_KEY_READ, PUBLIC, SESSION_ADMIN, SESSION_READ, WORKSPACE_ADMIN } from '../http/route';
import { requestOrigin } from '../http/urls';
import { bareAuthErrors, pathId, idParams } from '../schemas';
import { mcpServerWithUrlSchema } from '../schemas/workflowMcp';
import type { AppContext } from '../context';
import type { Access } from '../middleware/auth';
import { bearerToken } from '../../services/accounts/auth';
import { forbidden } from '../../services/kernel/errors';
import { lazyModule } from '../../services/kernel/lazyModule';
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
  };
});

async function mcpServerFor(ctx: AppContext, authority: McpAuthority): Promise<Server> {
  const { Server, CallToolRequestSchema, ListToolsRequestSchema } = await loadMcpSdk();
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
    );
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
const mcpResponses = {
  200: {
    description: 'JSON-RPC 2.0 response (or batch) of the MCP SDK: initialize, tools/list, tools/call results',
    schema: z.union([jsonRpcMessage, z.array(jsonRpcMessage)]),
  },
  403: 'Personal, copilot or gateway key; or a tools/call without execute authority',
  404: "MCP server not found (also outside the key's workspace or selection)",
  405: 'GET: the server is stateless and offers no server-initiated stream',
  default: {
    description:
      'Other MCP Streamable HTTP answers of the SDK (202 without body for notifications, 406/415 for wrong Accept or Content-Type)',
  },
};

/** The MCP endpoint itself: no route access check, `authorizeMcp` decides on every request. */
const mcpRoute = routeGroup({ tags: ['Workflow MCP servers'], family: 'bare', access: PUBLIC, errors: bareAuthErrors });

/**
 * The workflow MCP server: the official SDK's Streamable HTTP transport in stateless mode,
 * one SDK server per request. Authority is decided on every request before the SDK sees it.
 */
async function handleMcp(ctx: AppContext, params: z.output<typeof mcpParams>) {
  const authority = await authorizeMcp(
    ctx.state.em,
    bearerToken(ctx.get('authorization') || undefined),
    params.workspaceId,
    params.serverSlug,
  );
  if (ctx.method === 'GET') {
    return {
      status: 405,
      body: { error: 'This MCP server is stateless: POST JSON-RPC messages; it offers no server-initiated stream.' },
      headers: { Allow: 'POST' },
    };
  }
  const body = ctx.request.body;
  if (!authority.canExecute && callsTool(body)) throw forbidden(MCP_EXECUTE_REQUIRED);
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
    await transport.handleRequest(ctx.req, ctx.res, body);
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
  ...(['post', 'get'] as const).map((method) =>
    mcpRoute({
      method,
      path: MCP_PATH,
      operationId: method === 'post' ? 'workflowMcpPost' : 'workflowMcpGet',
      summary:
        method === 'post'
          ? 'Workflow MCP server (Streamable HTTP, stateless): initialize, tools/list, tools/call'
          : 'Workflow MCP server: authority check, then 405 (no server-initiated stream in stateless mode)',
      params: mcpParams,
      responses: mcpResponses,
      handler: async (ctx, { params }) => handleMcp(ctx, params),
    }),
  ),
];
