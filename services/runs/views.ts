import type { EntityManager } from '@mikro-orm/postgresql';
import { RunLogSchema, RunSchema, RunStepSchema, TERMINAL_RUN_STATUSES, type Run, type RunLog, type RunStatus, type RunStep } from '../../db/entities';
import { notFound } from '../errors';
import type { Principal, WorkspacePrincipal } from '../principal';
import { projectFor, RUN_RESTRICTED_FIELDS, RUN_UNLISTED_RESTRICTED_FIELDS } from '../redaction';

export const RUN_NOT_FOUND = 'Run not found';
export const isTerminal = (status: RunStatus) => TERMINAL_RUN_STATUSES.includes(status);

/**
 * The full run object, as data: event waits keep their resume `token`, which the API turns
 * into a `resumeUrl` (api/http/links.ts). The safe projection (`projectRun`) drops waits.
 */
export function runView(run: Run, steps: RunStep[], logs: RunLog[]) {
  return {
    id: run.id,
    workspaceId: run.workspaceId,
    workflowId: run.workflowId,
    versionId: run.versionId,
    workflowName: run.workflowName,
    trigger: run.trigger,
    status: run.status,
    active: !isTerminal(run.status),
    createdAt: run.createdAt,
    startedAt: run.startedAt,
    finishedAt: run.finishedAt,
    updatedAt: run.updatedAt,
    durationMs: run.durationMs,
    costCredits: run.costCredits,
    dryRun: run.dryRun,
    parentRunId: run.parentRunId,
    parentNodeId: run.parentNodeId,
    steps: steps.map((s) => ({
      nodeId: s.nodeId,
      nodeType: s.nodeType,
      nodeName: s.nodeName,
      status: s.status,
      attempts: s.attempts,
      startedAt: s.startedAt,
      finishedAt: s.finishedAt,
      durationMs: s.durationMs,
      input: s.input,
      output: s.output,
      error: s.error,
    })),
    input: run.input,
    output: run.output,
    error: run.error,
    errorNodeId: run.errorNodeId,
    cancelReason: run.cancelReason,
    logs: logs.map((l) => ({ seq: l.seq, nodeId: l.nodeId, level: l.level, message: l.message, data: l.data, createdAt: l.createdAt })),
    waits: run.waits,
    executionEvidence: run.executionEvidence,
  };
}

export type RunView = ReturnType<typeof runView>;

/** Full run for principals with write permission, `workspace-safe.v1` for the others. */
export function projectRun(principal: Principal, view: RunView) {
  return projectFor(principal, view, RUN_RESTRICTED_FIELDS, RUN_UNLISTED_RESTRICTED_FIELDS);
}

export type ProjectedRun = ReturnType<typeof projectRun>;

/** Loads runs with their steps and logs (one query each) and renders them in input order. */
export async function loadRunViews(em: EntityManager, runs: Run[], opts: { logLimit?: number } = {}): Promise<RunView[]> {
  if (runs.length === 0) return [];
  const ids = runs.map((r) => r.id);
  const [steps, logs] = await Promise.all([
    em.find(RunStepSchema, { runId: { $in: ids } }, { orderBy: { seq: 'asc' } }),
    em.find(RunLogSchema, { runId: { $in: ids } }, { orderBy: { seq: 'asc' } }),
  ]);
  const byRun = <T extends { runId: string }>(rows: T[]) => {
    const map = new Map<string, T[]>();
    for (const row of rows) map.set(row.runId, [...(map.get(row.runId) ?? []), row]);
    return map;
  };
  const stepsByRun = byRun(steps);
  const logsByRun = byRun(logs);
  return runs.map((r) => {
    const runLogs = logsByRun.get(r.id) ?? [];
    return runView(r, stepsByRun.get(r.id) ?? [], opts.logLimit ? runLogs.slice(-opts.logLimit) : runLogs);
  });
}

/** The runs as the principal may see them (full or safe), with steps and logs. */
export async function presentRuns(em: EntityManager, principal: Principal, runs: Run[], opts: { logLimit?: number } = {}): Promise<ProjectedRun[]> {
  return (await loadRunViews(em, runs, opts)).map((v) => projectRun(principal, v));
}

/** A run of the principal's workspace; 404 for missing and foreign runs alike. */
export async function loadRun(em: EntityManager, principal: WorkspacePrincipal, id: string): Promise<Run> {
  const run = await em.findOne(RunSchema, { id, workspaceId: principal.workspaceId });
  if (!run) throw notFound(RUN_NOT_FOUND);
  return run;
}
