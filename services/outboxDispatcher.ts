import type { MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import type { RunLauncher } from './ports';
import { dispatchOutbox } from './webhooks';

const BATCH = 100;

/**
 * Polls the webhook outbox (every `pollMs`, at once again while full batches keep coming) and
 * hands entries to the durable engine. Failures are logged and retried on the next pass.
 */
export function startOutboxDispatcher(opts: { orm: MikroORM; launcher: RunLauncher; pollMs: number; logger: Logger }): { stop(): Promise<void> } {
  let stopped = false;
  let wake: (() => void) | null = null;
  const loop = (async () => {
    while (!stopped) {
      let dispatched = 0;
      try {
        dispatched = await dispatchOutbox(opts.orm.em.fork(), opts.launcher, BATCH);
        if (dispatched > 0) opts.logger.debug({ dispatched }, 'outbox dispatched');
      } catch (err) {
        opts.logger.warn({ err }, 'outbox dispatch pass failed; retrying');
      }
      if (dispatched < BATCH && !stopped) {
        await new Promise<void>((resolve) => {
          wake = resolve;
          setTimeout(resolve, opts.pollMs);
        });
      }
    }
  })();
  return {
    stop: async () => {
      stopped = true;
      (wake as (() => void) | null)?.();
      await loop;
    },
  };
}
