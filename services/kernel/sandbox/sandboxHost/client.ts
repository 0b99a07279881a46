import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { HostSettings } from './hostProcess';
import type { CodeTask, DryRunTask, HostMessage, HostRequest } from './protocol';

/**
 * The parent's side of the sandbox host: forks the host process on first use, restarts it
 * with backoff whenever it exits (killed, crashed, out of heap), and enforces every deadline a
 * second time from outside: a call the host has started but not answered within its own
 * deadline plus `marginMs` gets the timeout answer, and the host is killed and replaced. A host
 * that stops answering pings for `stallMs` is killed too.
 *
 * Calls in flight when the host dies are sent again, once, to the next host: a tenant's code
 * and a dry run have no side effects (no network, no writes; a dry run's table reads only
 * read), so running them again is invisible, and it spares the other calls that shared the
 * host with the one that brought it down (kill -9 of the host, a native fault in one thread,
 * the outer deadline of another call). A call whose host dies twice under it gets the `died`
 * answer (the sandbox stopped unexpectedly): a poisonous call can take its host down at most twice.
 */
export interface SandboxHostSettings extends HostSettings {
  /** --max-old-space-size of the host process (its main thread; threads have their own caps). */
  heapMb: number;
  /** Outer margin over a call's own deadline before the parent kills the host. */
  marginMs: number;
  /** A host that answers no ping for this long is killed and replaced. */
  stallMs: number;
  /** Wall-clock limit of one dry run once it holds a graph thread. */
  dryRunTimeoutMs: number;
}

/** What the host runs: a code node or a dry run, each with its task. */
export type HostTask = { kind: 'code'; task: CodeTask } | { kind: 'dryRun'; task: DryRunTask };

export type HostCall<R> = HostTask & HostCallOptions<R>;

interface HostCallOptions<R> {
  workspaceId: string;
  /** The host's own deadline for the task, from when it starts; the parent adds `marginMs`. */
  deadlineMs: number;
  /** The answer when the parent's outer deadline fires. */
  timedOut(): R;
  /** The answer when the host died under the call twice. */
  died(): R;
  /** Requests the host sends on behalf of the call (a dry run's table reads). */
  onCall?(op: string, args: unknown): Promise<unknown>;
  signal?: AbortSignal;
  /** The answer when `signal` aborts before the call started. */
  canceled?(): R;
}

type Live<R> = HostCall<R> & {
  id: number;
  attempts: number;
  host?: Host;
  timer?: NodeJS.Timeout;
  resolve(result: R): void;
  reject(err: Error): void;
};

interface Host {
  child: ChildProcess;
  ready: boolean;
  startedAt: number;
  lastPong: number;
  pingTimer?: NodeJS.Timeout;
  /** Set when the parent killed it: the calls it held (except the one that overran) are retried. */
  killedBy?: string;
  exited?: boolean;
}

/** Restarts, crashes and kills of sandbox hosts in this process, for /metrics and tests. */
export const sandboxHostStats = { starts: 0, restarts: 0, deadlineKills: 0, stallKills: 0 };

const PING_MS = 1_000;
/** Consecutive hosts that die before reporting ready, after which waiting calls are refused. */
const MAX_FAILED_STARTS = 5;
/** A host not ready this long after its fork is killed and replaced (a cold start under load takes a few seconds). */
const START_DEADLINE_MS = 60_000;
/** A host that lived this long resets the backoff. */
const HEALTHY_UPTIME_MS = 30_000;

function hostEntry(): { file: string; args: string[] } {
  if (__filename.endsWith('.ts'))
    return { file: path.join(__dirname, 'tsEntry.bootstrap.js'), args: [path.join(__dirname, 'hostProcess.ts')] };
  return { file: path.join(__dirname, 'hostProcess.js'), args: [] };
}

export class SandboxHostClient {
  private host: Host | undefined;
  private readonly calls = new Map<number, Live<unknown>>();
  private nextId = 1;
  private failures = 0;
  private failedStarts = 0;
  private restartTimer: NodeJS.Timeout | undefined;
  private closed = false;
  private readonly idle: Array<() => void> = [];

  constructor(private readonly settings: SandboxHostSettings) {}

