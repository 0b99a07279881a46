import type { EntityManager } from '@mikro-orm/postgresql';
import { ResumeTokenSchema, RunSchema, TERMINAL_RUN_STATUSES, WorkflowSchema, WorkflowVersionSchema, type RunStatus, type StoredWait } from '../db/entities';
import type { LogRecord, StepRecord } from '../engine/interpreter';
import { withConfigDefaults } from '../engine/nodes';
import type { WorkflowGraph } from '../engine/types';
import { newId, randomToken, sha256Hex } from './ids';

export interface RunProgress {
  runId: string;
  workspaceId: string;
  /** Workflow time of the write (deterministic), used for updated_at. */
  at: string;
  run: {
    status?: RunStatus;
    startedAt?: string;
    finishedAt?: string;
    waits?: StoredWait[];
    output?: unknown;
    error?: string | null;
    errorNodeId?: string | null;
    costCredits?: number;
    cancelReason?: string;
  };
  steps: StepRecord[];
  logs: LogRecord[];
}

const json = (v: unknown) => JSON.stringify(v === undefined ? null : v);

/** Rows per multi-row insert: one round trip per chunk, far below PostgreSQL's 65 535 parameters. */
const ROWS_PER_STATEMENT = 500;

function chunks<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
const TERMINAL_SQL = `('${TERMINAL_RUN_STATUSES.join("','")}')`;

/**
 * Writes a run's progress: step upserts, new logs and run fields, in one transaction.
 * Idempotent, because activities may run again after a crash: steps are keyed by
 * (run, node), logs by (run, seq), and a terminal status is never overwritten by a
 * non-terminal one (the API may already have recorded a cancel).
 */
export async function recordRunProgress(em: EntityManager, p: RunProgress): Promise<void> {
  await em.transactional(async (tx) => {
    const conn = tx.getConnection();
    // Every statement must run on the transaction's connection: one pool connection per write, and atomic.
    const ctx = tx.getTransactionContext();
    // Later records of a node win: one statement cannot upsert the same row twice.
    const steps = [...new Map(p.steps.map((s) => [s.nodeId, s])).values()];
    for (const chunk of chunks(steps, ROWS_PER_STATEMENT)) {
      await conn.execute(
        `insert into run_steps (id, run_id, workspace_id, node_id, node_type, node_name, seq, status, attempts, input, output, error, started_at, finished_at, duration_ms)
         values ${chunk.map(() => '(?, ?, ?, ?, ?, ?, ?, ?, ?, ?::jsonb, ?::jsonb, ?, ?, ?, ?)').join(', ')}
         on conflict (id) do update set
           status = excluded.status, attempts = excluded.attempts, input = excluded.input, output = excluded.output,
           error = excluded.error, started_at = coalesce(run_steps.started_at, excluded.started_at),
           finished_at = excluded.finished_at, duration_ms = excluded.duration_ms`,
        chunk.flatMap((s) => [
          `${p.runId}:${s.nodeId}`, p.runId, p.workspaceId, s.nodeId, s.nodeType, s.nodeName, s.seq, s.status, s.attempts,
          json(s.input), json(s.output), s.error, s.startedAt, s.finishedAt, s.durationMs,
        ]),
        'run',
        ctx,
      );
    }
    for (const chunk of chunks(p.logs, ROWS_PER_STATEMENT)) {
      await conn.execute(
        `insert into run_logs (id, run_id, workspace_id, seq, node_id, level, message, data, created_at)
         values ${chunk.map(() => '(?, ?, ?, ?, ?, ?, ?, ?::jsonb, ?)').join(', ')} on conflict (id) do nothing`,
        chunk.flatMap((l) => [`${p.runId}:${l.seq}`, p.runId, p.workspaceId, l.seq, l.nodeId, l.level, l.message, json(l.data), l.createdAt]),
        'run',
        ctx,
      );
    }
    const sets: string[] = ['updated_at = ?'];
    const params: unknown[] = [p.at];
    const r = p.run;
    if (r.status) {
      sets.push(`status = case when status in ${TERMINAL_SQL} then status else ? end`);
      params.push(r.status);
    }
    if (r.startedAt) {
      sets.push('started_at = coalesce(started_at, ?)');
      params.push(r.startedAt);
    }
    if (r.finishedAt) {
      sets.push('finished_at = coalesce(finished_at, ?)', 'duration_ms = coalesce(duration_ms, (extract(epoch from (?::timestamptz - coalesce(started_at, created_at))) * 1000)::int)');
      params.push(r.finishedAt, r.finishedAt);
    }
    if (r.waits) {
      sets.push('waits = ?::jsonb');
      params.push(json(r.waits));
    }
    if ('output' in r) {
      sets.push('output = ?::jsonb');
      params.push(json(r.output));
    }
    if ('error' in r) {
      sets.push('error = ?');
      params.push(r.error ?? null);
    }
    if ('errorNodeId' in r) {
      sets.push('error_node_id = ?');
      params.push(r.errorNodeId ?? null);
    }
    if (r.costCredits !== undefined) {
      sets.push('cost_credits = ?');
      params.push(r.costCredits);
    }
    if (r.cancelReason) {
      sets.push('cancel_reason = coalesce(cancel_reason, ?)');
      params.push(r.cancelReason);
    }
    await conn.execute(`update runs set ${sets.join(', ')} where id = ?`, [...params, p.runId], 'run', ctx);
  });
}

