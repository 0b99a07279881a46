import { sandboxSettings, SANDBOX_KILL_GRACE_MS } from '../config';
import { SANDBOX_DEFAULTS, type SandboxLimits, type SandboxOptions, type SandboxResult } from './sandboxEngine';
import { SandboxHostClient, sandboxHostStats, type SandboxHostSettings } from './sandboxHost/client';
import type { DryRunResult, DryRunTask } from './sandboxHost/protocol';

export {
  LOG_MAX_ENTRIES,
  LOG_MESSAGE_MAX_BYTES,
  SANDBOX_DEFAULTS,
  type SandboxErrorKind,
  type SandboxLog,
  type SandboxLogLevel,
  type SandboxOptions,
  type SandboxResult,
} from './sandboxEngine';
export { sandboxHostStats } from './sandboxHost/client';
export type { DryRunResult, DryRunTask } from './sandboxHost/protocol';

/**
 * Every evaluation of a tenant's code or expressions in this process goes through here and runs
 * in the sandbox host: a child process (services/kernel/sandbox/sandboxHost/) forked on first use and
 * restarted with backoff whenever it exits, so a native fault in the engine (a QuickJS
 * assertion, a corrupted async hook stack in a thread) ends the host, never the API or the
 * worker. Inside the host the QuickJS executor (services/kernel/sandbox/sandboxEngine.ts) runs on a pool of
 * code threads fed from per-workspace fair queues (one workspace holds at most
 * SANDBOX_WORKSPACE_CONCURRENCY threads; free threads go round-robin over the workspaces
 * waiting), and dry runs are interpreted on graph threads with their own heap cap.
 *
 * Deadlines: a code call's thread is terminated at `timeoutMs + KILL_GRACE_MS` after it got a
 * thread (the QuickJS interrupt fires at `timeoutMs`); if the host itself does not answer
 * within that plus a margin, this process kills the host and replaces it. Time spent queued is
 * not charged to the call.
 *
 * `closeSandboxPool()` stops the host on shutdown (API stop, worker stop).
 */

/** Code threads of the sandbox host (SANDBOX_THREADS; default: the CPU count, at least 4 and at most 8). */
export const SANDBOX_THREADS = sandboxSettings().codeThreads;
/** Head start of the inner interrupt over the outer kill, so ordinary timeouts keep the guest's logs. */
export const KILL_GRACE_MS = SANDBOX_KILL_GRACE_MS;
/** Workspace of calls that name none (scripts, old activity inputs): they share one queue. */
const UNNAMED_WORKSPACE = '-';

let client: SandboxHostClient | undefined;
let overrides: Partial<SandboxHostSettings> = {};

function hostClient(): SandboxHostClient {
  client ??= new SandboxHostClient({ ...sandboxSettings(), ...overrides });
  return client;
}

function checkPositive(name: string, value: number): number {
  if (!Number.isFinite(value) || value <= 0) throw new RangeError(`runUserCode: ${name} must be a positive number`);
  return value;
}

const stoppedUnexpectedly = (): SandboxResult => ({
  ok: false,
  error: { kind: 'runtime', message: 'InternalError: the sandbox stopped unexpectedly' },
  logs: [],
});

/**
 * Runs `source` as the body of `async function (input, console) { ... }` in a fresh QuickJS
 * runtime on a code thread of the sandbox host and returns its JSON-serialisable result.
 *
 * - `workspaceId` names the queue the call waits in (fairness between workspaces).
 * - `input` is a deep copy (JSON round trip) of the given value; it must be JSON-serialisable
 *   (otherwise this throws a TypeError: that is a caller bug, not a guest error).
 * - The return value goes through the guest's original `JSON.stringify`; `undefined` becomes
 *   `null`; more than `maxOutputBytes` (or a value that cannot be serialised) is kind `output`.
 * - `memoryLimitBytes` counts every allocation of the guest (TypedArrays and ArrayBuffers too).
 * - `console.log/info/warn/error/debug` are captured (log → info); each message is cut to
 *   2 KB, and only the first 100 entries are kept. A call stopped by the outer deadline loses its logs.
 * - Awaiting a promise that can never settle ends as kind `timeout` at once: the guest has no
 *   timers or I/O, so once its job queue is empty nothing can resolve it.
 * - A call never takes longer than `timeoutMs + KILL_GRACE_MS` once it holds a thread (plus a
 *   margin when the host itself is stuck). If the host dies under the call it is run again
 *   once on the restarted host; a second death answers kind `runtime`
 *   (`InternalError: the sandbox stopped unexpectedly`).
 * - `signal`: aborting before the call got a thread takes it out of the queue (answer: timeout).
 * - `queueTimeoutMs`: a call still waiting for a thread after this long leaves the queue and
 *   answers kind `timeout`, naming the wait (a workspace running more code nodes at once than
 *   its share of threads), instead of running into its caller's own deadline unexplained.
 * - Error messages are the guest's `Name: message (line N)`, with lines counted in `source`;
 *   host stack traces are never included.
 */
