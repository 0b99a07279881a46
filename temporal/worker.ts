import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { PayloadCodec } from '@temporalio/common';
import { NativeConnection, Worker, bundleWorkflowCode, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { TASK_QUEUE } from './shared';
import { stickyCacheOptions } from './workerOptions';
import { DATA_CONVERTER_PATH, dataConverterOptions } from './client';

export const WORKFLOWS_PATH = path.join(__dirname, 'workflows', 'index');

/**
 * Bundles the workflow code once (webpack; takes several seconds). Workers can share a
 * bundle, which keeps test suites from paying for it on every worker start.
 */
export async function bundleWorkflows(): Promise<WorkflowBundleWithSourceMap> {
  // Workflow failures are converted inside the sandbox: the bundle carries our converters.
  return bundleWorkflowCode({
    workflowsPath: require.resolve(WORKFLOWS_PATH),
    payloadConverterPath: DATA_CONVERTER_PATH,
    failureConverterPath: DATA_CONVERTER_PATH,
    logger: quietBundlerLogger,
  });
}

const ROOT = path.resolve(__dirname, '..');
/** What the workflow bundle is built from: workflow code, what it imports, and the dependency tree. */
const BUNDLE_INPUTS = ['temporal', 'engine', 'activities', 'db/entities'];

async function bundleInputsHash(): Promise<string | null> {
  const hash = createHash('sha256');
  const files: string[] = [];
  const walk = async (dir: string): Promise<void> => {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) await walk(full);
      else if (/\.(ts|js|json)$/.test(entry.name)) files.push(full);
    }
  };
  try {
    for (const dir of BUNDLE_INPUTS) await walk(path.join(ROOT, dir));
    files.push(path.join(ROOT, 'package-lock.json'));
    for (const file of files.sort())
      hash
        .update(path.relative(ROOT, file))
        .update('\0')
        .update(await readFile(file))
        .update('\0');
  } catch {
    return null; // not a source checkout (e.g. a compiled image): no cache
  }
  hash.update(process.version);
  return hash.digest('hex').slice(0, 24);
}

/**
 * The file of the workflow bundle in `cacheDir`, reused when an earlier start built it from the
 * same sources (a hash of the workflow code, what it imports and package-lock.json), else
 * freshly bundled and stored there. Saves the several seconds of webpack on every `npm start`
 * after the first, most of all after a crash; every worker process of `npm start` loads this
 * one file (WORKFLOW_BUNDLE_PATH). Older bundles in `cacheDir` are removed. Outside a source
 * checkout (no hash) the bundle is still written, under a name of its own.
 */
export async function cachedWorkflowBundleFile(cacheDir: string): Promise<string> {
  const key = (await bundleInputsHash()) ?? `nocache-${process.pid}`;
  const file = path.join(cacheDir, `workflow-bundle-${key}.js`);
  if (existsSync(file)) return file;
  const { code } = await bundleWorkflows();
  await mkdir(cacheDir, { recursive: true });
  for (const old of await readdir(cacheDir))
    if (/^workflow-bundle-[0-9a-z-]+\.js$/.test(old)) await rm(path.join(cacheDir, old), { force: true });
  const partial = `${file}.${process.pid}.partial`;
  await writeFile(partial, code);
  await rename(partial, file); // a crash mid-write leaves no half bundle under the real name
  return file;
}

/** Where `npm run build` writes the workflow bundle: next to the compiled worker (dist/temporal/). */
export const BUILT_WORKFLOW_BUNDLE = path.join(__dirname, 'workflow-bundle.js');

/**
 * Bundles the compiled workflows into BUILT_WORKFLOW_BUNDLE (the last step of `npm run build`),
 * so a production worker starts without webpack: bundling at start costs seconds and leaves
 * about 100 MiB of heap behind.
 */
export async function writeBuiltWorkflowBundle(): Promise<string> {
  const { code } = await bundleWorkflows();
  const partial = `${BUILT_WORKFLOW_BUNDLE}.${process.pid}.partial`;
  await writeFile(partial, code);
  await rename(partial, BUILT_WORKFLOW_BUNDLE);
  return BUILT_WORKFLOW_BUNDLE;
}

