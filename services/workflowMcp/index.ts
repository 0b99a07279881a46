/**
 * Workflow MCP servers: stored servers (servers.ts) and the authority, tool listing and tool
 * calls behind `GET|POST /api/v1/workflows/mcp/{workspaceId}/{serverSlug}` (endpoint.ts). The
 * MCP protocol itself (the official SDK, Streamable HTTP, stateless) is wired in
 * api/routes/workflowMcp.ts.
 */
export {
  createMcpServer,
  type CreateMcpServerInput,
  deleteMcpServer,
  listMcpServers,
  MCP_SERVER_NOT_FOUND,
  type McpServerView,
  toolNameFor,
} from './servers';
export {
  authorizeMcp,
  callMcpTool,
  listMcpTools,
  MCP_EXECUTE_REQUIRED,
  type McpAuthority,
  type McpToolDescription,
  type McpToolOutcome,
} from './endpoint';
export { type McpInputSchema } from './inputSchemas';