  get dryRunTimeoutMs(): number {
    return this.settings.dryRunTimeoutMs;
  }

  /** Pid of the current host process (tests kill it), or undefined while none runs. */
  get pid(): number | undefined {
    return this.host?.ready ? this.host.child.pid : undefined;
  }

  call<R>(call: HostCall<R>): Promise<R> {
    if (this.closed) return Promise.reject(new Error('The sandbox is shutting down'));
    return new Promise<R>((resolve, reject) => {
      const live: Live<R> = { ...call, id: this.nextId++, attempts: 0, resolve, reject };
      this.calls.set(live.id, live);
      this.host?.child.channel?.ref();
      call.signal?.addEventListener('abort', () => this.abort(live), { once: true });
      if (this.host?.ready) this.send(live);
      else this.ensureHost();
    });
  }

  /** Waits for calls in flight (each bounded by its deadline), then stops the host. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.calls.size > 0) await new Promise<void>((resolve) => this.idle.push(resolve));
    clearTimeout(this.restartTimer);
    const host = this.host;
    this.host = undefined;
    if (!host) return;
    clearInterval(host.pingTimer);
    host.child.removeAllListeners('exit');
    const exited = new Promise<void>((resolve) => host.child.once('exit', () => resolve()));
    if (host.child.connected) host.child.disconnect();
    const timer = setTimeout(() => host.child.kill('SIGKILL'), 2_000);
    await exited;
    clearTimeout(timer);
  }

  private abort(live: Live<unknown>): void {
    if (!this.calls.has(live.id) || live.timer) return; // started: it ends within its deadline
    if (live.host?.child.connected) live.host.child.send({ type: 'cancel', id: live.id } satisfies HostRequest);
    this.settle(live, live.canceled ? live.canceled() : live.timedOut());
  }

  private settle(live: Live<unknown>, result: unknown): void {
    clearTimeout(live.timer);
    if (!this.calls.delete(live.id)) return;
    live.resolve(result);
    this.checkIdle();
  }

  /** An idle host does not keep this process alive; waiters of close() go on. */
  private checkIdle(): void {
    if (this.calls.size > 0) return;
    this.host?.child.channel?.unref();
    for (const resolve of this.idle.splice(0)) resolve();
  }

  private send(live: Live<unknown>): void {
    const host = this.host!;
    live.host = host;
    live.attempts++;
    const base = { id: live.id, workspaceId: live.workspaceId };
    const msg: HostRequest =
      live.kind === 'code'
        ? { type: 'code', ...base, task: live.task }
        : { type: 'dryRun', ...base, task: live.task, timeoutMs: live.deadlineMs };
    host.child.send(msg);
  }

  private ensureHost(): void {
    if (this.host || this.restartTimer || this.closed) return;
    this.spawn();
  }

  private spawn(): void {
    const { file, args } = hostEntry();
    const child = fork(file, args, {
      execArgv: [`--max-old-space-size=${this.settings.heapMb}`],
      env: { ...process.env, SANDBOX_HOST_SETTINGS: JSON.stringify(this.hostSettings()) },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      serialization: 'advanced',
    });
    if (this.calls.size === 0) child.channel?.unref();
    const host: Host = { child, ready: false, startedAt: Date.now(), lastPong: Date.now() };
    this.host = host;
    sandboxHostStats.starts++;
    child.on('message', (msg: HostMessage) => this.onMessage(host, msg));
    // A fork that fails (EAGAIN, ENOMEM) emits 'error' without 'exit': treat it as a host that died young.
    child.on('error', () => {
      if (child.pid === undefined) this.onExit(host, null, null);
    });
    child.once('exit', (code, signal) => this.onExit(host, code, signal));
    host.pingTimer = setInterval(() => {
      if (!host.ready) {
        if (Date.now() - host.startedAt > START_DEADLINE_MS) this.kill(host, `not ready after ${START_DEADLINE_MS} ms`);
        return;
      }
      if (Date.now() - host.lastPong > this.settings.stallMs) {
        sandboxHostStats.stallKills++;
        this.kill(host, `no answer to pings for ${this.settings.stallMs} ms`);
        return;
      }
      if (child.connected) child.send({ type: 'ping', seq: 0 } satisfies HostRequest);
    }, PING_MS);
    host.pingTimer.unref();
  }

