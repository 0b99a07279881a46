import type { EntityManager } from '@mikro-orm/postgresql';
import { RunLogSchema, RunSchema, RunStepSchema, type Run, type RunLog, type RunStatus, type RunStep } from '../../db/entities';
import { TERMINAL_RUN_STATUSES } from '../../engine/statuses';
import { forbidden, notFound } from '../kernel/errors';
import { findInWorkspace } from '../kernel/workspaceScope';
import { projectionFor, type Principal, type WorkspacePrincipal } from '../kernel/principal';
import { projectFor, RUN_RESTRICTED_FIELDS, RUN_UNLISTED_RESTRICTED_FIELDS } from '../kernel/redaction';

export const RUN_NOT_FOUND = 'Run not found';

/**
 * The cap of one user value in a full run view (the run's input and output, each step's input
 * and output): 256 KiB of JSON. A larger value is shown as a
 * `TruncatedValue` marker; the API adds `href`, the route that returns the whole value
 * (`fullRunValue`).
 */
export const RUN_VALUE_CAP_BYTES = 256 * 1024;
/** How much of a truncated value's JSON text the marker previews. */
export const RUN_VALUE_PREVIEW_CHARS = 1024;

export interface TruncatedValue {
  truncated: true;
  /** Size of the whole value as UTF-8 JSON. */
  bytes: number;
  /** The first characters of its JSON text. */
  preview: string;
}

export const isTruncatedValue = (value: unknown): value is TruncatedValue =>
  typeof value === 'object' &&
  value !== null &&
  (value as { truncated?: unknown }).truncated === true &&
  typeof (value as { bytes?: unknown }).bytes === 'number' &&
  typeof (value as { preview?: unknown }).preview === 'string';

/** The value itself when its JSON fits the cap, else a `TruncatedValue` marker. */
export function capValue(value: unknown): unknown {
  if (value === null || value === undefined || typeof value === 'number' || typeof value === 'boolean') return value;
  // A string needs more than cap/6 characters before its JSON can exceed the cap (at most 6 bytes per UTF-16 unit).
  if (typeof value === 'string' && value.length * 6 <= RUN_VALUE_CAP_BYTES) return value;
  const text = JSON.stringify(value);
  if (text.length <= RUN_VALUE_CAP_BYTES / 3) return value;
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes <= RUN_VALUE_CAP_BYTES) return value;
  return { truncated: true, bytes, preview: text.slice(0, RUN_VALUE_PREVIEW_CHARS) } satisfies TruncatedValue;
}
export const isTerminal = (status: RunStatus) => TERMINAL_RUN_STATUSES.includes(status);

/** When the run was created, started, finished and last changed, how long it ran and what it cost: alike in every view of a run. */
export function runTimes(run: Run) {
  return {
    createdAt: run.createdAt,
    startedAt: run.startedAt,
    finishedAt: run.finishedAt,
    updatedAt: run.updatedAt,
    durationMs: run.durationMs,
    costCredits: run.costCredits,
  };
}

/**
 * The full run object, as data, with user values over `RUN_VALUE_CAP_BYTES` truncated: event waits keep their resume `token`, which the API turns
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
    ...runTimes(run),
    dryRun: run.dryRun,
    parentRunId: run.parentRunId,
    parentNodeId: run.parentNodeId,
    // Destination runs only, so runs without one keep their shape.
    ...(run.executionTarget ? { executionTarget: run.executionTarget } : {}),
    ...(run.simulationTargetId ? { simulationTargetId: run.simulationTargetId } : {}),
    steps: steps.map((s) => ({
      nodeId: s.nodeId,
      iteration: s.iteration,
      nodeType: s.nodeType,
      nodeName: s.nodeName,
      status: s.status,
      attempts: s.attempts,
      startedAt: s.startedAt,
      finishedAt: s.finishedAt,
      durationMs: s.durationMs,
      input: capValue(s.input),
      output: capValue(s.output),
      error: s.error,
    })),
    input: capValue(run.input),
    output: capValue(run.output),
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
export async function presentRuns(
  em: EntityManager,
  principal: Principal,
  runs: Run[],
  opts: { logLimit?: number } = {},
): Promise<ProjectedRun[]> {
  return (await loadRunViews(em, runs, opts)).map((v) => projectRun(principal, v));
}

/** A run of the principal's workspace; 404 for missing and foreign runs alike. */
export async function loadRun(em: EntityManager, principal: WorkspacePrincipal, id: string): Promise<Run> {
  return findInWorkspace(em, RunSchema, principal.workspaceId, id, RUN_NOT_FOUND);
}

export type RunValueField = 'input' | 'output';

/**
 * The whole value behind a truncated marker: the run's input or output, or one step's. Same
 * scoping as the run (404 `Run not found` for other workspaces) and the same projection rule:
 * these fields are restricted for safe principals (403).
 */
export async function fullRunValue(em: EntityManager, principal: WorkspacePrincipal, runId: string, field: RunValueField, nodeId?: string) {
  const run = await loadRun(em, principal, runId);
  if (projectionFor(principal) !== 'full') throw forbidden(`The run's ${field} is restricted for this key (workspace-safe.v1).`);
  if (nodeId === undefined) {
    const value = run[field] ?? null;
    return { runId: run.id, nodeId: null, field, bytes: jsonByteLength(value), value };
  }
  const step = await em.findOne(RunStepSchema, { runId: run.id, nodeId });
  if (!step) throw notFound(STEP_NOT_FOUND);
  const value = step[field] ?? null;
  return { runId: run.id, nodeId, field, bytes: jsonByteLength(value), value };
}

export const STEP_NOT_FOUND = 'Step not found';
const jsonByteLength = (value: unknown) => Buffer.byteLength(JSON.stringify(value) ?? 'null', 'utf8');
