import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { unavailable } from './errors';
import { lockAndCountActiveRuns } from './store';

export interface RunAdmissionSettings {
  /** Live runs a workspace may have `queued` or `running` before new ones wait; 0 turns admission off. */
  maxActivePerWorkspace: number;
  /** How long a start waits for a free place before it is refused (503). */
  maxWaitMs: number;
  /** How often the count of active runs is read again while starts are waiting. */
  recheckMs: number;
}

/**
 * Holds a new live run at the door until its workspace has a free place, then calls `write`
 * (which writes the run row, on the entity manager it is given) while the place is held, and
 * resolves with what it returned. Refused after the wait: `write` is not called.
 */
export type AdmitRun = <T>(workspaceId: string, write: (em: EntityManager) => Promise<T>) => Promise<T>;

interface WorkspaceGate {
  /** Starts admit one at a time per workspace in this process, in arrival order. */
  tail: Promise<void>;
  waiters: number;
}

/** Per-workspace queues kept while nobody waits in them (beyond it, idle ones are dropped). */
const IDLE_GATES_KEPT = 1_000;

/**
 * Admission control for new live runs. Every run a worker has to interleave with others slows
 * them all, and on a saturated machine a flood of starts takes the CPU runs in flight need to
 * finish; so a workspace with `maxActivePerWorkspace` runs `queued` or `running` has its next
 * starts wait (in arrival order) before their run rows are written, and after `maxWaitMs`
 * they are refused with 503. Runs parked on a wait (`waiting`) do not count. Child runs and
 * resumptions are not gated: they belong to runs already admitted.
 *
 * Several API processes admit into the same workspaces, so the decision is made in PostgreSQL:
 * a transaction takes the workspace's advisory lock, counts its active runs (index
 * runs_workspace_status_idx) and, when there is a place, writes the run row before it commits
 * and releases the lock. The next admission, in any process, counts that row: the cap holds
 * across processes, never `processes ×` the cap. Within a process starts queue per workspace
 * (one transaction at a time), so waiting starts do not hold connections; a waiting start
 * counts again every `recheckMs`.
 */
export function createRunAdmission(orm: MikroORM, settings: RunAdmissionSettings): AdmitRun {
  if (settings.maxActivePerWorkspace <= 0) return (_workspaceId, write) => write(orm.em.fork());
  const gates = new Map<string, WorkspaceGate>();

  /** One attempt: under the workspace's lock, writes and returns `{ value }` if there is a place, else null. */
  const tryAdmit = async <T>(workspaceId: string, write: (em: EntityManager) => Promise<T>): Promise<{ value: T } | null> =>
    orm.em.fork().transactional(async (tx) => {
      if ((await lockAndCountActiveRuns(tx, workspaceId)) >= settings.maxActivePerWorkspace) return null;
      return { value: await write(tx) };
    });

  const admitOne = async <T>(workspaceId: string, write: (em: EntityManager) => Promise<T>, deadline: number): Promise<T> => {
    for (;;) {
      const admitted = await tryAdmit(workspaceId, write);
      if (admitted) return admitted.value;
      const left = deadline - Date.now();
      if (left <= 0) {
        throw unavailable(
          `The workspace already has ${settings.maxActivePerWorkspace} runs queued or running; retry once some have finished.`,
          {
            details: { maxActiveRuns: settings.maxActivePerWorkspace, waitedMs: settings.maxWaitMs },
            retryAfterSeconds: 1,
          },
        );
      }
      await new Promise((r) => setTimeout(r, Math.min(settings.recheckMs, left)));
    }
  };

  return async <T>(workspaceId: string, write: (em: EntityManager) => Promise<T>): Promise<T> => {
    let gate = gates.get(workspaceId);
    if (!gate) {
      if (gates.size >= IDLE_GATES_KEPT) for (const [id, idle] of gates) if (idle.waiters === 0) gates.delete(id);
      gate = { tail: Promise.resolve(), waiters: 0 };
      gates.set(workspaceId, gate);
    }
    const g = gate;
    const deadline = Date.now() + settings.maxWaitMs;
    g.waiters++;
    const turn = g.tail.then(() => admitOne(workspaceId, write, deadline));
    // The next start waits for this one's decision, whatever it was.
    g.tail = turn.then(
      () => undefined,
      () => undefined,
    );
    try {
      return await turn;
    } finally {
      g.waiters--;
    }
  };
}
