/**
 * `useTestStack()`: the setup every integration file repeats, as one call at the top of the
 * file. It registers `beforeAll` (app, worker, workspace) and `afterAll` (close) and returns a
 * lazy handle: read its fields inside hooks and tests, never at module load (they throw
 * before `beforeAll` ran). Do not destructure it at the top level.
 */
import type { Writable } from 'node:stream';
import type { AnyRoute } from '../../api/http/route';
import type { AppConfig } from '../../services/kernel/config';
import { createWorkspace, startTestApp, startTestWorker, type TestApp, type TestWorker, type WorkspaceFixture } from '../support/harness';
import { client, type TestClient } from './client';

export interface TestStackOptions {
  /** Config overrides of the app (and the worker beside it). */
  config?: Partial<AppConfig>;
  /** Routes replacing the service's own (tests of the route machinery itself), as `startTestApp`'s. */
  routes?: AnyRoute[];
  /** Temporal options of `startTestApp` (namespace, outbox dispatcher, log stream…). */
  temporal?: Parameters<typeof startTestApp>[2];
  /** `false`: no worker (routes only); an object: worker options. */
  worker?: false | { maxCachedWorkflows?: number; identity?: string; codeTimeoutMs?: number };
  workspaceName?: string;
}

export interface TestStackHandle {
  readonly app: TestApp;
  /** Throws when the stack was started with `worker: false`. */
  readonly worker: TestWorker;
  /** The default workspace: owner, password, workspace key. */
  readonly ws: WorkspaceFixture;
  /** The typed client of the default workspace's owner key. */
  readonly api: TestClient;
  /** A typed client of this app as `token` (none: public routes). */
  as(token?: string): TestClient;
  /** Another fresh workspace on the same app. */
  workspace(name?: string): Promise<WorkspaceFixture>;
  /**
   * Cleanup that needs the stack, run in `afterAll` before it closes (jest runs `afterAll`
   * hooks in the order they were declared, so a later `afterAll` would find it closed).
   */
  beforeClose(fn: () => Promise<unknown> | unknown): void;
}

/** Starts the stack before the file's tests and closes it after. Options may be computed in `beforeAll` (a function). */
export function useTestStack(options: TestStackOptions | (() => TestStackOptions | Promise<TestStackOptions>) = {}): TestStackHandle {
  let app: TestApp | undefined;
  let worker: TestWorker | undefined;
  let ws: WorkspaceFixture | undefined;
  const cleanups: Array<() => Promise<unknown> | unknown> = [];
  const started = <T>(value: T | undefined, what: string): T => {
    if (value === undefined)
      throw new Error(`useTestStack: ${what} read before beforeAll started the stack (read it inside a hook or test)`);
    return value;
  };

  beforeAll(async () => {
    const opts = typeof options === 'function' ? await options() : options;
    app = await startTestApp(opts.config, opts.routes, opts.temporal);
    try {
      if (opts.worker !== false) {
        const logStream: Writable | undefined = opts.temporal?.logStream;
        worker = await startTestWorker(app, {
          temporalAddress: opts.temporal?.temporalAddress,
          logStream,
          logLevel: logStream ? app.deps.config.logLevel : undefined,
          ...(opts.worker ?? {}),
        });
      }
      ws = await createWorkspace(app, opts.workspaceName);
    } catch (err) {
      await worker?.stop();
      await app.close();
      app = undefined;
      throw err;
    }
    // A bound that means "hung", not "slow": a loaded 2-core machine starts a stack in seconds.
  }, 120_000);
  afterAll(async () => {
    try {
      for (const fn of cleanups) if (app) await fn();
    } finally {
      await worker?.stop();
      await app?.close();
    }
  });

  return {
    get app() {
      return started(app, 'app');
    },
    get worker() {
      return started(worker, 'worker');
    },
    get ws() {
      return started(ws, 'ws');
    },
    get api() {
      return client(started(app, 'app'), started(ws, 'ws').token);
    },
    as: (token?: string) => client(started(app, 'app'), token),
    workspace: (name?: string) => createWorkspace(started(app, 'app'), name),
    beforeClose: (fn) => void cleanups.push(fn),
  };
}
