import type { Logger } from 'pino';

/**
 * Runs `pass` every `intervalMs` (the first one an interval after the start) until stopped. A
 * pass that throws is logged and the next one runs on time: background sweeps must outlive a
 * database blip. `stop()` waits for a pass under way, so shutdown never cuts one in half.
 */
export function startPeriodicPass(opts: { name: string; intervalMs: number; logger: Logger; pass: () => Promise<void> }): {
  stop(): Promise<void>;
} {
  let stopped = false;
  let wake: (() => void) | null = null;
  let timer: NodeJS.Timeout | undefined;
  const loop = (async () => {
    while (!stopped) {
      await new Promise<void>((resolve) => {
        wake = resolve;
        timer = setTimeout(resolve, opts.intervalMs);
      });
      if (stopped) break;
      try {
        await opts.pass();
      } catch (err) {
        opts.logger.warn({ err }, `${opts.name} pass failed; retrying`);
      }
    }
  })();
  return {
    stop: async () => {
      stopped = true;
      clearTimeout(timer);
      wake?.();
      await loop;
    },
  };
}
