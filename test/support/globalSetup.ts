/**
 * Starts the real parts every integration test uses: an in-memory Temporal dev server on
 * free ports (search attributes registered, up to 90 s to come up) and a throwaway
 * PostgreSQL database with migrations applied. Also bundles the workflow code once.
 * Addresses reach the test workers through environment variables.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { Connection } from '@temporalio/client';
import { migrateUp, openOrm } from '../../db/orm';
import { ensurePostgres } from '../../scripts/lib/postgres';
import { ensureTemporalCli } from '../../scripts/lib/temporal-cli';
import { startTemporalDevServer } from '../../scripts/lib/temporal-dev-server';
import { registerSearchAttributes } from '../../temporal/search-attributes';
import { bundleWorkflows } from '../../temporal/worker';
import { TEST_ENV, type GlobalHandles } from './env';

export default async function globalSetup(): Promise<void> {
  const log = (m: string) => process.env.TEST_VERBOSE && console.log(`[setup] ${m}`);
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'svc-test-'));

  const [temporal, pg, bundle] = await Promise.all([
    (async () => {
      const binary = await ensureTemporalCli({ log });
      const server = await startTemporalDevServer({ binary, uiPort: null, log, startTimeoutMs: 120_000 });
      const connection = await Connection.connect({ address: server.address, connectTimeout: '30 seconds' });
      await registerSearchAttributes(connection, 'default');
      await connection.close();
      return server;
    })(),
    ensurePostgres({
      databaseUrl: process.env.TEST_DATABASE_URL,
      dataDir: tmp,
      databaseName: `svc_test_${randomBytes(6).toString('hex')}`,
      log,
    }),
    bundleWorkflows(),
  ]);

  const orm = await openOrm(pg.url);
  await migrateUp(orm);
  await orm.close();

  const bundlePath = path.join(tmp, 'workflow-bundle.js');
  await writeFile(bundlePath, bundle.code);

  process.env[TEST_ENV.databaseUrl] = pg.url;
  process.env[TEST_ENV.temporalAddress] = temporal.address;
  process.env[TEST_ENV.workflowBundle] = bundlePath;
  (globalThis as unknown as { __svcTest: GlobalHandles }).__svcTest = { temporal, pg, tmp };
}
