import { availableParallelism } from 'node:os';
import { z } from 'zod';
import type { SandboxHostSettings } from '../sandbox/sandboxHost/client';
import { defineArea, parseEnv } from './define';

/** The sandbox host's settings (services/kernel/sandbox/sandboxHost/): parsed on their own too, by the first sandbox call of a process. */
export const sandboxArea = defineArea('sandbox', 'Sandbox host', {
  SANDBOX_HOST_HEAP_MB: z.coerce
    .number()
    .int()
    .min(32)
    .max(16_384)
    .default(256)
    .describe(
      "`--max-old-space-size` of the sandbox host, the child process (one per API and worker process, restarted with backoff when it exits) where tenants' code nodes and dry runs run; its threads have their own heap caps.",
    ),
  SANDBOX_THREADS: z.coerce
    .number()
    .int()
    .min(1)
    .max(64)
    .optional()
    .describe('Code threads of a sandbox host. Unset: the CPU count, at least 4 and at most 8.'),
  SANDBOX_WORKSPACE_CONCURRENCY: z.coerce
    .number()
    .int()
    .min(1)
    .max(64)
    .optional()
    .describe(
      'Code threads one workspace may hold at once; waiting workspaces take free threads in turn. Unset: half of `SANDBOX_THREADS`, rounded up.',
    ),
  SANDBOX_DRY_RUN_THREADS: z.coerce
    .number()
    .int()
    .min(1)
    .max(16)
    .default(2)
    .describe('Graph threads of a sandbox host (dry runs; one per workspace at a time).'),
  SANDBOX_DRY_RUN_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(100)
    .max(600_000)
    .default(30_000)
    .describe('Wall-clock limit of one dry run once it holds a graph thread; past it the dry run ends `failed`.'),
  SANDBOX_DRY_RUN_HEAP_MB: z.coerce
    .number()
    .int()
    .min(32)
    .max(16_384)
    .default(256)
    .describe('V8 heap of a graph thread; a dry run over it ends `failed`.'),
});

export type SandboxEnv = z.output<typeof sandboxArea.schema>;

/**
 * Head start of a code call's inner interrupt over the thread's termination, so ordinary
 * timeouts keep the guest's logs. 500 ms leaves a busy machine room for the thread to notice its
 * interrupt (200 ms lost the logs at a load of 8 on 2 cores) and keeps three waves of 1 s calls
 * (4.5 s) inside the 6 s activity timeout.
 */
export const SANDBOX_KILL_GRACE_MS = 500;

/**
 * Sandbox host settings from the environment. Threads default to the CPU count, at least 4 and
 * at most 8 (ten 1 s code nodes fit the code activity's 6 s timeout in three waves); a
 * workspace may hold at most half of them (rounded up) at once, so one workspace's spinning
 * code nodes always leave threads to the others.
 */
export function sandboxSettings(env: NodeJS.ProcessEnv = process.env): SandboxHostSettings {
  return sandboxHostSettings(parseEnv(sandboxArea.schema, env));
}

function sandboxHostSettings(e: SandboxEnv): SandboxHostSettings {
  const codeThreads = e.SANDBOX_THREADS ?? Math.max(4, Math.min(8, availableParallelism()));
  return {
    heapMb: e.SANDBOX_HOST_HEAP_MB,
    codeThreads,
    codePerWorkspace: Math.min(codeThreads, e.SANDBOX_WORKSPACE_CONCURRENCY ?? Math.ceil(codeThreads / 2)),
    codeKillGraceMs: SANDBOX_KILL_GRACE_MS,
    threadHeapMb: 256,
    graphThreads: e.SANDBOX_DRY_RUN_THREADS,
    graphPerWorkspace: 1,
    graphHeapMb: e.SANDBOX_DRY_RUN_HEAP_MB,
    dryRunTimeoutMs: e.SANDBOX_DRY_RUN_TIMEOUT_MS,
    // The host's own deadlines fire first; the parent's kill is for a host too stuck to enforce them.
    marginMs: 2_000,
    stallMs: 10_000,
  };
}

export function sandboxConfig(e: SandboxEnv): { sandbox: SandboxHostSettings } {
  return { sandbox: sandboxHostSettings(e) };
}
