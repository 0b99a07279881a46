import { FairQueue, FairQueueFull } from '../../services/fairQueue';

/** A task that runs until released, recording its start. */
function gate(log: string[], name: string) {
  let open!: () => void;
  const done = new Promise<void>((r) => (open = r));
  return { task: () => (log.push(name), done), release: () => open() };
}

const tick = () => new Promise((r) => setImmediate(r));

test('at most perKey of one key and total overall run; waiting keys are served round-robin', async () => {
  const q = new FairQueue({ total: 2, perKey: 1, queuePerKey: 5 });
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
  const q = new FairQueue({ total: 4, perKey: 1, queuePerKey: 1 });
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
  const q = new FairQueue({ total: 1, perKey: 1, queuePerKey: 1 });
  await expect(q.run('a', async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
  await expect(q.run('a', async () => 'next')).resolves.toBe('next');
});
