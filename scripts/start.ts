/**
 * `npm start`: the whole service on one machine. Starts (or connects to) Temporal and
 * PostgreSQL, applies migrations, bootstraps a first workspace on the very first run, prepares
 * the workflow bundle, then runs the API (API_PROCESSES of them) and the worker (WORKERS) as
 * separate processes under a supervisor that restarts any that exits (main/supervisor.ts).
 * Production runs each part in its own container (docker-compose.yml).
 */
import { onShutdownSignal } from '../services/kernel/lifecycle';
import { migrateUp, openOrm } from '../db/orm';
import { bootstrapFirstRun } from '../services/accounts/bootstrap';
import { loadConfig } from '../services/kernel/config';
import { createLogger } from '../services/kernel/logger';
import { cachedWorkflowBundleFile, prebuiltWorkflowBundle } from '../temporal/worker';
import { startSupervisor } from '../main/supervisor';
import { ensureServiceDatabase } from './lib/ownerRole';
import { ensureLocalOperatorToken, ensureLocalSecretKey } from './lib/secretKey';
import { ensureTemporalCli } from './lib/temporalCli';
import { startTemporalDevServer } from './lib/temporalDevServer';
import path from 'node:path';

async function main(): Promise<void> {
  // Local development may call services on this machine from http nodes; production must opt in.
  const baseConfig = loadConfig({ OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true', ...process.env });
  const config = { ...baseConfig, secretKey: baseConfig.secretKey ?? (await ensureLocalSecretKey(baseConfig.dataDir)) };
  // Operators decode payloads in the Web UI and the CLI out of the box: unless operator access is
  // configured, the first-run owner's session and a local token (printed once) may.
  const operatorAccessConfigured = Boolean(config.operatorToken) || config.operatorEmails.length > 0;
  const localOperatorToken = operatorAccessConfigured ? null : await ensureLocalOperatorToken(config.dataDir);
  const codecEndpoint = `http://127.0.0.1:${config.port}/api/temporal-codec`;
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
          uiCodecEndpoint: codecEndpoint,
          log: say,
        });
      })();
  const databaseReady = (async () => {
    const pg = await ensureServiceDatabase({
      databaseUrl: config.databaseUrl,
      adminUrl: config.databaseAdminUrl,
      secretKey: config.secretKey,
      dataDir: config.dataDir,
      log: say,
    });
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
  // The workers load one bundle file: the configured or built one, else the cached one of these sources.
  const prebuilt = prebuiltWorkflowBundle(config.temporal.workflowBundlePath);
  const bundleReady = prebuilt ? Promise.resolve(prebuilt.codePath) : cachedWorkflowBundleFile(path.join(config.dataDir, 'cache'));
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

  const workflowBundlePath = (bundleResult as PromiseFulfilledResult<string>).value;
  const ext = path.extname(__filename);
  const root = path.resolve(__dirname, '..');
  // What the children need that this process provisioned or chose; the rest they read as it is.
  const childEnv: Record<string, string> = {
    DATABASE_URL: pg.url,
    TEMPORAL_ADDRESS: temporalAddress,
    SECRET_KEY: config.secretKey!,
    OUTBOUND_ALLOW_PRIVATE_NETWORKS: String(config.outboundAllowPrivateNetworks),
    WORKFLOW_BUNDLE_PATH: workflowBundlePath,
    ...(uiUrl ? { TEMPORAL_UI_URL: uiUrl } : {}),
    ...(localOperatorToken ? { OPERATOR_TOKEN: localOperatorToken.value, OPERATOR_EMAILS: config.bootstrapOwnerEmail } : {}),
  };
  const sdkMetrics = config.temporal.sdkMetricsAddress;
  const supervisor = startSupervisor({
    logger,
    specs: [
      {
        role: 'api',
        count: config.processes.apiProcesses,
        module: path.join(root, 'main', `api${ext}`),
        heapMb: config.processes.apiHeapMb,
        env: () => childEnv,
      },
      {
        role: 'worker',
        count: config.processes.workers,
        module: path.join(root, 'main', `worker${ext}`),
        heapMb: config.processes.workerHeapMb,
        // Each worker's SDK exporter needs its own port: the configured one, then the next ones.
        env: (slot) => ({ ...childEnv, ...(sdkMetrics ? { TEMPORAL_SDK_METRICS_ADDRESS: nthPort(sdkMetrics, slot) } : {}) }),
      },
    ],
  });
  cleanups.unshift(() => supervisor.stop());
  // A signal while the children start stops them too.
  onShutdownSignal(logger, async () => {
    for (const cleanup of cleanups) await cleanup().catch((err) => logger.error({ err }, 'cleanup failed'));
  });
  await supervisor.ready;
  const apiUrl = `http://${config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host}:${config.port}`;

  const lines = [
    '',
    `  Processes:        ${config.processes.apiProcesses} API (heap ${config.processes.apiHeapMb} MiB each), ${config.processes.workers} worker (heap ${config.processes.workerHeapMb} MiB each), restarted when they exit`,
    `  API:              ${apiUrl}/api/v1  (OpenAPI: ${apiUrl}/api/v1/openapi.json)`,
    `  Temporal:         ${temporalAddress} (namespace ${config.temporal.namespace})`,
    `  Temporal Web UI:  ${uiUrl ?? 'not configured (set TEMPORAL_UI_URL)'}`,
    `  PostgreSQL:       ${pg.embedded ? 'embedded, data in ' + path.join(config.dataDir, 'postgres') : 'external server'}`,
    `  Codec endpoint:   ${codecEndpoint}  (decrypts payloads for operators; docs/operations.md)`,
  ];
  if (localOperatorToken) {
    const tokenFile = path.join(config.dataDir, 'operator-token');
    lines.push(
      `  Operators:        ${config.bootstrapOwnerEmail} (signed in, in the Web UI) and the operator token ${
        localOperatorToken.created ? `(shown once, kept in ${tokenFile}):` : `in ${tokenFile}`
      }`,
      ...(localOperatorToken.created ? [`    operator token: ${localOperatorToken.value}`] : []),
      `    temporal workflow show -w <run id> --codec-endpoint ${codecEndpoint} --codec-auth "Bearer $(cat ${tokenFile})"`,
    );
  }
  if (bootstrap) {
    lines.push(
      '',
      '  First run: created a workspace, its owner and a workspace API key (shown once):',
      `    workspace:  ${bootstrap.workspace.name} (${bootstrap.workspace.id})`,
      `    owner:      ${bootstrap.user.email}  password: ${bootstrap.ownerPassword}`,
      `    API key:    ${bootstrap.apiKey.token}`,
      '',
      `  Try: curl -H "Authorization: Bearer ${bootstrap.apiKey.token}" ${apiUrl}/api/v1/workspaces`,
    );
  }
  process.stdout.write(lines.join('\n') + '\n\n');
}

/** `host:port` with the port moved up by `n` (the n-th worker's SDK metrics exporter). */
function nthPort(address: string, n: number): string {
  const at = address.lastIndexOf(':');
  return `${address.slice(0, at)}:${Number(address.slice(at + 1)) + n}`;
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
