/**
 * The tools a command job's agent may use. Each runs through the workspace's own services with
 * the job creator's live role; side-effect tools (`sideEffects: true`) make the plan wait for a
 * confirmation. `run_workflow` is special (`kind: 'run'`): the job workflow runs it as a child
 * workflow run, so only its preparation and its outcome pass through here.
 *
 * Research and skills are pluggable (`CommandPluggableTools`): their areas are built elsewhere;
 * a tool whose implementation is not plugged in is not offered to the model.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { MembershipSchema, WorkflowSchema, type CommandCitation, type CommandJobRow } from '../../db/entities';
import { withConfigDefaults } from '../../engine/nodes';
import type { WorkflowGraph } from '../../engine/types';
import type { BlobStore } from '../kernel/blobs';
import { runQuery, type QuerySettings } from '../databases';
import { forbidden, invalidInput } from '../kernel/errors';
import { openDownload } from '../files';
import { searchKnowledge } from '../knowledge';
import type { ChatToolDefinition } from '../models/chat';
import type { WorkspacePrincipal } from '../kernel/principal';
import { canWrite } from '../kernel/principal';
import { writeRunRow } from '../runs';
import { sha256Hex } from '../kernel/ids';
import { knowledgeBaseNames } from './store';
import { listWorkflows, runnableActiveVersion } from '../workflows';

/** Research and skills, plugged in by their areas once they exist. */
export interface CommandPluggableTools {
  research?: { start(ctx: CommandToolContext, args: { query: string; sourceUrls: string[] }): Promise<{ runId: string; status: string }> };
  skills?: {
    load(ctx: CommandToolContext, args: { skillIds: string[] }): Promise<Array<{ id: string; name: string; instructions: string }>>;
  };
}

export interface CommandToolDeps {
  blobs?: BlobStore;
  databaseQuery: QuerySettings;
  pluggable?: CommandPluggableTools;
}

export interface CommandToolContext {
  em: EntityManager;
  job: CommandJobRow;
  principal: WorkspacePrincipal;
  deps: CommandToolDeps;
}

export interface ToolOutcome {
  output: unknown;
  citations?: CommandCitation[];
  ragMode?: 'keyword' | 'hybrid';
}

export interface CommandTool {
  definition: ChatToolDefinition;
  sideEffects: boolean;
  kind: 'activity' | 'run';
  available?(deps: CommandToolDeps): boolean;
  execute?(ctx: CommandToolContext, args: Record<string, unknown>): Promise<ToolOutcome>;
}

const str = (v: unknown, what: string): string => {
  if (typeof v !== 'string' || v.trim() === '') throw invalidInput(`${what} must be a non-empty string.`);
  return v;
};

const MAX_ATTACHMENT_CHARS = 20_000;

