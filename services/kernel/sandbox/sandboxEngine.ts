import { createRequire } from 'node:module';
import {
  newQuickJSWASMModuleFromVariant,
  newVariant,
  RELEASE_SYNC,
  Scope,
  type QuickJSContext,
  type QuickJSHandle,
  type QuickJSRuntime,
  type QuickJSWASMModule,
} from 'quickjs-emscripten';

/**
 * The QuickJS executor of the code node. It runs inside a code thread of the sandbox host (services/kernel/sandbox/sandboxHost/codeThread.ts),
 * never on the main thread of the API or a worker: callers use `runUserCode` of
 * services/kernel/sandbox/sandbox.ts, which runs it in the sandbox host process (services/kernel/sandbox/sandboxHost/) under
 * a hard wall-clock deadline enforced from outside (the thread is terminated and replaced).
 *
 * Isolation model: the guest has only the ECMAScript built-ins of a fresh QuickJS context plus
 * the `input` and `console` parameters. There is no `process`, `require`, module loader,
 * `fetch`, timers, filesystem or environment, and no host object is ever handed in: values
 * cross the boundary as JSON text only. Each call gets its own runtime (memory limit, stack
 * limit, interrupt deadline) that is disposed afterwards; the WASM module is loaded once per thread.
 *
 * Caveats:
 * - The interrupt deadline and memory limit here are the first line only: an `async` function
 *   turns QuickJS's interrupt into a rejected promise the guest can ignore, and a GC-heavy
 *   allocation loop can overrun the interrupt; the outer deadline covers both.
 * - The memory limit counts everything the runtime allocates, including the parsed `input`,
 *   ArrayBuffers and TypedArrays (through the WASM memory's maximum, see getModule).
 * - If the WASM engine itself faults (e.g. the host's native stack overflows on pathological
 *   nesting), the module is discarded and reloaded on the next call.
 */

export type SandboxLogLevel = 'debug' | 'info' | 'warn' | 'error';
export interface SandboxLog {
  level: SandboxLogLevel;
  message: string;
}
export type SandboxErrorKind = 'timeout' | 'memory' | 'syntax' | 'runtime' | 'output';
export type SandboxResult =
  { ok: true; output: unknown; logs: SandboxLog[] } | { ok: false; error: { kind: SandboxErrorKind; message: string }; logs: SandboxLog[] };

export interface SandboxOptions {
  /** Wall-clock budget for compiling, running (including awaited jobs) and serialising. Default 1000 ms. */
  timeoutMs?: number;
  /** QuickJS heap limit for the call. Default 32 MiB. */
  memoryLimitBytes?: number;
  /** QuickJS stack limit. Default 256 KiB (see SANDBOX_DEFAULTS). */
  maxStackBytes?: number;
  /** Largest accepted JSON output (UTF-8 bytes). Default 1 MiB. */
  maxOutputBytes?: number;
}

/**
 * Defaults. `maxStackBytes` is 256 KiB rather than 512 KiB: with the release WASM build, plain
 * recursion at a 512 KiB QuickJS stack exhausts V8's native stack before QuickJS notices, which
 * faults the engine instead of raising a catchable "stack overflow" inside the guest.
 */
export const SANDBOX_DEFAULTS = {
  timeoutMs: 1000,
  memoryLimitBytes: 32 * 1024 * 1024,
  maxStackBytes: 256 * 1024,
  maxOutputBytes: 1024 * 1024,
} as const;

/** Per-entry cap on captured console messages (UTF-8 bytes) and on the number of entries kept. */
export const LOG_MESSAGE_MAX_BYTES = 2048;
export const LOG_MAX_ENTRIES = 100;

const LEVELS: readonly SandboxLogLevel[] = ['debug', 'info', 'warn', 'error'];
/** `new AsyncFunction(...)` puts the body after two generated lines: `(async function anonymous(input,console\n) {\n`. */
const BODY_LINE_OFFSET = 2;

/**
 * Evaluated once per context before any user code, so it captures pristine built-ins.
 * Everything it returns stays on the host side; the guest only ever sees `console`.
 */
