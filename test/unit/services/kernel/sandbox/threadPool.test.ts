/**
 * The code threads of the sandbox host under a tenant whose every call fills its memory limit
 * (issue 26, F7). Replacing the thread after each such call made the host spend its CPU
 * starting threads while other tenants' calls waited; the thread now stays and keeps serving.
 */
import { ThreadPool } from '../../../../../services/kernel/sandbox/sandboxHost/threadPool';
import { SANDBOX_DEFAULTS, type SandboxResult } from '../../../../../services/kernel/sandbox/sandboxEngine';
import type { CodeTask } from '../../../../../services/kernel/sandbox/sandboxHost/protocol';
import { F7_SOURCES } from '../../../../abuse/attacks';

const limits = { ...SANDBOX_DEFAULTS, timeoutMs: 30_000 };
const task = (source: string, input?: unknown): CodeTask => ({
  source,
  inputJson: input === undefined ? undefined : JSON.stringify(input),
  limits,
});

async function eventually(ok: () => boolean): Promise<void> {
  while (!ok()) await new Promise((resolve) => setTimeout(resolve, 50));
}

let pool: ThreadPool<SandboxResult>;
beforeAll(() => {
  pool = new ThreadPool<SandboxResult>({
    entry: 'codeThread',
    size: 1,
    perWorkspace: 1,
    heapMb: 64,
    idleRetireMs: 300,
    onTimeout: () => ({ ok: false, error: { kind: 'timeout', message: 'timeout' }, logs: [] }),
    onDied: () => ({ ok: false, error: { kind: 'runtime', message: 'died' }, logs: [] }),
  });
});
afterAll(() => pool.close());

test('calls that fill the memory limit fail with a memory error on the same thread, which then serves ordinary calls', async () => {
  for (const source of Object.values(F7_SOURCES)) {
    const result = await pool.run('attacker', task(source), 60_000).done;
    expect(result).toMatchObject({ ok: false, error: { kind: 'memory' } });
  }
  const ordinary = await pool.run('other', task('return { sum: input.a + input.b };', { a: 2, b: 3 }), 60_000).done;
  expect(ordinary).toEqual({ ok: true, output: { sum: 5 }, logs: [] });
  expect(pool.threadsStarted).toBe(1);
});

test('a thread left holding grown memory is replaced once idle, and the next call gets a fresh one', async () => {
  const before = pool.threadsStarted;
  await pool.run('attacker', task(F7_SOURCES['300 × 1 MiB ArrayBuffer']), 60_000).done;
  await eventually(() => pool.threads === 0);
  const ordinary = await pool.run('other', task('return 1;'), 60_000).done;
  expect(ordinary).toEqual({ ok: true, output: 1, logs: [] });
  expect(pool.threadsStarted).toBe(before + 1);
});

test('a call after many memory-filling calls still gets its whole memory limit', async () => {
  const before = pool.threadsStarted;
  for (let i = 0; i < 3; i++) await pool.run('attacker', task(F7_SOURCES['300 × 1 MiB Uint8Array']), 60_000).done;
  // 24 MiB of live buffers: within the 32 MiB limit, so nothing of the earlier calls may still hold memory.
  const fits = await pool.run(
    'other',
    task('const keep = []; for (let i = 0; i < 24; i++) keep.push(new Uint8Array(1024 * 1024)); return keep.length;'),
    60_000,
  ).done;
  expect(fits).toEqual({ ok: true, output: 24, logs: [] });
  expect(pool.threadsStarted).toBe(before);
});
