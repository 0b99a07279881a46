import type { MikroORM } from '@mikro-orm/postgresql';
import { unavailable } from '../errors';

export interface RunAdmissionSettings {
  /** Live runs a workspace may have `queued` or `running` before new ones wait; 0 turns admission off. */
  maxActivePerWorkspace: number;
  /** How long a start waits for a free place before it is refused (503). */
  maxWaitMs: number;
  /** How often the count of active runs is read again while starts are waiting. */
  recheckMs: number;
}

/** Holds a new live run at the door until its workspace has a free place; resolves when admitted. */
export type AdmitRun = (workspaceId: string) => Promise<void>;

interface WorkspaceGate {
  /** Active runs at the last count, plus the admissions made since. */
  active: number;
  countedAt: number;
  /** Starts admit one at a time per workspace, in arrival order. */
  tail: Promise<void>;
  waiters: number;
}

/** Gates kept for workspaces with nobody waiting, so their recent count is reused. */
const IDLE_GATES_KEPT = 1_000;

/**
 * Admission control for new live runs. Every run a worker has to interleave with others slows
 * them all, and on a saturated machine a flood of starts takes the CPU runs in flight need to
 * finish; so a workspace with `maxActivePerWorkspace` runs `queued` or `running` has its next
 * starts wait (in arrival order) before their run rows are written, and after `maxWaitMs`
 * they are refused with 503. Runs parked on a wait (`waiting`) do not count. Child runs and
 * resumptions are not gated: they belong to runs already admitted.
 *
 * The count comes from PostgreSQL (index runs_workspace_status_idx), read at most every
 * `recheckMs` per workspace and raised locally for each admission in between, so it is shared
 * by API processes and errs towards admitting a few too few, never many too many in one process.
 */
export function createRunAdmission(orm: MikroORM, settings: RunAdmissionSettings): AdmitRun {
  if (settings.maxActivePerWorkspace <= 0) return async () => undefined;
  const gates = new Map<string, WorkspaceGate>();

  const countActive = async (workspaceId: string): Promise<number> => {
    const rows = await orm.em
      .fork()
      .getConnection()
      .execute<Array<{ n: number }>>(`select count(*)::int as n from runs where workspace_id = ? and status in ('queued', 'running')`, [workspaceId]);
    return rows[0]?.n ?? 0;
  };

  const admitOne = async (gate: WorkspaceGate, workspaceId: string, deadline: number): Promise<void> => {
    for (;;) {
      if (Date.now() - gate.countedAt >= settings.recheckMs) {
        gate.active = await countActive(workspaceId);
        gate.countedAt = Date.now();
      }
      if (gate.active < settings.maxActivePerWorkspace) {
        gate.active++;
        return;
      }
      const left = deadline - Date.now();
      if (left <= 0) {
        throw unavailable(`The workspace already has ${settings.maxActivePerWorkspace} runs queued or running; retry once some have finished.`, {
          details: { maxActiveRuns: settings.maxActivePerWorkspace, waitedMs: settings.maxWaitMs },
          retryAfterSeconds: 1,
        });
      }
      await new Promise((r) => setTimeout(r, Math.min(settings.recheckMs, left)));
    }
  };

  return async (workspaceId) => {
    let gate = gates.get(workspaceId);
    if (!gate) {
      if (gates.size >= IDLE_GATES_KEPT) for (const [id, idle] of gates) if (idle.waiters === 0) gates.delete(id);
      gate = { active: 0, countedAt: 0, tail: Promise.resolve(), waiters: 0 };
      gates.set(workspaceId, gate);
    }
    const g = gate;
    const deadline = Date.now() + settings.maxWaitMs;
    g.waiters++;
    const turn = g.tail.then(() => admitOne(g, workspaceId, deadline));
    // The next start waits for this one's decision, whatever it was.
    g.tail = turn.catch(() => undefined);
    try {
      await turn;
    } finally {
      g.waiters--;
    }
  };
}
