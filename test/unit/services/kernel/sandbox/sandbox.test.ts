import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createNodeActivities } from '../../../../../activities/nodes';
import {
  closeSandboxPool,
  KILL_GRACE_MS,
  runUserCode,
  SANDBOX_THREADS,
  sandboxHostPid,
  sandboxHostStats,
  type SandboxResult,
} from '../../../../../services/kernel/sandbox/sandbox';
import { executeCode, SANDBOX_DEFAULTS } from '../../../../../services/kernel/sandbox/sandboxEngine';

/** ECMAScript built-ins a fresh QuickJS context may expose; anything else on the global is a leak. */
const ES_GLOBALS = new Set([
  'AggregateError',
  'Array',
  'ArrayBuffer',
  'BigInt',
  'BigInt64Array',
  'BigUint64Array',
  'Boolean',
  'DataView',
  'Date',
  'decodeURI',
  'decodeURIComponent',
  'encodeURI',
  'encodeURIComponent',
  'Error',
  'escape',
  'eval',
  'EvalError',
  'FinalizationRegistry',
  'Float16Array',
  'Float32Array',
  'Float64Array',
  'Function',
  'globalThis',
  'Infinity',
  'Int16Array',
  'Int32Array',
  'Int8Array',
  'InternalError',
  'isFinite',
  'isNaN',
  'Iterator',
  'JSON',
  'Map',
  'Math',
  'NaN',
  'Number',
  'Object',
  'parseFloat',
  'parseInt',
  'Promise',
  'Proxy',
  'RangeError',
  'ReferenceError',
  'Reflect',
  'RegExp',
  'Set',
  'SharedArrayBuffer',
  'String',
  'Symbol',
  'SyntaxError',
  'TypeError',
  'Uint16Array',
  'Uint32Array',
  'Uint8Array',
  'Uint8ClampedArray',
  'undefined',
  'unescape',
  'URIError',
  'WeakMap',
  'WeakRef',
  'WeakSet',
]);

function expectOk(r: SandboxResult): unknown {
  if (!r.ok) throw new Error(`expected success, got ${r.error.kind}: ${r.error.message}`);
  return r.output;
}

