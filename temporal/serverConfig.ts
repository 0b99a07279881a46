/**
 * The Temporal server settings this service runs with: the dev server that `npm start`, the
 * tests and the benchmarks start (scripts/lib/temporalDevServer.ts passes each value as
 * `--dynamic-config-value`), and the production compose server (temporal/dynamicconfig.yaml,
 * rendered from this object; test/unit/temporal/serverConfig.test.ts keeps the two equal).
 *
 * Measured effect of each value: docs/benchmarks.md ("Server settings").
 */
export const SERVER_DYNAMIC_CONFIG = {
  /**
   * The history service reads its transfer queue (the tasks that hand workflow and activity
   * tasks to matching) at most this often per shard. At the default 20/s every hop through a
   * task queue waits up to 50 ms; a run with N durable steps crosses 2N of them.
   */
  'history.transferProcessorMaxPollRPS': 1000,
  /** The same limit for the timer queue: how late a due timer (a wait node, a retry backoff) may fire. */
  'history.timerProcessorMaxPollRPS': 1000,
  /**
   * A worker that completes a workflow task with a new activity gets that activity in the reply
   * (when it has a free slot) instead of polling it from the activity task queue: one task-queue
   * hop less per durable step, and in-flight runs' activities no longer queue behind a flood.
   * The SDK asks for it by default (`maxEagerActivityReservationsPerWorkflowTask` 3).
   */
  'system.enableActivityEagerExecution': true,
  /**
   * Eager workflow start (the first workflow task in the reply to the start call). On by default
   * in server 1.29; stated so that production says so too. Our API does not request it: it needs
   * the client to share a NativeConnection with a worker in the same process, which the
   * docker-compose shape (API and workers apart) does not have.
   */
  'system.enableEagerWorkflowStart': true,
  /** The server must make no calls to the internet (its version check). */
  'frontend.enableServerVersionCheck': false,
} as const satisfies Record<string, string | number | boolean>;

export type DynamicConfig = Record<string, string | number | boolean>;

/** The dynamic config file format of the Temporal server (one unconstrained value per key). */
export function renderDynamicConfigYaml(config: DynamicConfig = SERVER_DYNAMIC_CONFIG): string {
  const header =
    '# Generated from temporal/serverConfig.ts (SERVER_DYNAMIC_CONFIG); edit that file, then\n# render with `npx tsx -e "process.stdout.write(require(\'./temporal/serverConfig\').renderDynamicConfigYaml())" > temporal/dynamicconfig.yaml`.\n';
  const body = Object.entries(config)
    .map(
      ([key, value]) => `${key}:\n  - value: ${typeof value === 'string' ? JSON.stringify(value) : String(value)}\n    constraints: {}\n`,
    )
    .join('');
  return header + body;
}
