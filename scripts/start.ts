/**
 * `npm start`: the whole service on one machine. Starts (or connects to) Temporal and
 * PostgreSQL, applies migrations, bootstraps a first workspace on the very first run, then
 * runs the API and a worker in this process. Production runs each part on its own
 * (docker-compose.yml).
 */
import { startApi } from '../api/main';
import { onShutdownSignal } from '../services/lifecycle';
import { migrateUp, openOrm } from '../db/orm';
import { bootstrapFirstRun } from '../services/bootstrap';
import { loadConfig } from '../services/config';
import { createLogger } from '../services/logger';
import { startWorker } from '../temporal/worker-main';
import { cachedWorkflowBundle } from '../temporal/worker';
import { ensureServiceDatabase } from './lib/ownerRole';
import { ensureLocalSecretKey } from './lib/secret-key';
import { ensureTemporalCli } from './lib/temporal-cli';
import { startTemporalDevServer } from './lib/temporal-dev-server';
import path from 'node:path';

async function main(): Promise<void> {
  // Local development may call services on this machine from http nodes; production must opt in.
  const baseConfig = loadConfig({ OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true', ...process.env });
  const config = { ...baseConfig, secretKey: baseConfig.secretKey ?? (await ensureLocalSecretKey(baseConfig.dataDir)) };
  const logger = createLogger(config.logLevel, { name: 'svc' });
  const say = (msg: string) => logger.info(msg);
  const cleanups: Array<() => Promise<void>> = [];

  // The dev server, the database (with migrations) and the workflow bundle are independent:
  // prepare them side by side, which is most of the time a restart after a crash takes.
  const temporalStarting = config.temporal.address
    ? null
    : (async () => {
        const binary = await ensureTemporalCli({ log: say });
        return startTemporalDevServer({
          binary,
          port: config.temporal.devPort,
          uiPort: config.temporal.devUiPort,
          dbFile: path.join(config.dataDir, 'temporal.db'),
          pidFile: path.join(config.dataDir, 'temporal-dev-server.pid'),
          // The UI asks the API to decrypt payloads (operators only: OPERATOR_TOKEN / OPERATOR_EMAILS).
          uiCodecEndpoint: `http://127.0.0.1:${config.port}/api/temporal-codec`,
          log: say,
        });
      })();
  const databaseReady = (async () => {
    const pg = await ensureServiceDatabase({ databaseUrl: config.databaseUrl, adminUrl: config.databaseAdminUrl, secretKey: config.secretKey, dataDir: config.dataDir, log: say });
    try {
      const orm = await openOrm(pg.url);
      try {
        const applied = await migrateUp(orm);
        if (applied.length > 0) say(`applied migrations: ${applied.join(', ')}`);
        return { pg, bootstrap: await bootstrapFirstRun(orm.em.fork(), config.bootstrapOwnerEmail) };
      } finally {
        await orm.close();
      }
    } catch (err) {
      await pg.stop();
      throw err;
    }
  })();
  const bundleReady = cachedWorkflowBundle(path.join(config.dataDir, 'cache'));
  const [temporalResult, databaseResult, bundleResult] = await Promise.allSettled([temporalStarting, databaseReady, bundleReady]);
  if (temporalResult.status === 'fulfilled' && temporalResult.value) {
    const server = temporalResult.value;
    cleanups.unshift(() => server.stop());
  }
  if (databaseResult.status === 'fulfilled') {
    const { pg } = databaseResult.value;
    cleanups.unshift(() => pg.stop());
  }
  for (const result of [temporalResult, databaseResult, bundleResult]) if (result.status === 'rejected') throw result.reason;
  const server = temporalResult.status === 'fulfilled' ? temporalResult.value : null;
  const { pg, bootstrap } = (databaseResult as PromiseFulfilledResult<Awaited<typeof databaseReady>>).value;
  const temporalAddress = server?.address ?? config.temporal.address!;
  const uiUrl = config.temporal.uiUrl ?? server?.uiUrl ?? null;

  const runtimeConfig = { ...config, temporal: { ...config.temporal, uiUrl: uiUrl ?? undefined } };
  const workflowBundle = (bundleResult as PromiseFulfilledResult<{ code: string }>).value;
  const worker = await startWorker({ config: runtimeConfig, databaseUrl: pg.url, temporalAddress, logger, workflowBundle });
  cleanups.unshift(() => worker.stop());
  const api = await startApi({ config: runtimeConfig, databaseUrl: pg.url, temporalAddress, logger });
  cleanups.unshift(() => api.stop());

  const lines = [
    '',
    `  API:              ${api.url}/api/v1  (OpenAPI: ${api.url}/api/v1/openapi.json)`,
    `  Temporal:         ${temporalAddress} (namespace ${config.temporal.namespace})`,
    `  Temporal Web UI:  ${uiUrl ?? 'not configured (set TEMPORAL_UI_URL)'}`,
    `  PostgreSQL:       ${pg.embedded ? 'embedded, data in ' + path.join(config.dataDir, 'postgres') : 'external server'}`,
  ];
  if (bootstrap) {
    lines.push(
      '',
      '  First run: created a workspace, its owner and a workspace API key (shown once):',
      `    workspace:  ${bootstrap.workspace.name} (${bootstrap.workspace.id})`,
      `    owner:      ${bootstrap.user.email}  password: ${bootstrap.ownerPassword}`,
      `    API key:    ${bootstrap.apiKey.token}`,
      '',
      `  Try: curl -H "Authorization: Bearer ${bootstrap.apiKey.token}" ${api.url}/api/v1/workspaces`,
    );
  }
  process.stdout.write(lines.join('\n') + '\n\n');

  onShutdownSignal(logger, async () => {
    for (const cleanup of cleanups) await cleanup().catch((err) => logger.error({ err }, 'cleanup failed'));
  });
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
