import { parentPort } from 'node:worker_threads';
import { executeCode, MODULE_INITIAL_BYTES, moduleMemoryBytes, warmUp } from '../sandboxEngine';
import type { CodeTask, ThreadInbound, ThreadOutbound } from './protocol';
import { lowerThreadPriority } from './threadPriority';

/**
 * Entry point of one code thread of the sandbox host (started by its ThreadPool). It loads the
 * QuickJS module, reports `ready`, then runs one task at a time: the pool never sends a second
 * task before the first answered. A thread that overruns its deadline is terminated from outside.
 */

/** WASM memory growth past the module's initial size after which the thread asks to be replaced once idle (see ThreadPool). */
const GROWN_BYTES = 8 * 1024 * 1024;

if (parentPort) {
  const port = parentPort;
  lowerThreadPriority();
  port.on('message', (msg: ThreadInbound) => {
    if (msg.type !== 'task') return;
    const task = msg.payload as CodeTask;
    executeCode(task.source, task.inputJson, task.limits).then(
      (result) =>
        port.postMessage({
          type: 'result',
          id: msg.id,
          result,
          grown: moduleMemoryBytes() > MODULE_INITIAL_BYTES + GROWN_BYTES,
        } satisfies ThreadOutbound),
      (err: unknown) =>
        port.postMessage({ type: 'error', id: msg.id, message: err instanceof Error ? err.message : String(err) } satisfies ThreadOutbound),
    );
  });
  warmUp().then(
    () => port.postMessage({ type: 'ready' } satisfies ThreadOutbound),
    (err: unknown) => {
      throw err;
    },
  );
}