const HARNESS = `(function (hostLog) {
  'use strict';
  var AsyncFunction = (async function () {}).constructor;
  var apply = Reflect.apply;
  var parse = JSON.parse;
  var stringify = JSON.stringify;
  var toStr = String;
  var slice = String.prototype.slice;
  var freeze = Object.freeze;
  var ErrorCtor = Error;
  var LOG_CHARS = ${LOG_MESSAGE_MAX_BYTES};
  function cut(s, n) { return apply(slice, s, [0, n]); }
  function fmt(v) {
    if (typeof v === 'string') return v;
    try {
      if (v instanceof ErrorCtor) return toStr(v.name) + ': ' + toStr(v.message);
      var s = apply(stringify, undefined, [v]);
      return s === undefined ? toStr(v) : s;
    } catch (e) {
      try { return toStr(v); } catch (e2) { return '[unprintable]'; }
    }
  }
  function logger(level) {
    return function () {
      var out = '';
      for (var i = 0; i < arguments.length && out.length <= LOG_CHARS; i++) out += (i > 0 ? ' ' : '') + fmt(arguments[i]);
      hostLog(level, cut(out, LOG_CHARS));
    };
  }
  var guestConsole = freeze({ log: logger(1), info: logger(1), warn: logger(2), error: logger(3), debug: logger(0) });
  function field(e, k) {
    try { var v = e[k]; return v === undefined || v === null ? undefined : cut(toStr(v), 4096); } catch (x) { return undefined; }
  }
  return freeze({
    compile: function (src) { return new AsyncFunction('input', 'console', src); },
    run: function (fn, json) {
      var input = json === undefined ? undefined : apply(parse, undefined, [json]);
      return apply(fn, undefined, [input, guestConsole]);
    },
    serialise: function (v) { var s = apply(stringify, undefined, [v]); return s === undefined ? 'null' : s; },
    describe: function (e) {
      var d;
      if ((typeof e === 'object' && e !== null) || typeof e === 'function') {
        d = { name: field(e, 'name'), message: field(e, 'message'), stack: field(e, 'stack'), lineNumber: field(e, 'lineNumber') };
      } else {
        var m;
        try { m = cut(toStr(e), 4096); } catch (x) { m = 'unknown error'; }
        d = { message: m };
      }
      return apply(stringify, undefined, [d]);
    },
  });
})`;

/**
 * The release (non-asyncify) build, with its Emscripten glue loaded through require() instead
 * of the package's dynamic import(), which jest's CommonJS environment refuses.
 */
const SYNC_VARIANT: typeof RELEASE_SYNC = {
  ...RELEASE_SYNC,
  importModuleLoader: async () =>
    createRequire(require.resolve('quickjs-emscripten'))('@jitl/quickjs-wasmfile-release-sync/emscripten-module'),
};

/**
 * Why the memory limit needs a second line: QuickJS counts its heap with malloc_usable_size(),
 * which the Emscripten build stubs to 0, so `setMemoryLimit` only adds 8 bytes of overhead per
 * allocation and refuses single allocations over the limit; 300 live 1 MiB TypedArrays (or
 * strings) pass a 32 MiB limit. Every allocation, whatever its kind, ends in the module's
 * WebAssembly memory, so that memory is created here with a `maximum`: once the guest has used
 * it up, malloc fails inside QuickJS and the guest gets its ordinary "out of memory" error.
 * The maximum is the call's limit plus a fixed headroom for the engine's own static data and
 * stack (WASM_HEADROOM_BYTES), at least the module's initial 16 MiB.
 */
const WASM_PAGE = 64 * 1024;
const WASM_INITIAL_BYTES = 16 * 1024 * 1024;
export const WASM_HEADROOM_BYTES = 4 * 1024 * 1024;

/** The slice of WebAssembly.Memory used here (the project's TypeScript libs carry no WebAssembly types). */
interface WasmMemory {
  readonly buffer: ArrayBuffer;
}
const WasmMemoryCtor = (
  globalThis as unknown as { WebAssembly: { Memory: new (descriptor: { initial: number; maximum: number }) => WasmMemory } }
).WebAssembly.Memory;

interface LoadedModule {
  promise: Promise<QuickJSWASMModule>;
  memory: WasmMemory;
  maxBytes: number;
}
let loaded: LoadedModule | undefined;
const faultedModules = new WeakSet<QuickJSWASMModule>();

