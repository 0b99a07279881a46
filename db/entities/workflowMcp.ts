import { p, type InferEntity } from '@mikro-orm/core';
import { entity, timestamps, workspaceScoped } from './columns';

/** One workflow exposed as a tool of a workflow MCP server. */
export interface WorkflowMcpTool {
  workflowId: string;
  /** Tool name clients call (unique in the server). */
  name: string;
  description: string;
  /** Declared input JSON Schema; null derives it from the start node's `config.inputSchema` at listing time. */
  inputSchema: Record<string, unknown> | null;
}

export const WorkflowMcpServerSchema = entity('WorkflowMcpServer', 'workflow_mcp_servers', {
  ...workspaceScoped(),
  name: p.string(),
  slug: p.string(),
  tools: p.json<WorkflowMcpTool[]>(),
  createdById: p.string().nullable(),
  ...timestamps(),
});
/** A stored workflow MCP server: `GET|POST /api/v1/workflows/mcp/{workspaceId}/{slug}`. */
export type WorkflowMcpServer = InferEntity<typeof WorkflowMcpServerSchema>;
