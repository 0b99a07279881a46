import { isMainThread } from 'node:worker_threads';
import type { SandboxResult } from '../sandboxEngine';
import type { CodeTask, DryRunResult, HostMessage, HostRequest } from './protocol';
import { ThreadPool } from './threadPool';

/**
 * Entry point of the sandbox host process, forked by services/kernel/sandbox/sandboxHost/client.ts in the
 * process that needs it (API: dry runs; worker: code nodes). Every tenant evaluation runs here,
 * in worker threads with their own heap caps, under per-task deadlines, fed from per-workspace
 * fair queues. The main thread only routes messages, so it answers the parent's pings even
 * while every thread is busy. A native fault anywhere here ends this process only; the parent
 * restarts it. The host exits when its parent goes away (the IPC channel closes).
 *
 * Settings come from the parent in SANDBOX_HOST_SETTINGS (JSON of HostSettings).
 */
export interface HostSettings {
  codeThreads: number;
  codePerWorkspace: number;
  codeKillGraceMs: number;
  graphThreads: number;
  graphPerWorkspace: number;
  threadHeapMb: number;
  graphHeapMb: number;
}

function main(): void {
  const send = (msg: HostMessage) => {
    if (process.connected) process.send!(msg);
  };
  const settings = JSON.parse(process.env.SANDBOX_HOST_SETTINGS ?? '{}') as HostSettings;

  const code = new ThreadPool<SandboxResult>({
    entry: 'codeThread',
    size: settings.codeThreads,
    perWorkspace: settings.codePerWorkspace,
    heapMb: settings.threadHeapMb,
    onTimeout: (deadlineMs) => ({
      ok: false,
      error: { kind: 'timeout', message: `Code exceeded its time limit of ${deadlineMs - settings.codeKillGraceMs} ms` },
      logs: [],
    }),
    onDied: (outOfMemory) => ({
      ok: false,
      error: outOfMemory
        ? { kind: 'memory', message: 'Code exceeded its memory limit (the sandbox thread ran out of memory)' }
        : { kind: 'runtime', message: 'InternalError: the sandbox stopped unexpectedly' },
      logs: [],
    }),
  });
  code.prestart(settings.codeThreads);
  const failedDryRun = (message: string): DryRunResult => ({
    outcome: { status: 'failed', output: null, error: { message, nodeId: null }, costCredits: 0 },
    steps: [],
    logs: [],
  });
  const graph = new ThreadPool<DryRunResult>({
    entry: 'graphThread',
    size: settings.graphThreads,
    perWorkspace: settings.graphPerWorkspace,
    heapMb: settings.graphHeapMb,
    onTimeout: (deadlineMs) => failedDryRun(`The dry run exceeded its time limit of ${deadlineMs} ms and was stopped`),
    onDied: (outOfMemory) =>
      failedDryRun(
        outOfMemory
          ? `The dry run exceeded its memory limit of ${settings.graphHeapMb} MB and was stopped`
          : 'The dry run stopped unexpectedly (the sandbox thread ended)',
      ),
  });

  const cancels = new Map<number, () => boolean>();
  const callsOut = new Map<number, { resolve(value: unknown): void; reject(err: Error): void }>();
  let nextCallId = 1;

  /** Sends the run's answer (or its failure) once it settles; until then a `cancel` can stop it. */
  function answerWhenDone<T>(id: number, run: { cancel(): boolean; done: Promise<T> }, answer: (result: T) => void): void {
    cancels.set(id, run.cancel);
    run.done.then(answer, (err: Error) => send({ type: 'failed', id, message: err.message })).finally(() => cancels.delete(id));
  }

  process.on('message', (msg: HostRequest) => {
    switch (msg.type) {
      case 'ping':
        send({ type: 'pong', seq: msg.seq });
        return;
      case 'cancel':
        cancels.get(msg.id)?.();
        return;
      case 'reply': {
        const call = callsOut.get(msg.callId);
        callsOut.delete(msg.callId);
        if (msg.ok) call?.resolve(msg.value);
        else call?.reject(new Error(msg.message));
        return;
      }
      case 'code': {
        const task: CodeTask = msg.task;
        const run = code.run(msg.workspaceId, task, task.limits.timeoutMs + settings.codeKillGraceMs, {
          onStart: () => send({ type: 'started', id: msg.id }),
        });
        answerWhenDone(msg.id, run, (result) => send({ type: 'code', id: msg.id, result }));
        return;
      }
      case 'dryRun': {
        const run = graph.run(msg.workspaceId, msg.task, msg.timeoutMs, {
          onStart: () => send({ type: 'started', id: msg.id }),
          onCall: (op, args) => {
            // The dry run's code nodes queue with the workspace's live code calls, under the same outer deadline.
            if (op === 'code') {
              const task = args as CodeTask;
              return code.run(msg.workspaceId, task, task.limits.timeoutMs + settings.codeKillGraceMs).done;
            }
            // Table reads go back to the parent, which owns the database connection.
            return new Promise((resolve, reject) => {
              const callId = nextCallId++;
              callsOut.set(callId, { resolve, reject });
              send({ type: 'call', id: msg.id, callId, op, args });
            });
          },
        });
        answerWhenDone(msg.id, run, (result) => send({ type: 'dryRun', id: msg.id, result }));
        return;
      }
    }
  });
  // The parent is gone (exited, killed): nothing here is worth finishing.
  process.on('disconnect', () => process.exit(0));
  send({ type: 'ready', pid: process.pid });
}

// Started through the tsx bootstrap, `require.main` is the bootstrap: the IPC channel and the settings tell it is the host.
if (isMainThread && process.send && process.env.SANDBOX_HOST_SETTINGS) main();
