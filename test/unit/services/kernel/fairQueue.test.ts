import { FairLimiter, FairQueue, FairQueueFull } from '../../../../services/kernel/fairQueue';

/** A task that runs until released, recording its start. */
function gate(log: string[], name: string) {
  let open!: () => void;
  const done = new Promise<void>((r) => (open = r));
  return { task: () => (log.push(name), done), release: () => open() };
}

const tick = () => new Promise((r) => setImmediate(r));

test('at most perKey of one key and total overall run; waiting keys are served round-robin', async () => {
  const q = new FairLimiter({ total: 2, perKey: 1, queuePerKey: 5 });
  const log: string[] = [];
  const gates = new Map<string, ReturnType<typeof gate>>();
  const submit = (key: string, name: string) => {
    const g = gate(log, name);
    gates.set(name, g);
    return q.run(key, g.task);
  };
  const all = [submit('a', 'a1'), submit('a', 'a2'), submit('a', 'a3'), submit('b', 'b1'), submit('b', 'b2'), submit('c', 'c1')];
  await tick();
  expect(log).toEqual(['a1', 'b1']);
  expect(q.stats()).toEqual({ running: 2, waiting: 4 });
  gates.get('a1')!.release();
  await tick();
  // a1's slot went to a2 (a queued first) and moved a to the end of the ring: b's freed slot goes to b2, then c1 before a3.
  gates.get('b1')!.release();
  await tick();
  expect(log).toEqual(['a1', 'b1', 'a2', 'b2']);
  gates.get('a2')!.release();
  await tick();
  expect(log.at(-1)).toBe('c1');
  for (const g of gates.values()) g.release();
  for (let i = 0; i < 5; i++) {
    await tick();
    for (const g of gates.values()) g.release();
  }
  await Promise.all(all);
  expect(log.sort()).toEqual(['a1', 'a2', 'a3', 'b1', 'b2', 'c1']);
  expect(q.stats()).toEqual({ running: 0, waiting: 0 });
});

test("a key's queue is bounded: past it, run refuses at once; other keys are unaffected", async () => {
  const q = new FairLimiter({ total: 4, perKey: 1, queuePerKey: 1 });
  const log: string[] = [];
  const first = gate(log, 'a1');
  const running = q.run('a', first.task);
  const queued = q.run('a', async () => 'a2');
  await expect(q.run('a', async () => 'a3')).rejects.toBeInstanceOf(FairQueueFull);
  await expect(q.run('b', async () => 'b1')).resolves.toBe('b1');
  first.release();
  await running;
  await expect(queued).resolves.toBe('a2');
});

test('a task that throws frees its slot', async () => {
  const q = new FairLimiter({ total: 1, perKey: 1, queuePerKey: 1 });
  await expect(q.run('a', async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
  await expect(q.run('a', async () => 'next')).resolves.toBe('next');
});

/** Takes items until the queue refuses (every waiting key at its limit, or nothing waiting). */
function takeAll<T>(q: FairQueue<T>): Array<{ key: string; item: T }> {
  const out: Array<{ key: string; item: T }> = [];
  for (let next = q.take(); next; next = q.take()) out.push(next);
  return out;
}

describe('FairQueue (services/kernel/fairQueue.ts)', () => {
  test('keeps FIFO order within one key', () => {
    const q = new FairQueue<number>(10);
    for (let i = 0; i < 5; i++) q.push('a', i);
    expect(takeAll(q).map((t) => t.item)).toEqual([0, 1, 2, 3, 4]);
    expect(q.length).toBe(0);
  });

  test('one key never runs more than its limit at once; releasing makes room for its next item', () => {
    const q = new FairQueue<number>(2);
    for (let i = 0; i < 40; i++) q.push('a', i);
    expect(takeAll(q).map((t) => t.item)).toEqual([0, 1]);
    expect(q.runningOf('a')).toBe(2);
    expect(q.take()).toBeUndefined();
    q.release('a');
    expect(q.take()).toEqual({ key: 'a', item: 2 });
    expect(q.length).toBe(37);
  });

  test('a key with 40 waiting items delays another key by at most one turn', () => {
    const q = new FairQueue<string>(2);
    for (let i = 0; i < 40; i++) q.push('attacker', `a${i}`);
    expect(q.take()?.item).toBe('a0');
    q.push('probe', 'p0');
    expect(takeAll(q).map((t) => t.item)).toEqual(['a1', 'p0']);
    // With the attacker at its limit, capacity freed elsewhere goes to the probe.
    q.push('probe', 'p1');
    expect(q.take()?.item).toBe('p1');
  });

  test('free capacity goes round-robin over the keys that wait', () => {
    const q = new FairQueue<string>(100);
    for (let i = 0; i < 3; i++) {
      q.push('a', `a${i}`);
      q.push('b', `b${i}`);
    }
    q.push('c', 'c0');
    expect(takeAll(q).map((t) => t.item)).toEqual(['a0', 'b0', 'c0', 'a1', 'b1', 'a2', 'b2']);
  });

  test('a key at its limit is skipped, not blocking the ring; it takes its turn again after a release', () => {
    const q = new FairQueue<string>(1);
    q.push('a', 'a0');
    q.push('a', 'a1');
    q.push('b', 'b0');
    q.push('b', 'b1');
    expect(takeAll(q).map((t) => t.item)).toEqual(['a0', 'b0']);
    q.release('b');
    expect(q.take()?.item).toBe('b1');
    q.release('a');
    expect(q.take()?.item).toBe('a1');
    expect(q.length).toBe(0);
  });

  test('remove takes a waiting item out (a caller that gave up) and keeps the rest in order', () => {
    const q = new FairQueue<number>(5);
    q.push('a', 1);
    q.push('a', 2);
    q.push('b', 3);
    expect(q.remove('a', (n) => n === 1)).toBe(true);
    expect(q.remove('a', (n) => n === 1)).toBe(false);
    expect(q.remove('b', (n) => n === 3)).toBe(true);
    expect(q.length).toBe(1);
    expect(takeAll(q).map((t) => t.item)).toEqual([2]);
  });

  test('drain empties every key; running counts stay until released', () => {
    const q = new FairQueue<number>(1);
    q.push('a', 1);
    q.push('a', 2);
    q.push('b', 3);
    q.take();
    expect(q.drain().sort()).toEqual([2, 3]);
    expect(q.length).toBe(0);
    expect(q.runningOf('a')).toBe(1);
    q.release('a');
    expect(q.runningOf('a')).toBe(0);
  });

  test('refuses a limit below 1', () => {
    expect(() => new FairQueue(0)).toThrow(RangeError);
  });
});