function wasmMaxBytes(memoryLimitBytes: number): number {
  return Math.max(WASM_INITIAL_BYTES, Math.ceil((memoryLimitBytes + WASM_HEADROOM_BYTES) / WASM_PAGE) * WASM_PAGE);
}

function loadModule(maxBytes: number): LoadedModule {
  const memory = new WasmMemoryCtor({ initial: WASM_INITIAL_BYTES / WASM_PAGE, maximum: maxBytes / WASM_PAGE });
  const promise = newQuickJSWASMModuleFromVariant(newVariant(SYNC_VARIANT, { wasmMemory: memory as never }));
  const entry = { promise, memory, maxBytes };
  promise.catch(() => {
    if (loaded === entry) loaded = undefined;
  });
  return entry;
}

/** The module whose memory fits `memoryLimitBytes` (a call with another limit gets a fresh module). */
async function getModule(memoryLimitBytes: number): Promise<QuickJSWASMModule> {
  const maxBytes = wasmMaxBytes(memoryLimitBytes);
  for (let attempt = 0; ; attempt++) {
    if (!loaded || loaded.maxBytes !== maxBytes) loaded = loadModule(maxBytes);
    const current = loaded;
    const mod = await current.promise;
    if (!faultedModules.has(mod) || attempt > 0) return mod;
    if (loaded === current) loaded = undefined;
  }
}

function discardModule(mod: QuickJSWASMModule): void {
  faultedModules.add(mod);
}

/**
 * Bytes of WebAssembly memory the module holds now. WASM memory never shrinks, so a thread
 * whose module grew past its initial size is replaced after the call (see codeThread.ts).
 */
export function moduleMemoryBytes(): number {
  return loaded?.memory.buffer.byteLength ?? 0;
}

/** The initial WASM memory of a module; growth past it means a call used that much. */
export const MODULE_INITIAL_BYTES = WASM_INITIAL_BYTES;

/** A host-side exception coming out of the WASM engine (not a guest error): the module is unsafe afterwards. */
function isEngineFault(err: unknown): err is Error {
  if (!(err instanceof Error)) return false;
  if (err instanceof RangeError && /call stack/i.test(err.message)) return true;
  return err.constructor?.name === 'RuntimeError';
}

function truncateUtf8(text: string, maxBytes: number): string {
  if (Buffer.byteLength(text) <= maxBytes) return text;
  const ellipsis = '…';
  const cut = Buffer.from(text)
    .subarray(0, maxBytes - Buffer.byteLength(ellipsis))
    .toString('utf8');
  return cut.replace(/\uFFFD+$/, '') + ellipsis;
}

interface Described {
  name?: string;
  message?: string;
  stack?: string;
  lineNumber?: string;
}

type Failure = { kind: SandboxErrorKind; message: string };

export type SandboxLimits = Required<SandboxOptions>;

/**
 * Loads the WASM module ahead of the first call and runs one small program on it (a sandbox
 * thread does this before it reports ready). V8 compiles WASM functions on their first call: on
 * a busy machine that compilation made a new thread's first call, even fibonacci(10), overrun
 * the 1 s limit. Here it happens before the thread takes a task, off any call's budget.
 */
export async function warmUp(): Promise<void> {
  const mod = await getModule(SANDBOX_DEFAULTS.memoryLimitBytes);
  execute(mod, WARM_UP_SOURCE, JSON.stringify({ items: [1, 2, 3] }), { ...SANDBOX_DEFAULTS, timeoutMs: 60_000 }, Date.now);
}

/** Parses, compiles, runs (with an await and a log) and serialises: the paths of an ordinary call. */
const WARM_UP_SOURCE =
  'const n = await Promise.resolve(input.items.length);\nconsole.log("warm", n);\nfunction fib(k) { return k < 2 ? k : fib(k - 1) + fib(k - 2); }\nreturn { n, fib: fib(10), s: JSON.stringify(input) };';

/**
 * Runs `source` (already validated by services/kernel/sandbox/sandbox.ts) with the input given as JSON text.
 * See `runUserCode` in services/kernel/sandbox/sandbox.ts for the contract. `clock` (ms) measures the time
 * limit; tests inject one to play an idle or an overloaded machine without racing the real one.
 */