/**
 * The prebuilt bundle a worker loads: `configured` (WORKFLOW_BUNDLE_PATH), which must exist,
 * else the one `npm run build` wrote next to the compiled worker. Null when neither (running
 * from sources under tsx): the worker bundles at start. Sources never pick up a stray
 * bundle, which could be older than the code beside it.
 */
export function prebuiltWorkflowBundle(configured: string | undefined): { codePath: string } | null {
  if (configured) {
    if (!existsSync(configured)) throw new Error(`WORKFLOW_BUNDLE_PATH: no file at ${configured}`);
    return { codePath: path.resolve(configured) };
  }
  return __filename.endsWith('.js') && existsSync(BUILT_WORKFLOW_BUNDLE) ? { codePath: BUILT_WORKFLOW_BUNDLE } : null;
}

export interface WorkerOptions {
  connection: NativeConnection;
  namespace: string;
  /**
   * Every activity of the service, by name: `createActivities` of activities/, built by the
   * composition root (main/worker.ts), so that temporal/ never imports activities/.
   */
  activities: object;
  /** A prebuilt bundle (its code, or the file); when omitted the worker bundles `temporal/workflows` itself. */
  workflowBundle?: { code: string } | { codePath: string };
  identity?: string;
  /** The deployment's payload codec (services/kernel/payloadCodec.ts); must match the clients'. */
  payloadCodec?: PayloadCodec;
  /**
   * Runs kept in the sticky cache (config `WORKER_MAX_CACHED_WORKFLOWS`). Beyond it the least
   * recently used run is evicted; when it wakes (timer, approval, event) it is replayed from
   * its history. Unset: the SDK's default, which grows with the heap limit.
   */
  maxCachedWorkflows?: number;
  /**
   * Threads running workflow code (config `WORKER_WORKFLOW_THREADS`; the SDK's default with a
   * reused V8 context is 1). A run's activations are serial, so with 2 a run that evaluates
   * heavy expressions holds at most one thread and other runs go on on the other.
   */
  workflowThreads?: number;
}

/**
 * Longest one workflow activation may run before the SDK interrupts it (its default is 5 s).
 * The interrupt is a safety net, not a limit we rely on: it fails the workflow task (retried
 * for ever with the same outcome), and when it lands in a microtask Node.js aborts the whole
 * process ("async hook stack has become corrupted", nodejs/node#38503; issue 26, F4). Run work
 * is cut into short activations instead (engine WORK_SLICE_STEPS), and this leaves them room
 * on a starved CPU.
 */
export const ISOLATE_EXECUTION_TIMEOUT = '30s';

/**
 * The SDK's WorkerOptions type leaves isolateExecutionTimeout out ("not exposed at the moment"),
 * but its compileWorkerOptions spreads the given options over its defaults, so it is honoured;
 * test/unit/temporal/workerOptions.test.ts fails if an SDK upgrade stops honouring it.
 */
export const ISOLATE_OPTIONS = { isolateExecutionTimeout: ISOLATE_EXECUTION_TIMEOUT };

/** A worker on the `workflow-runs` task queue serving every workflow and activity of the service. */
export async function createWorker(opts: WorkerOptions): Promise<Worker> {
  return Worker.create({
    connection: opts.connection,
    namespace: opts.namespace,
    taskQueue: TASK_QUEUE,
    ...(opts.workflowBundle ? { workflowBundle: opts.workflowBundle } : { workflowsPath: require.resolve(WORKFLOWS_PATH) }),
    activities: opts.activities,
    ...(opts.identity ? { identity: opts.identity } : {}),
    dataConverter: dataConverterOptions(opts.payloadCodec),
    ...(opts.maxCachedWorkflows !== undefined ? stickyCacheOptions(opts.maxCachedWorkflows) : {}),
    ...(opts.workflowThreads !== undefined ? { workflowThreadPoolSize: opts.workflowThreads } : {}),
    ...ISOLATE_OPTIONS,
  });
}

const noop = () => undefined;
/** A bundler logger that keeps only errors. */
export const quietBundlerLogger = { trace: noop, debug: noop, info: noop, warn: noop, error: console.error, log: noop };
