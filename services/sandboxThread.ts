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

if (parentPort) {
  const port = parentPort;
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
