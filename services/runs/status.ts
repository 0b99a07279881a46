import type { EntityManager } from '@mikro-orm/postgresql';
import { RunSchema, type Run, type RunStatus, type Workflow } from '../../db/entities';
import { RUN_STATUSES } from '../../engine/statuses';
import { notFound } from '../kernel/errors';
import { projectionFor, type WorkspacePrincipal } from '../kernel/principal';
import { loadWorkflow } from '../workflows';
import { isTerminal, presentRuns, RUN_NOT_FOUND, type ProjectedRun } from './views';

/** Status answers show the last logs only: a poller wants the tail, not the whole history. */
const STATUS_LOG_LIMIT = 20;
const LATEST_RUNS = 20;

export type WorkflowRunStatus =
  | { kind: 'latest'; workflow: Workflow; runs: ProjectedRun[]; statuses: Record<RunStatus, number> }
  | { kind: 'one'; workflow: Workflow; run: Run; view: ProjectedRun; redacted: boolean; active: boolean; pollAfterMs: number };

/**
 * The status of one run of a workflow of the principal's workspace (`runId`), or of its 20
 * latest runs with a count per status. Runs are projected for the principal (full or safe)
 * with their last 20 logs. A run of another workflow is not found.
 */
export async function workflowRunStatus(
  em: EntityManager,
  principal: WorkspacePrincipal,
  workflowId: string,
  runId?: string,
): Promise<WorkflowRunStatus> {
  const workflow = await loadWorkflow(em, principal, workflowId);
  if (!runId) {
    const runs = await em.find(
      RunSchema,
      { workspaceId: workflow.workspaceId, workflowId: workflow.id },
      { orderBy: { createdAt: 'desc', id: 'desc' }, limit: LATEST_RUNS },
    );
    const statuses = Object.fromEntries(RUN_STATUSES.map((s) => [s, runs.filter((r) => r.status === s).length])) as Record<
      RunStatus,
      number
    >;
    return { kind: 'latest', workflow, runs: await presentRuns(em, principal, runs, { logLimit: STATUS_LOG_LIMIT }), statuses };
  }
  const run = await em.findOne(RunSchema, { id: runId, workspaceId: workflow.workspaceId, workflowId: workflow.id });
  if (!run) throw notFound(RUN_NOT_FOUND);
  // presentRuns gives one view per run.
  const view = (await presentRuns(em, principal, [run], { logLimit: STATUS_LOG_LIMIT })).at(0)!;
  const active = !isTerminal(run.status);
  // Waiting runs change on human time scales; running ones within seconds.
  const pollAfterMs = !active ? 0 : run.status === 'waiting' ? 5000 : 1000;
  return { kind: 'one', workflow, run, view, redacted: projectionFor(principal) === 'safe', active, pollAfterMs };
}