export async function executeCode(
  source: string,
  inputJson: string | undefined,
  limits: SandboxLimits,
  clock: () => number = Date.now,
): Promise<SandboxResult> {
  const mod = await getModule(limits.memoryLimitBytes);
  return execute(mod, source, inputJson, limits, clock);
}

function execute(
  mod: QuickJSWASMModule,
  source: string,
  inputJson: string | undefined,
  limits: SandboxLimits,
  clock: () => number,
): SandboxResult {
  const logs: SandboxLog[] = [];
  const deadline = clock() + limits.timeoutMs;
  let interrupted = false;
  let runtime: QuickJSRuntime | undefined;
  let context: QuickJSContext | undefined;
  const scope = new Scope();
  let faulted = false;

  const sourceLines = source.split('\n').length;
  const timeoutFailure = (): Failure => ({ kind: 'timeout', message: `Code exceeded its time limit of ${limits.timeoutMs} ms` });
  const memoryFailure = (): Failure => ({ kind: 'memory', message: `Code exceeded its memory limit of ${limits.memoryLimitBytes} bytes` });
  const fail = (error: Failure): SandboxResult => ({ ok: false, error, logs });

  try {
    runtime = mod.newRuntime();
    runtime.setMemoryLimit(limits.memoryLimitBytes);
    runtime.setMaxStackSize(limits.maxStackBytes);
    runtime.setInterruptHandler(() => {
      if (clock() > deadline) interrupted = true;
      return interrupted;
    });
    context = runtime.newContext();
    const ctx = context;
    const rt = runtime;

    const hostLog = scope.manage(
      ctx.newFunction('hostLog', (levelHandle, messageHandle) => {
        if (logs.length >= LOG_MAX_ENTRIES) return;
        if (ctx.typeof(messageHandle) !== 'string') return;
        // The harness already cut the message to LOG_MESSAGE_MAX_BYTES characters; never copy more.
        const length = ctx.getProp(messageHandle, 'length').consume((h) => ctx.getNumber(h));
        if (!(length <= LOG_MESSAGE_MAX_BYTES * 2)) return;
        const level = LEVELS[ctx.getNumber(levelHandle)] ?? 'info';
        logs.push({ level, message: truncateUtf8(ctx.getString(messageHandle), LOG_MESSAGE_MAX_BYTES) });
      }),
    );

    const factoryResult = ctx.evalCode(HARNESS, 'sandbox-harness.js', { type: 'global', strict: true });
    if (factoryResult.error) {
      scope.manage(factoryResult.error);
      return fail(interrupted ? timeoutFailure() : memoryFailure());
    }
    const factory = scope.manage(factoryResult.value);
    const harnessResult = ctx.callFunction(factory, ctx.undefined, hostLog);
    if (harnessResult.error) {
      scope.manage(harnessResult.error);
      return fail(interrupted ? timeoutFailure() : memoryFailure());
    }
    const harness = scope.manage(harnessResult.value);
    const fn = (name: string) => scope.manage(ctx.getProp(harness, name));
    const compile = fn('compile');
    const run = fn('run');
    const serialise = fn('serialise');
    const describeFn = fn('describe');

    /** Turns a guest error into a failure of the given phase (after ruling out timeout and memory). */
    const classify = (errorHandle: QuickJSHandle, phase: 'syntax' | 'runtime' | 'output'): Failure => {
      if (interrupted || clock() > deadline) return timeoutFailure();
      // QuickJS throws `null` when it cannot even allocate its "out of memory" error
      // (JS_ThrowError2); by the time we look, unwinding has freed the memory, so a thrown null
      // cannot be told apart from a guest's own `throw null`. Name both rather than print "null".
      if (ctx.sameValue(errorHandle, ctx.null)) {
        return { kind: 'memory', message: `${memoryFailure().message}, or it threw null` };
      }
      const described = ctx.callFunction(describeFn, ctx.undefined, errorHandle);
      if (described.error) {
        scope.manage(described.error);
        return interrupted ? timeoutFailure() : memoryFailure();
      }
      const text = scope.manage(described.value);
      let info: Described = {};
      try {
        info = JSON.parse(ctx.getString(text)) as Described;
      } catch {
        info = { message: 'unknown error' };
      }
      if (info.name === 'InternalError' && (info.message === 'out of memory' || info.message === 'string too long')) {
        return { kind: 'memory', message: `${memoryFailure().message} (${info.message})` };
      }
      let line: number | undefined;
      const fromStack = info.stack?.match(/<input>:(\d+)/);
      const raw = phase === 'syntax' && info.lineNumber ? Number(info.lineNumber) : fromStack ? Number(fromStack[1]) : NaN;
      // Errors at the end of input point at the generated closing line: report the last source line.
      if (Number.isInteger(raw) && raw - BODY_LINE_OFFSET >= 1) line = Math.min(raw - BODY_LINE_OFFSET, sourceLines);
      const head = info.name ? `${info.name}: ${info.message ?? ''}` : (info.message ?? 'unknown error');
      const message = truncateUtf8(line ? `${head} (line ${line})` : head, 4096);
      if (phase === 'output') return { kind: 'output', message: `Output is not JSON-serialisable: ${message}` };
      return { kind: phase, message };
    };

    // 1. Compile.
    const sourceHandle = scope.manage(ctx.newString(source));
    const compiled = ctx.callFunction(compile, ctx.undefined, sourceHandle);
    if (compiled.error) return fail(classify(scope.manage(compiled.error), 'syntax'));
    const userFn = scope.manage(compiled.value);

    // 2. Run, then drain the job queue until the returned promise settles.
    const inputHandle = inputJson === undefined ? ctx.undefined : scope.manage(ctx.newString(inputJson));
    const started = ctx.callFunction(run, ctx.undefined, userFn, inputHandle);
    if (started.error) return fail(classify(scope.manage(started.error), 'runtime'));
    const promise = scope.manage(started.value);

    let resultHandle: QuickJSHandle;
    for (;;) {
      const state = ctx.getPromiseState(promise);
      if (state.type === 'fulfilled') {
        resultHandle = state.value === promise ? promise : scope.manage(state.value);
        break;
      }
      if (state.type === 'rejected') return fail(classify(scope.manage(state.error), 'runtime'));
      if (interrupted || clock() > deadline) return fail(timeoutFailure());
      if (!rt.hasPendingJob()) {
        return fail({
          kind: 'timeout',
          message: 'Code awaited a promise that can never settle (the sandbox has no timers or I/O)',
        });
      }
      const jobs = rt.executePendingJobs();
      if (jobs.error) {
        const failure = classify(scope.manage(jobs.error), 'runtime');
        return fail(failure);
      }
    }

    // 3. Serialise inside the guest, size-check, parse on the host.
    const serialised = ctx.callFunction(serialise, ctx.undefined, resultHandle);
    if (serialised.error) return fail(classify(scope.manage(serialised.error), 'output'));
    const json = scope.manage(serialised.value);
    const tooLarge = (): SandboxResult =>
      fail({ kind: 'output', message: `Output is larger than the limit of ${limits.maxOutputBytes} bytes` });
    // UTF-16 length is a lower bound of the UTF-8 size: refuse early without copying.
    if (ctx.getProp(json, 'length').consume((h) => ctx.getNumber(h)) > limits.maxOutputBytes) return tooLarge();
    const text = ctx.getString(json);
    if (Buffer.byteLength(text) > limits.maxOutputBytes) return tooLarge();
    let output: unknown;
    try {
      output = JSON.parse(text);
    } catch {
      return fail({ kind: 'output', message: 'Output is not valid JSON' });
    }
    return { ok: true, output, logs };
  } catch (err) {
    if (!isEngineFault(err)) throw err;
    faulted = true;
    discardModule(mod);
    if (interrupted) return fail(timeoutFailure());
    if (err instanceof RangeError)
      return fail({ kind: 'runtime', message: 'InternalError: stack overflow (code is nested or recursing too deeply)' });
    return fail({ kind: 'memory', message: `${memoryFailure().message} (engine fault)` });
  } finally {
    if (!faulted) {
      try {
        scope.dispose();
        context?.dispose();
        runtime?.dispose();
      } catch {
        // A failed dispose means the module's heap can no longer be trusted: start afresh next time.
        discardModule(mod);
      }
    }
  }
}
