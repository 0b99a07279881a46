import type { EntityManager } from '@mikro-orm/postgresql';
import { WorkflowMcpServerSchema, WorkflowSchema, type WorkflowMcpServer, type WorkflowMcpTool } from '../../db/entities';
import { recordAudit } from '../kernel/audit';
import { conflict, invalidInput, notFound } from '../kernel/errors';
import { newWorkspaceRow } from '../kernel/workspaceScope';
import type { WorkspacePrincipal } from '../kernel/principal';
import { requireCompilableSchema } from './inputSchemas';

export interface CreateMcpServerInput {
  name: string;
  slug: string;
  tools: Array<{ workflowId: string; name?: string; description?: string; inputSchema?: Record<string, unknown> }>;
}

export const MCP_SERVER_NOT_FOUND = 'MCP server not found';

/** A tool name derived from a workflow name: lowercase letters, digits and `_`. */
export function toolNameFor(name: string): string {
  const base = name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, 64);
  return base || 'workflow';
}

export type McpServerView = Pick<WorkflowMcpServer, 'id' | 'workspaceId' | 'name' | 'slug' | 'tools' | 'createdAt' | 'updatedAt'>;

const view = (s: WorkflowMcpServer): McpServerView => ({
  id: s.id,
  workspaceId: s.workspaceId,
  name: s.name,
  slug: s.slug,
  tools: s.tools,
  createdAt: s.createdAt,
  updatedAt: s.updatedAt,
});

/** Stores a server exposing workflows of the workspace as tools; slugs are unique per workspace. */
export async function createMcpServer(
  em: EntityManager,
  principal: WorkspacePrincipal,
  input: CreateMcpServerInput,
): Promise<McpServerView> {
  if (await em.findOne(WorkflowMcpServerSchema, { workspaceId: principal.workspaceId, slug: input.slug })) {
    throw conflict(`An MCP server with slug "${input.slug}" already exists in this workspace.`);
  }
  const workflows = await em.find(WorkflowSchema, {
    workspaceId: principal.workspaceId,
    id: { $in: input.tools.map((t) => t.workflowId) },
  });
  const byId = new Map(workflows.map((w) => [w.id, w]));
  const tools: WorkflowMcpTool[] = input.tools.map((t) => {
    const wf = byId.get(t.workflowId);
    if (!wf) throw invalidInput(`Workflow ${t.workflowId} is not a workflow of this workspace.`);
    return {
      workflowId: wf.id,
      name: t.name ?? toolNameFor(wf.name),
      description: t.description ?? (wf.description || wf.name),
      inputSchema: t.inputSchema ?? null,
    };
  });
  // Calls are checked against a declared schema, so one that cannot check anything is refused now.
  for (const [i, t] of input.tools.entries()) if (t.inputSchema) await requireCompilableSchema(t.inputSchema, `tools[${i}].inputSchema`);
  const names = tools.map((t) => t.name);
  const dup = names.find((n, i) => names.indexOf(n) !== i);
  if (dup) throw invalidInput(`Tool name "${dup}" is used twice; give the tools distinct names.`);
  const server = em.create(WorkflowMcpServerSchema, {
    ...newWorkspaceRow('mcps', principal.workspaceId),
    name: input.name,
    slug: input.slug,
    tools,
    createdById: principal.userId,
  });
  recordAudit(em, principal, {
    action: 'workflow_mcp_server.create',
    severity: 'info',
    workspaceId: principal.workspaceId,
    targetType: 'workflow_mcp_server',
    targetId: server.id,
  });
  await em.flush();
  return view(server);
}

export async function listMcpServers(em: EntityManager, principal: WorkspacePrincipal): Promise<McpServerView[]> {
  const rows = await em.find(
    WorkflowMcpServerSchema,
    { workspaceId: principal.workspaceId },
    { orderBy: { createdAt: 'desc', id: 'desc' } },
  );
  return rows.map(view);
}

export async function deleteMcpServer(em: EntityManager, principal: WorkspacePrincipal, id: string): Promise<void> {
  const server = await em.findOne(WorkflowMcpServerSchema, { id, workspaceId: principal.workspaceId });
  if (!server) throw notFound(MCP_SERVER_NOT_FOUND);
  recordAudit(em, principal, {
    action: 'workflow_mcp_server.delete',
    severity: 'warning',
    workspaceId: principal.workspaceId,
    targetType: 'workflow_mcp_server',
    targetId: server.id,
  });
  em.remove(server);
  await em.flush();
}
