import { FairQueue } from '../../services/sandboxHost/fairQueue';

/** Takes items until the queue refuses (every waiting key at its limit, or nothing waiting). */
function takeAll<T>(q: FairQueue<T>): Array<{ key: string; item: T }> {
  const out: Array<{ key: string; item: T }> = [];
  for (let next = q.take(); next; next = q.take()) out.push(next);
  return out;
}

describe('sandbox host FairQueue (services/sandboxHost/fairQueue.ts)', () => {
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