export async function runUserCode(
  source: string,
  input: unknown,
  opts: SandboxOptions & { workspaceId?: string; signal?: AbortSignal; queueTimeoutMs?: number } = {},
): Promise<SandboxResult> {
  const limits: SandboxLimits = {
    timeoutMs: checkPositive('timeoutMs', opts.timeoutMs ?? SANDBOX_DEFAULTS.timeoutMs),
    memoryLimitBytes: checkPositive('memoryLimitBytes', opts.memoryLimitBytes ?? SANDBOX_DEFAULTS.memoryLimitBytes),
    maxStackBytes: checkPositive('maxStackBytes', opts.maxStackBytes ?? SANDBOX_DEFAULTS.maxStackBytes),
    maxOutputBytes: checkPositive('maxOutputBytes', opts.maxOutputBytes ?? SANDBOX_DEFAULTS.maxOutputBytes),
  };
  if (typeof source !== 'string') throw new TypeError('runUserCode: source must be a string');
  let inputJson: string | undefined;
  try {
    inputJson = JSON.stringify(input);
  } catch (err) {
    throw new TypeError(`runUserCode: input is not JSON-serialisable (${(err as Error).message})`);
  }
  const timedOut = (): SandboxResult => ({
    ok: false,
    error: { kind: 'timeout', message: `Code exceeded its time limit of ${limits.timeoutMs} ms` },
    logs: [],
  });
  // One signal for both ways of giving up while queued; which one fired picks the message.
  const waited = new AbortController();
  const queueTimer = opts.queueTimeoutMs !== undefined ? setTimeout(() => waited.abort(), Math.max(0, opts.queueTimeoutMs)) : undefined;
  const signal = opts.signal ? AbortSignal.any([opts.signal, waited.signal]) : waited.signal;
  const canceled = (): SandboxResult =>
    waited.signal.aborted
      ? {
          ok: false,
          error: {
            kind: 'timeout',
            message: `Code exceeded its time limit of ${limits.timeoutMs} ms: it waited ${opts.queueTimeoutMs} ms for a sandbox thread without getting one (too many code nodes of this workspace run at once)`,
          },
          logs: [],
        }
      : { ok: false, error: { kind: 'timeout', message: 'Code was canceled before it ran (its caller stopped waiting)' }, logs: [] };
  return hostClient()
    .call<SandboxResult>({
      kind: 'code',
      workspaceId: opts.workspaceId ?? UNNAMED_WORKSPACE,
      task: { source, inputJson, limits },
      deadlineMs: limits.timeoutMs + KILL_GRACE_MS,
      timedOut,
      died: stoppedUnexpectedly,
      signal,
      canceled,
    })
    .finally(() => clearTimeout(queueTimer));
}

/**
 * Interprets a dry run's graph in the sandbox host (a graph thread: JSONata and code nodes run
 * there, never on this event loop) under SANDBOX_DRY_RUN_TIMEOUT_MS of wall clock and
 * SANDBOX_DRY_RUN_HEAP_MB of heap. `readTable` answers the graph's table_read nodes here, where
 * the database is. A dry run over its deadline or heap ends `failed` with a message saying so.
 */
export async function runDryRunInSandbox(
  workspaceId: string,
  task: DryRunTask,
  readTable: (config: Record<string, unknown>) => Promise<unknown>,
): Promise<DryRunResult> {
  const c = hostClient();
  const timeoutMs = c.dryRunTimeoutMs;
  const failed = (message: string): DryRunResult => ({
    outcome: { status: 'failed', output: null, error: { message, nodeId: null }, costCredits: 0 },
    steps: [],
    logs: [],
  });
  return c.call<DryRunResult>({
    kind: 'dryRun',
    workspaceId,
    task,
    deadlineMs: timeoutMs,
    timedOut: () => failed(`The dry run exceeded its time limit of ${timeoutMs} ms and was stopped`),
    died: () => failed('The dry run stopped unexpectedly (the sandbox host ended twice while it ran)'),
    onCall: (op, args) => {
      if (op === 'table_read') return readTable(args as Record<string, unknown>);
      return Promise.reject(new Error(`Unknown sandbox request ${op}`));
    },
  });
}

/** Pid of the running sandbox host of this process (tests kill it), or undefined while none runs. */
export function sandboxHostPid(): number | undefined {
  return client?.pid;
}

/**
 * Replaces settings of the sandbox host (tests: a shorter dry-run deadline, fewer threads).
 * Takes effect for the next host client: call closeSandboxPool() first when one is running.
 */
export function configureSandbox(settings: Partial<SandboxHostSettings>): void {
  overrides = { ...settings };
}

/** Closes the host: calls already made finish (within their deadlines), then the host ends. A later call starts a new host. */
export async function closeSandboxPool(): Promise<void> {
  const current = client;
  client = undefined;
  await current?.close();
}

/** Host starts and restarts of this process, for /metrics. */
export function sandboxHostCounters(): Readonly<typeof sandboxHostStats> {
  return sandboxHostStats;
}