function expectFailure(r: SandboxResult, kind: string, message?: RegExp): void {
  if (r.ok) throw new Error(`expected ${kind} failure, got output ${JSON.stringify(r.output)}`);
  expect(r.error.kind).toBe(kind);
  if (message) expect(r.error.message).toMatch(message);
  // Never a host stack trace: no Node/V8 frames or host file paths.
  expect(r.error.message).not.toMatch(/\bat .*\((?:node:|\/|file:)|node_modules|services\/sandbox/);
}

/**
 * Room for a correct program on a loaded machine: the tests below check outcomes, not speed, and
 * a busy 2-core machine once failed fibonacci(10) at the 1 s default. Tests of the time limit
 * pass their own `timeoutMs` (and use programs that never end) or an injected clock (see the end).
 */
const ROOMY_MS = 30_000;
const run = (source: string, input: unknown, opts?: Parameters<typeof runUserCode>[2]) =>
  runUserCode(source, input, { timeoutMs: ROOMY_MS, ...opts });

afterAll(closeSandboxPool);

describe('sandbox: normal use', () => {
  test('returns a computed value (fibonacci(10) = 55)', async () => {
    const r = await run('function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }\nreturn fib(10);', null);
    expect(expectOk(r)).toBe(55);
  });

  test('uses a deep copy of the input', async () => {
    const input = {
      items: [
        { price: 2, qty: 3 },
        { price: 5, qty: 1 },
      ],
      nested: { flag: true },
    };
    const r = await run(
      'input.nested.flag = false;\nreturn { total: input.items.reduce((s, i) => s + i.price * i.qty, 0), count: input.items.length };',
      input,
    );
    expect(expectOk(r)).toEqual({ total: 11, count: 2 });
    expect(input.nested.flag).toBe(true);
  });

  test('captures console output with levels, formatting, per-message and entry caps', async () => {
    const r = await run(
      [
        'console.log("hello", { a: 1 }, [1, 2]);',
        'console.info("info"); console.warn("careful"); console.error(new TypeError("bad")); console.debug(42, null, undefined);',
        'console.log("x".repeat(10000));',
        'for (let i = 0; i < 200; i++) console.log("line " + i);',
        'return "done";',
      ].join('\n'),
      null,
    );
    expect(expectOk(r)).toBe('done');
    expect(r.logs.slice(0, 5)).toEqual([
      { level: 'info', message: 'hello {"a":1} [1,2]' },
      { level: 'info', message: 'info' },
      { level: 'warn', message: 'careful' },
      { level: 'error', message: 'TypeError: bad' },
      { level: 'debug', message: '42 null undefined' },
    ]);
    expect(Buffer.byteLength(r.logs[5].message)).toBeLessThanOrEqual(2048);
    expect(r.logs[5].message.startsWith('xxxx')).toBe(true);
    expect(r.logs).toHaveLength(100);
  });

  test('supports async style: return await', async () => {
    const r = await run('const v = await Promise.resolve(20);\nconst w = await (async () => v + 1)();\nreturn w * 2;', null);
    expect(expectOk(r)).toBe(42);
  });

  test('undefined output becomes null; nested undefined follows JSON rules', async () => {
    expect(expectOk(await run('return undefined;', null))).toBeNull();
    expect(expectOk(await run('input.x = 1;', {}))).toBeNull();
    expect(expectOk(await run('return { a: undefined, b: [undefined], c: () => 1 };', null))).toEqual({ b: [null] });
  });

  test('a syntax error is kind syntax with the message and line', async () => {
    const r = await run('const a = 1;\nconst b = ;\nreturn a;', null);
    expectFailure(r, 'syntax', /SyntaxError: .*\(line 2\)/);
    expectFailure(await run('const a = 1;\nreturn a +', null), 'syntax', /\(line 2\)$/);
  });

  test('a thrown error is kind runtime with its message and line', async () => {
    expectFailure(await run('const x = 1;\nthrow new Error("boom " + x);', null), 'runtime', /^Error: boom 1 \(line 2\)$/);
    expectFailure(await run('return input.missing.deep;', {}), 'runtime', /TypeError: .*deep/);
    expectFailure(await run('throw "plain string";', null), 'runtime', /^plain string$/);
    expectFailure(await run('await Promise.reject(new RangeError("nope"));', null), 'runtime', /RangeError: nope/);
  });

  test('a runtime SyntaxError (e.g. JSON.parse) is runtime, not syntax', async () => {
    expectFailure(await run('return JSON.parse("{");', null), 'runtime', /SyntaxError/);
  });

  test('output must be JSON-serialisable and within the size cap', async () => {
    expectFailure(await run('return 10n;', null), 'output', /BigInt/);
    expectFailure(await run('const a = {}; a.self = a; return a;', null), 'output', /not JSON-serialisable/);
    expectFailure(await run('return "x".repeat(2 * 1024 * 1024);', null), 'output', /larger than the limit/);
    expectFailure(await run('return "x".repeat(2000);', null, { maxOutputBytes: 1000 }), 'output', /1000 bytes/);
  });

  test('tampering with JSON.stringify does not change how output is serialised', async () => {
    const r = await run('JSON.stringify = () => "{\\"forged\\":true}";\nreturn { real: 1 };', null);
    expect(expectOk(r)).toEqual({ real: 1 });
  });

  test('each call gets a fresh global: nothing leaks between runs', async () => {
    expectOk(await run('globalThis.leak = 1; Object.prototype.polluted = 1; return 1;', null));
    expect(expectOk(await run('return [typeof leak, typeof ({}).polluted];', null))).toEqual(['undefined', 'undefined']);
  });

  test('rejects invalid options and non-JSON input as caller errors', async () => {
    await expect(run('return 1', null, { timeoutMs: 0 })).rejects.toThrow(RangeError);
    await expect(run('return 1', 10n)).rejects.toThrow(/not JSON-serialisable/);
  });
});

describe('sandbox: escape attempts fail', () => {
  test('no host capabilities are visible', async () => {
    const r = await run(
      'return [typeof process, typeof require, typeof fetch, typeof XMLHttpRequest, typeof WebSocket, typeof setTimeout, typeof setInterval, typeof setImmediate, typeof queueMicrotask, typeof module, typeof exports, typeof Buffer, typeof __dirname, typeof globalThis.process, typeof std, typeof os];',
      null,
    );
    expect(expectOk(r)).toEqual(Array(16).fill('undefined'));
  });

  test('require, dynamic import and process are unavailable', async () => {
    expectFailure(await run('return require("fs").readFileSync("/etc/passwd", "utf8");', null), 'runtime', /require.*not defined/);
    expectFailure(
      await run('const fs = await import("fs"); return fs.readFileSync("/etc/passwd", "utf8");', null),
      'runtime',
      /could not load module/,
    );
    expectFailure(await run('return await import("node:child_process");', null), 'runtime');
    expectFailure(await run('return process.mainModule.require("fs");', null), 'runtime', /process.*not defined/);
    expectFailure(await run('return process.env;', null), 'runtime', /process.*not defined/);
  });

  test('network primitives are unavailable', async () => {
    expectFailure(await run('return await fetch("http://127.0.0.1:1/");', null), 'runtime', /fetch.*not defined/);
    expectFailure(await run('return new XMLHttpRequest();', null), 'runtime', /XMLHttpRequest.*not defined/);
    expectFailure(await run('return new WebSocket("ws://127.0.0.1:1/");', null), 'runtime', /WebSocket.*not defined/);
  });

  test('constructor tricks reach only the sandbox global', async () => {
    expectFailure(await run('return this.constructor.constructor("return process")();', null), 'runtime', /process.*not defined/);
    expectFailure(await run('return console.log.constructor("return process")();', null), 'runtime', /process.*not defined/);
    expectFailure(
      await run('return (async function(){}).constructor("return process")().then((p) => p.env);', null),
      'runtime',
      /process.*not defined/,
    );
    const names = expectOk(
      await run('const g = (function(){}).constructor("return globalThis")(); return Object.getOwnPropertyNames(g);', null),
    ) as string[];
    expect(names.length).toBeGreaterThan(10);
    expect(names.filter((n) => !ES_GLOBALS.has(n))).toEqual([]);
    // Same answer through `this` of a sloppy function and through indirect eval.
    const viaThis = expectOk(await run('return Object.getOwnPropertyNames((function(){ return this; })());', null)) as string[];
    expect(viaThis.filter((n) => !ES_GLOBALS.has(n))).toEqual([]);
    const viaEval = expectOk(await run('return (0, eval)("typeof process + typeof require + typeof fetch");', null));
    expect(viaEval).toBe('undefinedundefinedundefined');
  });

  test('Error.prepareStackTrace / captureStackTrace games expose nothing from the host', async () => {
    const r = await run(
      [
        'const found = [];',
        'Error.prepareStackTrace = (err, frames) => {',
        '  for (const f of frames) { try { found.push(typeof f.getThis === "function" ? typeof f.getThis() : "no-getThis"); } catch (e) { found.push("threw"); } }',
        '  return "prepared";',
        '};',
        'const e = new Error("probe");',
        'const stack = e.stack;',
        'return { stackType: typeof stack, hasProcess: typeof process !== "undefined", capture: typeof Error.captureStackTrace, found, mentionsHost: /node_modules|node:|\\/work\\//.test(String(stack)) };',
      ].join('\n'),
      null,
    );
    const out = expectOk(r) as { stackType: string; hasProcess: boolean; capture: string; found: string[]; mentionsHost: boolean };
    expect(out.hasProcess).toBe(false);
    expect(out.capture).toBe('undefined');
    expect(out.mentionsHost).toBe(false);
    expect(Array.isArray(out.found)).toBe(true);
  });

  test('an endless loop is a timeout, and catching it does not help', async () => {
    expectFailure(await run('while (true) {}', null, { timeoutMs: 300 }), 'timeout', /300 ms/);
    expectFailure(await run('for (;;) { try { while (true) {} } catch (e) {} }', null, { timeoutMs: 300 }), 'timeout');
  });

  test('an endless async loop and a never-settling await are timeouts, not hangs', async () => {
    expectFailure(await run('for (;;) await null;', null, { timeoutMs: 300 }), 'timeout');
    expectFailure(await run('await new Promise(() => {});\nreturn 1;', null), 'timeout', /never settle/);
  });

  test('a huge allocation is a memory failure', async () => {
    expectFailure(await run('return new Array(1e9).fill(1).length;', null, { timeoutMs: 30_000 }), 'memory', /memory limit/);
    expectFailure(await run('let s = "x"; for (;;) { s = s + s; s.charCodeAt(s.length - 1); }', null, { timeoutMs: 30_000 }), 'memory');
    expectFailure(
      await run('const a = []; for (;;) a.push("y".repeat(1024) + a.length);', null, {
        timeoutMs: 30_000,
        memoryLimitBytes: 8 * 1024 * 1024,
      }),
      'memory',
    );
  });

  test('running out of memory while QuickJS builds its own error is a memory failure, not "null"', async () => {
    // QuickJS throws null when it cannot allocate the "out of memory" error; a million small
    // objects end that way under the 32 MiB default.
    const million = 'return Array.from({ length: 1000000 }, (_, i) => ({ json: { i } }));';
    expectFailure(await run(million, null, { timeoutMs: 30_000 }), 'memory', /memory limit of 33554432 bytes, or it threw null/);
  });

  test('deep recursion is an error, not a crash, and the sandbox keeps working', async () => {
    expectFailure(await run('function f(n) { return f(n + 1) + 1; }\nreturn f(0);', null), 'runtime', /stack overflow/);
    expectFailure(
      await run('return JSON.stringify((function d(n) { return n ? [d(n - 1)] : 0; })(1e6));', null),
      'runtime',
      /stack overflow/,
    );
    // Pathological parser nesting can exhaust the host's native stack inside the engine; that is contained too.
    const nested = await run('return eval("(".repeat(30000) + "1" + ")".repeat(30000));', null);
    expect(nested.ok).toBe(false);
    expect(expectOk(await run('return 1 + 1;', null))).toBe(2);
  });

  test('200 executions do not leak memory', async () => {
    const sources = [
      'return input.n * 2;',
      'console.log("x".repeat(3000)); return [1, 2, 3];',
      'throw new Error("e");',
      'return 1 +',
      'const a = []; for (let i = 0; i < 20000; i++) a.push({ i }); return a.length;',
      'await null; return { echo: input };',
      'while (true) {}',
    ];
    // Warm up, including one run that grows the WASM heap to its limit.
    await run('return new Array(1e9).fill(1);', null, { timeoutMs: 10_000 });
    // Only the endless loop is meant to time out; the others get room for a loaded machine.
    const limitFor = (source: string) => ({ timeoutMs: source === 'while (true) {}' ? 20 : 5_000 });
    for (let i = 0; i < 10; i++) await run(sources[i % sources.length], { n: i }, limitFor(sources[i % sources.length]));
    const before = process.memoryUsage().rss;
    for (let i = 0; i < 200; i++) {
      const r = await run(sources[i % sources.length], { n: i, pad: 'p'.repeat(1000) }, limitFor(sources[i % sources.length]));
      if (i % sources.length === 0) expect(expectOk(r)).toBe(i * 2);
    }
    const growthMb = (process.memoryUsage().rss - before) / (1024 * 1024);
    expect(growthMb).toBeLessThan(150);
  });
});

/** Issue 10 item 1: guest code never runs on the caller's thread, and a hard deadline outside the sandbox ends every call. */
describe('sandbox: off the main thread, with an outer deadline', () => {
  // Outcomes only: these calls end (the outer deadline), with the right kind; how fast depends on the machine's load.
  const ended = (source: string, opts?: Parameters<typeof runUserCode>[2]) => runUserCode(source, null, opts).then((r) => ({ r }));

  // The issue: the interrupt became a rejected promise, the outer loop went on and the run succeeded after 10 s.
  // Decision: the program asks for 10 s against a 1 s budget, so it fails as a timeout; no bounded `n` is returned.
  test('an async function that swallows the interrupt is stopped at the deadline and fails as a timeout', async () => {
    const { r } = await ended(
      'async function spin(){ for(;;){} } let n=0; const t=Date.now(); while(Date.now()-t < 10000){ spin(); n++ } return {n, ms: Date.now()-t}',
    );
    expectFailure(r, 'timeout', /^Code exceeded its time limit of 1000 ms$/);
  });

  test('for(;;) spin() ends too', async () => {
    const { r } = await ended('async function spin(){ for(;;){} }\nfor(;;) spin();');
    expectFailure(r, 'timeout', /1000 ms/);
  });

  test('an endless microtask chain that never yields to the interrupt ends at the deadline', async () => {
    const { r } = await ended(
      'async function spin(){ for(;;){} }\nconst loop = () => { spin(); return Promise.resolve().then(loop); };\nawait loop();',
      { timeoutMs: 500 },
    );
    expectFailure(r, 'timeout', /500 ms/);
  });

  test('an allocation loop stops near the 1 s deadline (the issue saw 6-8 s)', async () => {
    const { r } = await ended('const a = []; for (;;) a.push(new Uint8Array(1e6));');
    expect(r.ok).toBe(false);
    if (!r.ok) expect(['timeout', 'memory']).toContain(r.error.kind);
  });

  test('recursion inside catch stops near the 1 s deadline (the issue saw 3.4 s)', async () => {
    const { r } = await ended('function f(){ try { f() } catch (e) { f() } }\nf();');
    expect(r.ok).toBe(false);
  });

  test("the caller's event loop keeps turning while guest code spins (the guest runs in another process)", async () => {
    let ticks = 0;
    const ticker = setInterval(() => void ticks++, 20);
    let ticksWhileSpinning = 0;
    try {
      const runs = Array.from({ length: SANDBOX_THREADS }, () => runUserCode('while (true) {}', null, { timeoutMs: 1_500 }));
      // A quick call answers while the spinning ones still run (the caller's loop, the host's routing and a free thread all turn).
      expect(expectOk(await run('return 7;', null, { workspaceId: 'other' }))).toBe(7);
      ticksWhileSpinning = ticks;
      for (const r of await Promise.all(runs)) expectFailure(r, 'timeout');
    } finally {
      clearInterval(ticker);
    }
    expect(ticksWhileSpinning).toBeGreaterThan(0);
    expect(sandboxHostPid()).toBeDefined();
    expect(sandboxHostPid()).not.toBe(process.pid);
  });

  test("a killed thread is replaced and later calls work, including the guest's own timeouts with their logs", async () => {
    const killed = await Promise.all(
      Array.from({ length: SANDBOX_THREADS + 1 }, () => ended('async function s(){ for(;;){} }\nfor(;;) s();', { timeoutMs: 200 })),
    );
    for (const { r } of killed) expectFailure(r, 'timeout', /200 ms/);
    expect(expectOk(await run('return input.n + 1;', { n: 41 }))).toBe(42);
    const inner = await runUserCode('console.log("started");\nwhile (true) {}', null, { timeoutMs: 300 });
    expectFailure(inner, 'timeout', /300 ms/);
    expect(inner.logs).toEqual([{ level: 'info', message: 'started' }]);
    expect(KILL_GRACE_MS).toBeGreaterThan(0);
  });

  test('time spent waiting for a free thread is not charged to the call', async () => {
    // The quick call waits at least the spinners' 2 s for a thread; charged, its 1 s (+ the kill grace) would be gone.
    const spinning = Array.from({ length: SANDBOX_THREADS }, () => runUserCode('while (true) {}', null, { timeoutMs: 2_000 }));
    const quick = runUserCode('let x = 0; for (let i = 0; i < 1e5; i++) x += i; return x;', null, { timeoutMs: 1_000 });
    for (const r of await Promise.all(spinning)) expectFailure(r, 'timeout');
    expect(expectOk(await quick)).toBe(4999950000);
  });
});

/** Issue 26 item 5 (F7): the memory limit counts every allocation, TypedArrays and ArrayBuffers included. */
describe('sandbox: memory limit counts every allocation', () => {
  test('300 live 1 MiB TypedArrays, ArrayBuffers or strings fail as memory under the 32 MiB default', async () => {
    const keepAlive = (make: string) => `const a = []; for (let i = 0; i < 300; i++) a.push(${make}); return a.length;`;
    for (const make of ['new Uint8Array(1 << 20)', 'new ArrayBuffer(1 << 20)', 'new Float64Array(1 << 17)', '"y".repeat(1 << 20) + i']) {
      expectFailure(await runUserCode(keepAlive(make), null, { timeoutMs: 10_000 }), 'memory', /memory limit of 33554432 bytes/);
    }
  });

  test('allocations under the limit still work, and a call after a memory failure starts clean', async () => {
    expect(
      expectOk(
        await runUserCode('const a = []; for (let i = 0; i < 20; i++) a.push(new Uint8Array(1 << 20)); return a.length;', null, {
          timeoutMs: 10_000,
        }),
      ),
    ).toBe(20);
    expectFailure(
      await runUserCode('const a = []; for (;;) a.push(new Uint8Array(1 << 20));', null, {
        timeoutMs: 10_000,
        memoryLimitBytes: 8 * 1024 * 1024,
      }),
      'memory',
    );
    expect(expectOk(await run('return new Uint8Array(1 << 20).length;', null))).toBe(1 << 20);
  });
});

/** Issue 26 items 5 and 7: per-workspace fairness, and a killed host comes back by itself. */
describe('sandbox host: fairness and self-healing', () => {
  test("one workspace's spinning calls do not hold back another workspace's call", async () => {
    const settled: string[] = [];
    const spinning = Array.from({ length: 3 * SANDBOX_THREADS }, (_, i) =>
      runUserCode('while (true) {}', null, { timeoutMs: 1_000, workspaceId: 'ws_attacker' }).then((r) => {
        settled.push(`a${i}`);
        return r;
      }),
    );
    const probe = await run('return input.n * 2;', { n: 21 }, { workspaceId: 'ws_probe' });
    settled.push('probe');
    expect(expectOk(probe)).toBe(42);
    // The probe got a thread while most of the attacker's calls were still queued or spinning.
    expect(settled.indexOf('probe')).toBeLessThan(SANDBOX_THREADS);
    for (const r of await Promise.all(spinning)) expectFailure(r, 'timeout');
  });

  test('a call that cannot get a thread within queueTimeoutMs leaves the queue with a timeout naming the wait', async () => {
    // More spinning calls of one workspace than its share of threads: the last ones must wait.
    const calls = Array.from({ length: 2 * SANDBOX_THREADS }, () =>
      runUserCode('while (true) {}', null, { timeoutMs: 1_000, workspaceId: 'ws_burst', queueTimeoutMs: 100 }),
    );
    const results = await Promise.all(calls);
    const waitedOut = results.filter((r) => !r.ok && /waited 100 ms for a sandbox thread/.test(r.error.message));
    expect(waitedOut.length).toBeGreaterThan(0);
    for (const r of results) expectFailure(r, 'timeout');
  });

  test('kill -9 of the host mid-call: the call runs again on the restarted host and succeeds, later calls work', async () => {
    expect(expectOk(await run('return 1;', null))).toBe(1);
    const first = sandboxHostPid()!;
    const inFlight = Array.from({ length: 3 }, (_, i) =>
      runUserCode('let x = 0; for (let i = 0; i < 2e6; i++) x += i; return input.i;', { i }, { timeoutMs: 20_000, workspaceId: `ws_${i}` }),
    );
    await new Promise((resolve) => setTimeout(resolve, 100));
    process.kill(first, 'SIGKILL');
    const results = await Promise.all(inFlight);
    expect(results.map((r) => expectOk(r))).toEqual([0, 1, 2]);
    expect(expectOk(await run('return 2;', null))).toBe(2);
    expect(sandboxHostPid()).toBeDefined();
    expect(sandboxHostPid()).not.toBe(first);
    expect(sandboxHostStats.restarts).toBeGreaterThan(0);
  });

  test('a host that dies twice under the same call answers it as a runtime failure, then comes back', async () => {
    const killed: number[] = [];
    expect(expectOk(await run('return 1;', null))).toBe(1);
    const call = runUserCode('while (true) {}', null, { timeoutMs: 60_000 });
    for (let death = 0; death < 2; death++) {
      const pid = await waitForHost((p) => p !== undefined && p !== (death === 0 ? undefined : killed[death - 1]));
      killed.push(pid);
      // Give the call time to be handed to this host before killing it.
      await new Promise((resolve) => setTimeout(resolve, 300));
      process.kill(pid, 'SIGKILL');
    }
    expectFailure(await call, 'runtime', /the sandbox stopped unexpectedly/);
    expect(expectOk(await run('return 3;', null))).toBe(3);
  });
});

async function waitForHost(ok: (pid: number | undefined) => boolean): Promise<number> {
  for (let i = 0; i < 600; i++) {
    const pid = sandboxHostPid();
    if (ok(pid)) return pid!;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('the sandbox host did not come back');
}

describe('codeNode activity', () => {
  const env = new MockActivityEnvironment();
  const { codeNode } = createNodeActivities({ orm: undefined as never, allowPrivateNetworks: false });
  const run = (source: string) => env.run(codeNode, { source, input: { a: 1 } });
  // Outcomes other than the time limit, with room for a loaded machine (the default limit is 1 s).
  const roomy = createNodeActivities({ orm: undefined as never, allowPrivateNetworks: false, codeTimeoutMs: ROOMY_MS });
  const runRoomy = (source: string) => env.run(roomy.codeNode, { source, input: { a: 1 } });

  async function failure(p: Promise<unknown>): Promise<ApplicationFailure> {
    const err = await p.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ApplicationFailure);
    return err as ApplicationFailure;
  }

  test('returns output, logs and the attempt number', async () => {
    await expect(runRoomy('console.log("hi"); return input.a + 1;')).resolves.toEqual({
      output: 2,
      logs: [{ level: 'info', message: 'hi' }],
      attempt: 1,
    });
  });

  test('syntax and output errors are non-retryable; runtime, timeout and memory are retryable with their type', async () => {
    const syntax = await failure(runRoomy('return ('));
    expect([syntax.type, syntax.nonRetryable]).toEqual(['CodeSyntax', true]);
    const runtime = await failure(runRoomy('console.log("before"); throw new Error("boom");'));
    expect([runtime.type, runtime.nonRetryable, runtime.message]).toEqual(['CodeRuntime', false, 'Error: boom (line 1)']);
    expect(runtime.details).toEqual([{ kind: 'runtime', logs: [{ level: 'info', message: 'before' }] }]);
    const timeout = await failure(run('while (true) {}'));
    expect([timeout.type, timeout.nonRetryable]).toEqual(['CodeTimeout', false]);
    const memory = await failure(runRoomy('return new ArrayBuffer(2 ** 30).byteLength;'));
    expect([memory.type, memory.nonRetryable]).toEqual(['CodeMemory', false]);
    const output = await failure(runRoomy('return 1n;'));
    expect([output.type, output.nonRetryable]).toEqual(['CodeOutput', true]);
  });
});

/**
 * The time limit is measured by the engine's clock (Date.now in production). With an injected
 * clock the limit is tested without racing the machine: a correct program is never failed by a
 * slow machine here, and a limit test cannot pass by the machine being fast.
 */
describe('sandbox engine: the time limit follows its clock', () => {
  const limits = { ...SANDBOX_DEFAULTS };

  test('a clock that runs past the limit stops the program as a timeout, and the logs before it are kept', async () => {
    let now = 0;
    const clock = () => (now += 100); // every reading 100 ms later: the limit passes after about ten interrupt checks
    const r = await executeCode('console.log("started");\nwhile (true) {}', undefined, limits, clock);
    expectFailure(r, 'timeout', /^Code exceeded its time limit of 1000 ms$/);
    expect(r.logs).toEqual([{ level: 'info', message: 'started' }]);
  });

  test('an awaited loop is stopped by the same clock', async () => {
    let now = 0;
    const r = await executeCode('for (;;) await null;', undefined, limits, () => (now += 100));
    expectFailure(r, 'timeout', /1000 ms/);
  });

  test('a clock that stands still lets a long computation finish under a 1 ms limit', async () => {
    // 200,000 iterations take far longer than 1 ms on any machine: only the clock decides.
    const r = await executeCode(
      'let x = 0; for (let i = 0; i < 2e5; i++) x += i; return x;',
      undefined,
      { ...limits, timeoutMs: 1 },
      () => 0,
    );
    expect(expectOk(r)).toBe(19999900000);
  });
});