export const COMMAND_TOOLS: Record<string, CommandTool> = {
  list_workflows: {
    sideEffects: false,
    kind: 'activity',
    definition: {
      name: 'list_workflows',
      description: 'List the workflows of the workspace (id, name, status).',
      parameters: { type: 'object', properties: {}, additionalProperties: false },
    },
    async execute(ctx) {
      const workflows = await listWorkflows(ctx.em, ctx.principal);
      return { output: workflows.map((w) => ({ id: w.id, name: w.name, status: w.status })) };
    },
  },
  run_workflow: {
    sideEffects: true,
    kind: 'run',
    definition: {
      name: 'run_workflow',
      description: 'Run a deployed workflow of the workspace with an input and wait for its outcome.',
      parameters: { type: 'object', properties: { workflowId: { type: 'string' }, input: {} }, required: ['workflowId'] },
    },
  },
  search_knowledge: {
    sideEffects: false,
    kind: 'activity',
    definition: {
      name: 'search_knowledge',
      description: 'Search the knowledge bases of the workspace.',
      parameters: {
        type: 'object',
        properties: { query: { type: 'string' }, knowledgeBaseId: { type: 'string' }, limit: { type: 'integer', minimum: 1, maximum: 20 } },
        required: ['query'],
      },
    },
    async execute(ctx, args) {
      const limit = typeof args.limit === 'number' ? Math.min(20, Math.max(1, Math.trunc(args.limit))) : 5;
      // Keyword retrieval: query embeddings go through their own workflow, which an activity does not start.
      const keywordOnly = { configured: false, model: '', embed: async () => [] as number[] };
      const found = await searchKnowledge(ctx.em, keywordOnly, ctx.principal, {
        query: str(args.query, 'query'),
        knowledgeBaseId: typeof args.knowledgeBaseId === 'string' ? args.knowledgeBaseId : undefined,
        limit,
      });
      const names = await knowledgeBaseNames(ctx.em, ctx.job.workspace_id);
      const results = found.results.map((r) => ({
        documentId: r.document.id,
        title: r.document.name,
        knowledgeBaseName: names.get(r.document.knowledgeBaseId) ?? null,
        text: r.chunk.content.slice(0, 2000),
        score: r.score,
      }));
      const seen = new Set<string>();
      const citations = results
        .filter((r) => !seen.has(r.documentId) && seen.add(r.documentId))
        .map((r) => ({
          documentId: r.documentId,
          title: r.title,
          ...(r.knowledgeBaseName ? { knowledgeBaseName: r.knowledgeBaseName } : {}),
        }));
      return { output: { results }, citations, ragMode: 'keyword' };
    },
  },
  query_database: {
    sideEffects: false,
    kind: 'activity',
    definition: {
      name: 'query_database',
      description: 'Run a read-only SQL SELECT over one user database of the workspace.',
      parameters: {
        type: 'object',
        properties: { databaseId: { type: 'string' }, sql: { type: 'string' } },
        required: ['databaseId', 'sql'],
      },
    },
    async execute(ctx, args) {
      const result = await runQuery(
        ctx.em,
        ctx.job.workspace_id,
        { databaseId: str(args.databaseId, 'databaseId'), sql: str(args.sql, 'sql') },
        ctx.deps.databaseQuery,
      );
      return { output: result };
    },
  },
  read_attachment: {
    sideEffects: false,
    kind: 'activity',
    definition: {
      name: 'read_attachment',
      description: 'Read the text of a file attached to this request.',
      parameters: { type: 'object', properties: { fileId: { type: 'string' } }, required: ['fileId'] },
    },
    available: (deps) => Boolean(deps.blobs),
    async execute(ctx, args) {
      const fileId = str(args.fileId, 'fileId');
      if (!ctx.job.attachments.some((a) => a.id === fileId)) throw invalidInput(`File ${fileId} is not attached to this job.`);
      const download = await openDownload(ctx.em, ctx.deps.blobs!, ctx.principal, fileId);
      const stream = await download.open(null);
      let text = '';
      for await (const chunk of stream as AsyncIterable<Buffer>) {
        text += chunk.toString('utf8');
        if (text.length >= MAX_ATTACHMENT_CHARS) break;
      }
      (stream as { destroy?: () => void }).destroy?.();
      return { output: { fileId, name: download.file.name, text: text.slice(0, MAX_ATTACHMENT_CHARS) } };
    },
  },
  start_research: {
    sideEffects: true,
    kind: 'activity',
    definition: {
      name: 'start_research',
      description: 'Start a durable research run over the web for a question.',
      parameters: {
        type: 'object',
        properties: { query: { type: 'string' }, sourceUrls: { type: 'array', items: { type: 'string' } } },
        required: ['query'],
      },
    },
    available: (deps) => Boolean(deps.pluggable?.research),
    async execute(ctx, args) {
      const run = await ctx.deps.pluggable!.research!.start(ctx, {
        query: str(args.query, 'query'),
        sourceUrls: Array.isArray(args.sourceUrls) ? args.sourceUrls.map(String) : [],
      });
      return { output: run };
    },
  },
  load_skills: {
    sideEffects: false,
    kind: 'activity',
    definition: {
      name: 'load_skills',
      description: 'Load the instructions of workspace skills by id.',
      parameters: { type: 'object', properties: { skillIds: { type: 'array', items: { type: 'string' } } }, required: ['skillIds'] },
    },
    available: (deps) => Boolean(deps.pluggable?.skills),
    async execute(ctx, args) {
      const skills = await ctx.deps.pluggable!.skills!.load(ctx, {
        skillIds: Array.isArray(args.skillIds) ? args.skillIds.map(String) : [],
      });
      return { output: { skills } };
    },
  },
};

/** The tools offered to the model under these dependencies. */
export function offeredTools(deps: CommandToolDeps): CommandTool[] {
  return Object.values(COMMAND_TOOLS).filter((t) => !t.available || t.available(deps));
}

/**
 * The job creator as a principal, with their live role: tools act with the creator's current
 * permissions (a member who left, or was made a viewer, cannot act through an old job).
 */
export async function jobPrincipal(em: EntityManager, job: CommandJobRow): Promise<WorkspacePrincipal> {
  const membership = await em.findOne(MembershipSchema, { workspaceId: job.workspace_id, userId: job.created_by_id });
  if (!membership) throw forbidden('The job creator is no longer a member of the workspace.');
  return {
    kind: 'session',
    sessionId: `command:${job.id}`,
    principalId: `user:${job.created_by_id}`,
    userId: job.created_by_id,
    workspaceId: job.workspace_id,
    role: membership.role,
  };
}

/**
 * Writes the run row of a `run_workflow` action (idempotent: the run id derives from job and
 * action) and returns what the child run needs. Refused (null reason) when the workflow is not
 * the workspace's or may not run now.
 */
export async function prepareWorkflowRun(
  em: EntityManager,
  job: CommandJobRow,
  actionId: string,
  args: Record<string, unknown>,
): Promise<{ runId: string; workflowId: string; name: string; graph: WorkflowGraph; input: unknown } | { refused: string }> {
  const principal = await jobPrincipal(em, job);
  if (!canWrite(principal)) return { refused: 'The job creator may not run workflows.' };
  const workflowId = typeof args.workflowId === 'string' ? args.workflowId : '';
  const workflow = workflowId ? await em.findOne(WorkflowSchema, { id: workflowId, workspaceId: job.workspace_id }) : null;
  if (!workflow) return { refused: `Workflow "${workflowId}" does not exist in this workspace.` };
  const runnable = await runnableActiveVersion(em, workflow);
  if (runnable.kind === 'refused') return { refused: runnable.reason };
  const runId = `run_${sha256Hex(`${job.id}\0${actionId}`).slice(0, 32)}`;
  const input = args.input ?? {};
  await writeRunRow(em, {
    id: runId,
    workflow,
    trigger: 'copilot',
    input,
    versionId: runnable.version.id,
    requestedTarget: 'active',
    createdBy: { keyId: null, userId: job.created_by_id },
  });
  const graph = withConfigDefaults({ nodes: runnable.version.nodes, edges: runnable.version.edges });
  return { runId, workflowId, name: workflow.name, graph, input };
}
