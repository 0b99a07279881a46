import type { EntityManager } from '@mikro-orm/postgresql';
import {
  MembershipSchema,
  RunSchema,
  WorkflowMcpServerSchema,
  WorkflowSchema,
  type MembershipRole,
  type WorkflowMcpServer,
} from '../../db/entities';
import { verifyApiKey } from '../accounts/auth';
import { AUTH_MESSAGES, forbidden, notFound, unauthenticated } from '../kernel/errors';
import type { RunLauncher } from '../kernel/ports';
import { writeRunRow } from '../runs';
import { runnableActiveVersion } from '../workflows';
import { MCP_SERVER_NOT_FOUND } from './servers';
import { keyReachesWorkspace } from '../accounts/organizations';
import { advertisedInputSchema, checkToolArguments, type McpInputSchema } from './inputSchemas';

export const MCP_EXECUTE_REQUIRED = 'Execute permission is required to call workflow tools.';

/** Who may use a workflow MCP server, decided again on every request (the transport is stateless). */
export interface McpAuthority {
  server: WorkflowMcpServer;
  apiKeyId: string;
  userId: string;
  canExecute: boolean;
}

/**
 * The spec's MCP authority rule. A workspace key must be bound to the server's workspace; an
 * organization key must reach it (the workspace is in the key's organization now, and in its
 * selection). Read authority (initialize, discovery,
 * listing) is any live membership of the key's user in that workspace; execute authority
 * (tool calls) needs a role above viewer and, for organization keys, the `write` permission
 * (the key's permission is a ceiling over the live role). Personal, copilot and end-user
 * gateway keys are refused. Unknown servers, and servers outside the key's reach, are 404.
 */
export async function authorizeMcp(em: EntityManager, bearer: string | null, workspaceId: string, slug: string): Promise<McpAuthority> {
  const key = bearer ? await verifyApiKey(em, bearer) : null;
  if (!key) throw unauthenticated(AUTH_MESSAGES.bearerRequired);
  if (key.scope !== 'workspace' && key.scope !== 'organization') throw forbidden(AUTH_MESSAGES.workspaceKeyRequired);
  let role: MembershipRole | null;
  let ceiling: 'read' | 'write' = 'write';
  if (key.scope === 'workspace') {
    role = key.workspaceId === workspaceId ? key.role : null;
  } else {
    const reaches = await keyReachesWorkspace(em, key.organization, workspaceId);
    const membership = reaches ? await em.findOne(MembershipSchema, { workspaceId, userId: key.userId }) : null;
    role = membership?.role ?? null;
    ceiling = key.organization?.permission ?? 'read';
  }
  const server = role ? await em.findOne(WorkflowMcpServerSchema, { workspaceId, slug }) : null;
  if (!server || !role) throw notFound(MCP_SERVER_NOT_FOUND);
  return { server, apiKeyId: key.apiKeyId, userId: key.userId, canExecute: role !== 'viewer' && ceiling === 'write' };
}

export interface McpToolDescription {
  name: string;
  description: string;
  inputSchema: McpInputSchema;
}

/** The tools of a server, each with the input schema it advertises (`advertisedInputSchema`). */
export async function listMcpTools(em: EntityManager, server: WorkflowMcpServer): Promise<McpToolDescription[]> {
  const workflows = await em.find(WorkflowSchema, {
    workspaceId: server.workspaceId,
    id: { $in: server.tools.map((t) => t.workflowId) },
    trashed: false,
  });
  const byId = new Map(workflows.map((w) => [w.id, w]));
  return server.tools.flatMap((t) => {
    const workflow = byId.get(t.workflowId);
    return workflow ? [{ name: t.name, description: t.description, inputSchema: advertisedInputSchema(t, workflow) }] : [];
  });
}

export type McpToolOutcome =
  | { kind: 'succeeded'; runId: string; output: unknown }
  | { kind: 'failed'; runId: string | null; error: string }
  | { kind: 'pending'; runId: string; status: 'waiting' | 'running' };

/**
 * A tool call: runs the workflow's active version (trigger `api`, recorded like any run) and
 * waits up to `budgetMs` for it. A finished run answers its output (or the Response node's
 * body); a run that reaches a durable wait, or outlasts the budget, answers a run reference.
 * Nothing is written before the call is known good: an unknown tool (or one whose workflow is
 * gone) is `not_found`, arguments the advertised schema refuses are `invalid`
 * (`checkToolArguments`), and neither creates a run.
 */
export async function callMcpTool(
  em: EntityManager,
  launcher: RunLauncher,
  authority: McpAuthority,
  toolName: string,
  args: unknown,
  budgetMs: number,
): Promise<McpToolOutcome> {
  if (!authority.canExecute) throw forbidden(MCP_EXECUTE_REQUIRED);
  const unknown = () => notFound(`Unknown tool "${toolName}".`);
  const tool = authority.server.tools.find((t) => t.name === toolName);
  if (!tool) throw unknown();
  const wf = await em.findOne(WorkflowSchema, { id: tool.workflowId, workspaceId: authority.server.workspaceId });
  // tools/list leaves out tools whose workflow is trashed or gone; a call names none of them.
  if (!wf || wf.trashed) throw unknown();
  await checkToolArguments(tool.name, advertisedInputSchema(tool, wf), args);
  const runnable = await runnableActiveVersion(em, wf);
  if (runnable.kind === 'refused') return { kind: 'failed', runId: null, error: runnable.reason };
  const run = await writeRunRow(em, {
    workflow: wf,
    trigger: 'api',
    input: args ?? {},
    versionId: runnable.version.id,
    requestedTarget: 'active',
    createdBy: { keyId: authority.apiKeyId, userId: authority.userId },
  });
  const reply = await launcher.startWithReply(run, { nodes: runnable.version.nodes, edges: runnable.version.edges }, budgetMs);
  switch (reply.kind) {
    case 'response':
      return { kind: 'succeeded', runId: run.id, output: reply.body };
    case 'waiting':
      return { kind: 'pending', runId: run.id, status: 'waiting' };
    case 'timeout':
      return { kind: 'pending', runId: run.id, status: 'running' };
    case 'failed':
      return { kind: 'failed', runId: run.id, error: reply.error };
    default: {
      const fresh = await em.fork().findOneOrFail(RunSchema, { id: run.id });
      if (fresh.status === 'succeeded') return { kind: 'succeeded', runId: run.id, output: fresh.output };
      return { kind: 'failed', runId: run.id, error: fresh.error ?? `The run ended ${fresh.status}.` };
    }
  }
}
