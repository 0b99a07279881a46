/**
 * Workflow MCP servers: stored servers (servers.ts) and the authority, tool listing and tool
 * calls behind `GET|POST /api/v1/workflows/mcp/{workspaceId}/{serverSlug}` (endpoint.ts). The
 * MCP protocol itself (the official SDK, Streamable HTTP, stateless) is wired in
 * api/routes/workflowMcp.ts.
 */
export * from './servers';
export * from './endpoint';
