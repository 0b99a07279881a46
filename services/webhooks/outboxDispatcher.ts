import type { MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import type { RunLauncher } from '../kernel/ports';
import { dispatchOutbox } from './';
import { stillQueuedRunIds } from './store';

const BATCH = 100;
/** How often it looks again while the worker is behind. */
const QUEUED_RECHECK_MS = 100;

/**
 * Polls the webhook outbox (every `pollMs`, at once again while full batches keep coming) and
 * hands entries to the durable engine. `wakeOn` (the outbox writer) wakes it as soon as new
 * entries are committed, so an accepted request does not wait for the next poll. It stops
 * handing over while more than `maxQueuedRuns` of the runs it started are still `queued` (the
 * worker is behind): the backlog then waits in the outbox, not in Temporal's task queue. Each
 * pass keeps up to `startParallelism` run starts in flight. Failures are logged and retried on
 * the next pass.
 */
export function startOutboxDispatcher(opts: {
  orm: MikroORM;
  launcher: RunLauncher;
  pollMs: number;
  /** OUTBOX_MAX_QUEUED_RUNS */
  maxQueuedRuns: number;
  /** OUTBOX_START_PARALLELISM */
  startParallelism: number;
  logger: Logger;
  wakeOn?: { onCommitted(listener: () => void): void };
}): { stop(): Promise<void> } {
  let stopped = false;
  let wake: (() => void) | null = null;
  // Set by a commit during a pass, so the next pass starts at once instead of sleeping.
  let woken = false;
  // False while backing off after failed starts: only stop() ends that wait.
  let wakeable = true;
  opts.wakeOn?.onCommitted(() => {
    woken = true;
    if (wakeable) wake?.();
  });
  // Runs started here and maybe still queued.
  let queued = new Set<string>();
  const stillQueued = async (): Promise<number> => {
    if (queued.size <= opts.maxQueuedRuns) return queued.size;
    queued = new Set(await stillQueuedRunIds(opts.orm.em.fork(), [...queued]));
    return queued.size;
  };
  const loop = (async () => {
    while (!stopped) {
      woken = false;
      let dispatched = 0;
      let failed = false;
      try {
        if ((await stillQueued()) > opts.maxQueuedRuns) {
          await new Promise((resolve) => setTimeout(resolve, QUEUED_RECHECK_MS));
          continue;
        }
        const pass = await dispatchOutbox(opts.orm.em.fork(), opts.launcher, BATCH, opts.startParallelism);
        for (const id of pass.startedRunIds) queued.add(id);
        dispatched = pass.dispatched;
        failed = pass.startFailures > 0;
        if (dispatched > 0) opts.logger.debug({ dispatched }, 'outbox dispatched');
      } catch (err) {
        failed = true;
        opts.logger.warn({ err }, 'outbox dispatch pass failed; retrying');
      }
      // After failed starts (Temporal unreachable) it waits a full poll even when woken.
      if (failed || (dispatched < BATCH && !woken)) {
        if (stopped) break;
        wakeable = !failed;
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, opts.pollMs);
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        wake = null;
      }
    }
  })();
  return {
    stop: async () => {
      stopped = true;
      wake?.();
      await loop;
    },
  };
}
