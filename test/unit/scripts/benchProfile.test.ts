import path from 'node:path';
import { categoryOf, summarizeThread } from '../../../scripts/bench/profile';

const root = path.resolve(__dirname, '..', '..', '..');

describe('benchmark CPU profile summaries', () => {
  it('names where a frame comes from', () => {
    expect(categoryOf({ functionName: '(garbage collector)', url: '' })).toBe('GC');
    expect(categoryOf({ functionName: 'parse', url: '' })).toBe('V8 builtins');
    expect(categoryOf({ functionName: 'write', url: 'node:internal/streams/writable' })).toBe('node:streams');
    expect(categoryOf({ functionName: 'connect', url: 'node:net' })).toBe('node:net');
    expect(categoryOf({ functionName: 'x', url: `file://${root}/node_modules/@temporalio/worker/lib/worker.js` })).toBe(
      '@temporalio/worker',
    );
    expect(categoryOf({ functionName: 'x', url: `${root}/node_modules/pg/lib/client.js` })).toBe('pg');
    expect(categoryOf({ functionName: 'x', url: `file://${root}/services/webhooks/outboxWriter.ts` })).toBe('ours: services/');
  });

  it('counts only the samples inside the window, each for the time until the next one', () => {
    const frame = (id: number, functionName: string, url = '') => ({ id, callFrame: { functionName, url, lineNumber: 0 } });
    const profile = {
      nodes: [frame(1, '(root)'), frame(2, '(idle)'), frame(3, 'work', 'node:net'), frame(4, '(garbage collector)')],
      startTime: 1_000,
      endTime: 2_000,
      // sample timestamps: 1100, 1200, 1300, 1400, 1500
      samples: [3, 3, 4, 2, 3],
      timeDeltas: [100, 100, 100, 100, 100],
    };
    const s = summarizeThread(profile, { startUs: 1_150, endUs: 1_450 });
    // In the window: 1200 (work), 1300 (GC), 1400 (idle): 100 µs each.
    expect(s.busyMs).toBeCloseTo(0.2);
    expect(s.categories).toEqual([
      { category: 'node:net', ms: 0.1, percentOfBusy: 50 },
      { category: 'GC', ms: 0.1, percentOfBusy: 50 },
    ]);
    expect(s.topFunctions[0]).toMatchObject({ fn: 'work', category: 'node:net' });
  });
});
