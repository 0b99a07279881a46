import { EntitySchema } from '@mikro-orm/core';

/** One workflow exposed as a tool of a workflow MCP server. */
export interface WorkflowMcpTool {
  workflowId: string;
  /** Tool name clients call (unique in the server). */
  name: string;
  description: string;
  /** Declared input JSON Schema; null derives it from the start node's `config.inputSchema` at listing time. */
  inputSchema: Record<string, unknown> | null;
}

/** A stored workflow MCP server: `GET|POST /api/v1/workflows/mcp/{workspaceId}/{slug}`. */
export interface WorkflowMcpServer {
  id: string;
  workspaceId: string;
  name: string;
  slug: string;
  tools: WorkflowMcpTool[];
  createdById: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export const WorkflowMcpServerSchema = new EntitySchema<WorkflowMcpServer>({
  name: 'WorkflowMcpServer',
  tableName: 'workflow_mcp_servers',
  properties: {
    id: { type: 'string', primary: true },
    workspaceId: { type: 'string', fieldName: 'workspace_id' },
    name: { type: 'string' },
    slug: { type: 'string' },
    tools: { type: 'json' },
    createdById: { type: 'string', fieldName: 'created_by_id', nullable: true },
    createdAt: { type: 'Date', fieldName: 'created_at', columnType: 'timestamptz' },
    updatedAt: { type: 'Date', fieldName: 'updated_at', columnType: 'timestamptz' },
  },
});
