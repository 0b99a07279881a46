import { z } from 'zod';
import { timestampFields } from './index';

/** Response schemas of stored workflow MCP servers. */
export const mcpToolSchema = z.strictObject({
  workflowId: z.string(),
  name: z.string(),
  description: z.string(),
  inputSchema: z
    .record(z.string(), z.unknown())
    .nullable()
    .describe("Declared input JSON Schema; null derives it from the start node's config.inputSchema"),
});

export const mcpServerSchema = z
  .strictObject({
    id: z.string(),
    workspaceId: z.string(),
    name: z.string(),
    slug: z.string(),
    tools: z.array(mcpToolSchema),
    ...timestampFields,
  })
  .meta({ id: 'WorkflowMcpServer' });

export const mcpServerWithUrlSchema = z.strictObject({
  server: mcpServerSchema,
  url: z.string().describe('The MCP endpoint clients connect to'),
});