/**
 * Issues the single-use token of an event wait (idempotent per run and node: a retried
 * activity returns the same token). The token is a capability: only full projections see it,
 * as the wait's resumeUrl.
 */
export async function issueResumeToken(
  em: EntityManager,
  args: { runId: string; workspaceId: string; nodeId: string; expiresAt: string | null },
): Promise<{ token: string }> {
  const token = `rt_${randomToken(24)}`;
  await em.getConnection().execute(
    `insert into resume_tokens (id, token, workspace_id, run_id, node_id, created_at, expires_at)
     values (?, ?, ?, ?, ?, now(), ?) on conflict (run_id, node_id) do nothing`,
    [newId('rtk'), token, args.workspaceId, args.runId, args.nodeId, args.expiresAt],
  );
  const row = await em.fork().findOneOrFail(ResumeTokenSchema, { runId: args.runId, nodeId: args.nodeId });
  return { token: row.token };
}

export class ChildRunRefused extends Error {}

/**
 * Creates (or finds, on a retry) the run row of a subworkflow node's child run and returns
 * the child's pinned graph. The child must be a deployed workflow of the same workspace.
 */
export async function prepareChildRun(
  em: EntityManager,
  args: { parentRunId: string; parentNodeId: string; workspaceId: string; workflowId: string; input: unknown },
): Promise<{ runId: string; graph: WorkflowGraph }> {
  const runId = `run_${sha256Hex(`${args.parentRunId}\0${args.parentNodeId}`).slice(0, 32)}`;
  const workflow = await em.findOne(WorkflowSchema, { id: args.workflowId, workspaceId: args.workspaceId, trashed: false });
  if (!workflow) throw new ChildRunRefused(`Subworkflow "${args.workflowId}" does not exist in this workspace.`);
  if (!workflow.activeVersionId) throw new ChildRunRefused(`Subworkflow "${args.workflowId}" has no deployed version.`);
  const version = await em.findOneOrFail(WorkflowVersionSchema, { id: workflow.activeVersionId });
  const parent = await em.findOneOrFail(RunSchema, { id: args.parentRunId });
  const now = new Date();
  await em.getConnection().execute(
    `insert into runs (id, workspace_id, workflow_id, version_id, workflow_name, trigger, status, input, dry_run, execution_evidence, waits,
                       parent_run_id, parent_node_id, cost_credits, created_by_key_id, created_by_user_id, created_at, updated_at)
     values (?, ?, ?, ?, ?, ?, 'queued', ?::jsonb, false, ?::jsonb, '[]'::jsonb, ?, ?, 0, ?, ?, ?, ?)
     on conflict (id) do nothing`,
    [
      runId, args.workspaceId, workflow.id, version.id, workflow.name, parent.trigger, json(args.input),
      json({ requestedTarget: 'active', versionId: version.id, resourceMode: 'workspace-live', reviewIdentity: null }),
      args.parentRunId, args.parentNodeId, parent.createdByKeyId, parent.createdByUserId, now, now,
    ],
  );
  return { runId, graph: withConfigDefaults({ nodes: version.nodes, edges: version.edges }) };
}

/**
 * Creates the run row of a schedule-fired run (idempotent on its id) from the workflow's
 * active version. A workflow that was trashed, disabled or undeployed since the schedule was
 * made yields no graph: the firing is recorded nowhere and skipped.
 */
export async function prepareScheduledRun(
  em: EntityManager,
  args: { runId: string; workspaceId: string; workflowId: string; input: unknown },
): Promise<{ graph: WorkflowGraph | null; reason?: string }> {
  const workflow = await em.findOne(WorkflowSchema, { id: args.workflowId, workspaceId: args.workspaceId });
  if (!workflow || workflow.trashed || workflow.status !== 'deployed' || !workflow.activeVersionId) {
    return { graph: null, reason: 'The workflow is not deployed.' };
  }
  const version = await em.findOneOrFail(WorkflowVersionSchema, { id: workflow.activeVersionId });
  const now = new Date();
  await em.getConnection().execute(
    `insert into runs (id, workspace_id, workflow_id, version_id, workflow_name, trigger, status, input, dry_run, execution_evidence, waits, cost_credits, created_at, updated_at)
     values (?, ?, ?, ?, ?, 'schedule', 'queued', ?::jsonb, false, ?::jsonb, '[]'::jsonb, 0, ?, ?)
     on conflict (id) do nothing`,
    [args.runId, args.workspaceId, workflow.id, version.id, workflow.name, json(args.input),
     json({ requestedTarget: 'active', versionId: version.id, resourceMode: 'workspace-live', reviewIdentity: null }), now, now],
  );
  return { graph: withConfigDefaults({ nodes: version.nodes, edges: version.edges }) };
}
