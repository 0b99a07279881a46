/** The supervisor's restart backoff and the process settings (main/supervisor.ts, services/kernel/config/processes.ts). */
import { DEFAULT_BACKOFF, restartDelay } from '../../../main/supervisor';
import { DEFAULT_API_HEAP_MB, DEFAULT_WORKER_HEAP_MB, loadConfig } from '../../../services/kernel/config';

test('a process that keeps crashing waits twice as long each time, up to the cap; a stable one starts over', () => {
  const delays = [1, 2, 3, 4, 5, 6, 7, 8, 9].map((crashes) => restartDelay(crashes, DEFAULT_BACKOFF));
  expect(delays).toEqual([500, 1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000, 30_000]);
  expect(restartDelay(1, { initialMs: 100, maxMs: 1_000, stableMs: 10 })).toBe(100);
});

test('process settings: defaults, and refusals naming the variable', () => {
  expect(loadConfig({}).processes).toEqual({
    apiProcesses: 1,
    workers: 1,
    apiHeapMb: DEFAULT_API_HEAP_MB,
    workerHeapMb: DEFAULT_WORKER_HEAP_MB,
    heartbeatMs: 1_000,
    heartbeatStaleMs: 3_000,
  });
  expect(loadConfig({ API_PROCESSES: '3', WORKERS: '2', API_HEAP_MB: '256', WORKER_HEAP_MB: '2048' }).processes).toMatchObject({
    apiProcesses: 3,
    workers: 2,
    apiHeapMb: 256,
    workerHeapMb: 2048,
  });
  expect(() => loadConfig({ WORKERS: '0' })).toThrow(/WORKERS/);
  expect(() => loadConfig({ API_HEAP_MB: '16' })).toThrow(/API_HEAP_MB/);
  expect(() => loadConfig({ WORKER_HEARTBEAT_MS: '2000', WORKER_HEARTBEAT_STALE_MS: '3000' })).toThrow(
    /WORKER_HEARTBEAT_STALE_MS must be at least twice/,
  );
});
