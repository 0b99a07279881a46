import type { EntityManager } from '@mikro-orm/postgresql';
import { RunSchema, type Run, type RunExecutionTarget, type RunTrigger, type Workflow } from '../../db/entities';
import type { WorkflowGraph } from '../../engine/types';
import { newId } from '../kernel/ids';
import { insertRunRow } from './store';
import type { RunTarget } from '../workflows/runnable';

export interface NewRunRow {
  /**
   * A derived id makes the write idempotent (outbox dispatch, schedule firings, child runs are
   * retried with the same id); omitted, a fresh one is made.
   */
  id?: string;
  workflow: Pick<Workflow, 'id' | 'workspaceId' | 'name'>;
  trigger: RunTrigger;
  input: unknown;
  /** The pinned version, or the candidate id of a draft run. */
  versionId: string | null;
  requestedTarget: RunTarget;
  dryRun?: boolean;
  startNodeId?: string | null;
  /** Set for candidate runs, whose graph is not a stored version. */
  graphSnapshot?: WorkflowGraph | null;
  parent?: { runId: string; nodeId: string } | null;
  createdBy?: { keyId: string | null; userId: string | null };
  /** The end user a gateway key ran it for (services/runs/endUsers.ts). */
  endUserExternalId?: string | null;
  /** Live runs of a named destination (services/destinations/runtime.ts). */
  executionTarget?: RunExecutionTarget | null;
  /** Simulations that selected a destination. */
  simulationTargetId?: string | null;
}

/**
 * The one writer of new run rows: every path that starts a run (execute, rerun, webhooks,
 * schedules, subworkflows) records it here, `queued`. The insert does nothing when a row with
 * the id exists, so retried writers never duplicate a run nor overwrite its progress. Returns
 * the stored row, managed by `em`.
 */
export async function writeRunRow(em: EntityManager, row: NewRunRow): Promise<Run> {
  const values = runRowValues(row, new Date());
  const [stored] = await insertRunRow(em, columnsOf(em, values), null);
  // On a conflict the row holds the first write (and maybe progress since): read it back.
  return stored ? em.map(RunSchema, stored) : em.findOneOrFail(RunSchema, { id: values.id }, { refresh: true });
}

/**
 * writeRunRow under run admission, in the same single statement: the row is written only while
 * its workspace has fewer than `cap` runs queued or running (services/kernel/runAdmission.ts);
 * null when it had `cap` already. The row gets a fresh id (`row.id` is not for admitted runs).
 */
export async function writeRunRowWithin(em: EntityManager, row: Omit<NewRunRow, 'id'>, cap: number): Promise<Run | null> {
  const values = runRowValues(row, new Date());
  const [stored] = await insertRunRow(em, columnsOf(em, values), cap);
  return stored ? em.map(RunSchema, stored) : null;
}

/** The row's values by column name, as the ORM's metadata names them. */
function columnsOf(em: EntityManager, values: ReturnType<typeof runRowValues>): Record<string, unknown> {
  const props = em.getMetadata().get(RunSchema.meta.className).properties;
  const columns: Record<string, unknown> = {};
  for (const [prop, value] of Object.entries(values)) {
    const column = props[prop]?.fieldNames[0];
    if (!column) throw new Error(`runs: no column for property ${prop}`);
    columns[column] = value;
  }
  return columns;
}

/** writeRunRow for many rows in one statement (the outbox dispatcher's batches); returns the stored rows in order. */
export async function writeRunRows(em: EntityManager, rows: NewRunRow[]): Promise<Run[]> {
  if (rows.length === 0) return [];
  const now = new Date();
  const values = rows.map((row) => runRowValues(row, now));
  await em.upsertMany(RunSchema, values, { onConflictFields: ['id'], onConflictAction: 'ignore' });
  const stored = await em.find(RunSchema, { id: { $in: values.map((v) => v.id) } }, { refresh: true });
  const byId = new Map(stored.map((r) => [r.id, r]));
  return values.map((v) => byId.get(v.id)!);
}

/** The columns of a new `queued` run row. */
function runRowValues(row: NewRunRow, now: Date) {
  const dryRun = row.dryRun ?? false;
  return {
    id: row.id ?? newId('run'),
    workspaceId: row.workflow.workspaceId,
    workflowId: row.workflow.id,
    versionId: row.versionId,
    workflowName: row.workflow.name,
    trigger: row.trigger,
    status: 'queued' as const,
    input: row.input ?? null,
    output: null,
    error: null,
    errorNodeId: null,
    startNodeId: row.startNodeId ?? null,
    dryRun,
    executionEvidence: {
      requestedTarget: row.requestedTarget,
      versionId: row.versionId,
      resourceMode: dryRun ? ('simulated' as const) : ('workspace-live' as const),
      reviewIdentity: null,
    },
    waits: [],
    graphSnapshot: row.graphSnapshot ?? null,
    parentRunId: row.parent?.runId ?? null,
    parentNodeId: row.parent?.nodeId ?? null,
    costCredits: 0,
    cancelReason: null,
    createdByKeyId: row.createdBy?.keyId ?? null,
    createdByUserId: row.createdBy?.userId ?? null,
    endUserExternalId: row.endUserExternalId ?? null,
    executionTarget: row.executionTarget ?? null,
    simulationTargetId: row.simulationTargetId ?? null,
    startedAt: null,
    finishedAt: null,
    durationMs: null,
    createdAt: now,
    updatedAt: now,
  };
}