  private hostSettings(): HostSettings {
    const { codeThreads, codePerWorkspace, codeKillGraceMs, graphThreads, graphPerWorkspace, threadHeapMb, graphHeapMb } = this.settings;
    return { codeThreads, codePerWorkspace, codeKillGraceMs, graphThreads, graphPerWorkspace, threadHeapMb, graphHeapMb };
  }

  private kill(host: Host, reason: string): void {
    if (host.killedBy) return;
    host.killedBy = reason;
    host.child.kill('SIGKILL');
  }

  private onMessage(host: Host, msg: HostMessage): void {
    if (host !== this.host) return;
    host.lastPong = Date.now();
    switch (msg.type) {
      case 'ready':
        host.ready = true;
        this.failedStarts = 0;
        for (const live of this.calls.values()) if (!live.host) this.send(live);
        return;
      case 'pong':
        return;
      case 'started': {
        const live = this.calls.get(msg.id);
        if (!live || live.host !== host) return;
        live.timer = setTimeout(() => {
          sandboxHostStats.deadlineKills++;
          this.settle(live, live.timedOut());
          this.kill(host, `a ${live.kind} call overran its deadline of ${live.deadlineMs} ms`);
        }, live.deadlineMs + this.settings.marginMs);
        return;
      }
      case 'call': {
        const live = this.calls.get(msg.id);
        const answer = live?.onCall ? live.onCall(msg.op, msg.args) : Promise.reject(new Error(`No handler for ${msg.op}`));
        answer.then(
          (value) =>
            host.child.connected &&
            host.child.send({ type: 'reply', id: msg.id, callId: msg.callId, ok: true, value } satisfies HostRequest),
          (err: unknown) =>
            host.child.connected &&
            host.child.send({
              type: 'reply',
              id: msg.id,
              callId: msg.callId,
              ok: false,
              message: err instanceof Error ? err.message : String(err),
            } satisfies HostRequest),
        );
        return;
      }
      case 'failed': {
        const live = this.calls.get(msg.id);
        if (!live) return;
        this.calls.delete(live.id);
        clearTimeout(live.timer);
        live.reject(new Error(msg.message));
        this.checkIdle();
        return;
      }
      default: {
        const live = this.calls.get(msg.id);
        if (live && live.host === host) this.settle(live, msg.result);
      }
    }
  }

  private onExit(host: Host, code: number | null, signal: NodeJS.Signals | null): void {
    if (host.exited) return;
    host.exited = true;
    clearInterval(host.pingTimer);
    if (this.host === host) this.host = undefined;
    const uptime = Date.now() - host.startedAt;
    if (!host.ready) this.failedStarts++;
    this.failures = uptime >= HEALTHY_UPTIME_MS ? 0 : this.failures + 1;
    const cause = host.killedBy ?? `exited (${signal ?? `code ${code}`})`;
    for (const live of [...this.calls.values()]) {
      if (live.host !== host) continue;
      clearTimeout(live.timer);
      live.timer = undefined;
      live.host = undefined;
      if (live.attempts >= 2) this.settle(live, live.died());
    }
    if (this.failedStarts >= MAX_FAILED_STARTS) {
      const failure = new Error(`The sandbox host could not start: it ${cause}`);
      for (const live of [...this.calls.values()]) {
        this.calls.delete(live.id);
        live.reject(failure);
      }
      this.checkIdle();
    }
    if (this.closed && this.calls.size === 0) return;
    // Comes back by itself, with backoff while it keeps dying young.
    sandboxHostStats.restarts++;
    const delay = this.failures <= 1 ? 0 : Math.min(5_000, 100 * 2 ** (this.failures - 2));
    this.restartTimer = setTimeout(() => {
      this.restartTimer = undefined;
      if (!this.host && !(this.closed && this.calls.size === 0)) this.spawn();
    }, delay);
    // Calls waiting for the new host keep this process alive; an idle restart does not.
    if (this.calls.size === 0) this.restartTimer.unref();
  }
}
