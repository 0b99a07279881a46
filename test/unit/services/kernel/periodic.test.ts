/** The background loop shared by the stuck-run guard and the idempotency purge (services/kernel/periodic.ts). */
import type { Logger } from 'pino';
import { startPeriodicPass } from '../../../../services/kernel/periodic';

test('a pass that throws is logged and the next pass still runs; stop waits for the pass under way', async () => {
  const warnings: string[] = [];
  const logger = { warn: (_obj: unknown, msg: string) => void warnings.push(msg) } as unknown as Logger;
  let passes = 0;
  let finished = 0;
  let thirdStarted!: () => void;
  const third = new Promise<void>((resolve) => (thirdStarted = resolve));
  const loop = startPeriodicPass({
    name: 'probe',
    intervalMs: 5,
    logger,
    pass: async () => {
      passes++;
      if (passes === 1) throw new Error('database blip');
      if (passes === 3) {
        thirdStarted();
        await new Promise((resolve) => setImmediate(resolve));
      }
      finished++;
    },
  });
  await third;
  await loop.stop();
  expect(warnings).toEqual(['probe pass failed; retrying']);
  expect(passes).toBe(3);
  expect(finished).toBe(2);
});
