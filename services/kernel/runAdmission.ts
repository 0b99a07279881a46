import { unavailable } from './errors';

export interface RunAdmissionSettings {
  /** Live runs a workspace may have `queued` or `running` before new ones wait; 0 turns admission off. */
  maxActivePerWorkspace: number;
  /** How long a start waits for a free place before it is refused (503). */
  maxWaitMs: number;
  /** How often the count of active runs is read again while starts are waiting. */
  recheckMs: number;
}

/**
 * Holds a new live run at the door until its workspace has a free place, and writes it.
 * `tryWrite(cap)` writes the run row only if the workspace has fewer than `cap` runs queued or
 * running, deciding and writing in one statement (services/runs/runRows.ts,
 * `writeRunRowWithin`), and returns null when it had `cap` already; `cap` is null when
 * admission is off (write unconditionally). Resolves with what the write returned; refused
 * (503) after the wait, with nothing written.
 */
export type AdmitRun = <T>(workspaceId: string, tryWrite: (cap: number | null) => Promise<T | null>) => Promise<T>;

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
 * Several API processes admit into the same workspaces, so the decision is made in PostgreSQL,
 * by the statement that writes the row: it takes the workspace's advisory lock, counts its
 * active runs (index runs_workspace_status_idx) and inserts only under the cap, all in one
 * round trip (`svc_insert_run`). The next admission, in any process, counts that row: the cap
 * holds across processes, never `processes ×` the cap. Within a process starts queue per
 * workspace in memory (one statement at a time, in arrival order), so waiting starts do not hold
 * connections; a waiting start asks again every `recheckMs`.
 */
export function createRunAdmission(settings: RunAdmissionSettings): AdmitRun {
  if (settings.maxActivePerWorkspace <= 0) return async (_workspaceId, tryWrite) => written(await tryWrite(null));
  const gates = new Map<string, WorkspaceGate>();

  const admitOne = async <T>(tryWrite: (cap: number) => Promise<T | null>, deadline: number): Promise<T> => {
    for (;;) {
      const admitted = await tryWrite(settings.maxActivePerWorkspace);
      if (admitted !== null) return admitted;
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

  return async <T>(workspaceId: string, tryWrite: (cap: number | null) => Promise<T | null>): Promise<T> => {
    let gate = gates.get(workspaceId);
    if (!gate) {
      if (gates.size >= IDLE_GATES_KEPT) for (const [id, idle] of gates) if (idle.waiters === 0) gates.delete(id);
      gate = { tail: Promise.resolve(), waiters: 0 };
      gates.set(workspaceId, gate);
    }
    const g = gate;
    const deadline = Date.now() + settings.maxWaitMs;
    g.waiters++;
    const turn = g.tail.then(() => admitOne(tryWrite, deadline));
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

function written<T>(value: T | null): T {
  if (value === null) throw new Error('run admission: an unconditional write wrote nothing');
  return value;
}
