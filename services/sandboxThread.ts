import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { parentPort } from 'node:worker_threads';
import { executeCode, warmUp, type SandboxLimits, type SandboxResult } from './sandboxEngine';

/**
 * Entry point of one sandbox thread (started by the pool in services/sandbox.ts). It loads the
 * QuickJS module, reports `ready`, then runs one task at a time: the pool never sends a second
 * task before the first answered. A thread that overruns its deadline is terminated from outside.
 */
export interface SandboxTask {
  id: number;
  source: string;
  inputJson: string | undefined;
  limits: SandboxLimits;
}
export type SandboxThreadMessage =
  | { type: 'ready' }
  | { type: 'result'; id: number; result: SandboxResult }
  | { type: 'error'; id: number; message: string };

/** Niceness of a sandbox thread: guest code yields the CPU to the API and the worker's main thread. */
export const SANDBOX_THREAD_NICENESS = 19;

/**
 * Lowers this thread's scheduling priority. Linux schedules threads individually: the id of
 * the calling thread is the last part of /proc/thread-self. Elsewhere this does nothing.
 */
function lowerPriority(): void {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (Number.isInteger(tid) && tid > 0) setPriority(tid, SANDBOX_THREAD_NICENESS);
  } catch {
    // Not Linux, or not permitted: the outer deadline still bounds every call.
  }
}

if (parentPort) {
  const port = parentPort;
  lowerPriority();
  port.on('message', (task: SandboxTask) => {
    executeCode(task.source, task.inputJson, task.limits).then(
      (result) => port.postMessage({ type: 'result', id: task.id, result } satisfies SandboxThreadMessage),
      (err: unknown) => port.postMessage({ type: 'error', id: task.id, message: err instanceof Error ? err.message : String(err) } satisfies SandboxThreadMessage),
    );
  });
  warmUp().then(
    () => port.postMessage({ type: 'ready' } satisfies SandboxThreadMessage),
    (err: unknown) => {
      throw err;
    },
  );
}
