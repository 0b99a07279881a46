/**
 * Starts the real parts every integration test uses, once per lane (jest worker): an in-memory
 * Temporal dev server on free ports (search attributes registered, up to 90 s to come up) and a throwaway
 * PostgreSQL database with migrations applied. Also bundles the workflow code once.
 * Addresses reach the test workers through environment variables.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { Connection } from '@temporalio/client';
import { migrateUp, openOrm } from '../../db/orm';
import { createDatabase, ensurePostgres } from '../../scripts/lib/postgres';
import { ensureTemporalCli } from '../../scripts/lib/temporalCli';
import { startTemporalDevServer } from '../../scripts/lib/temporalDevServer';
import { registerSearchAttributes } from '../../temporal/searchAttributes';
import { bundleWorkflows } from '../../temporal/worker';
import { laneVariable, TEST_ENV, type GlobalHandles } from './env';

export default async function globalSetup(globalConfig?: { maxWorkers?: number }): Promise<void> {
  const log = (m: string) => process.env.TEST_VERBOSE && console.log(`[setup] ${m}`);
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'svc-test-'));
  // One lane per jest worker (1 with --runInBand): each has its own dev server and database.
  const lanes = Math.max(1, globalConfig?.maxWorkers ?? 1);

  const startTemporal = async () => {
    const binary = await ensureTemporalCli({ log });
    const server = await startTemporalDevServer({ binary, uiPort: null, log, startTimeoutMs: 120_000 });
    const connection = await Connection.connect({ address: server.address, connectTimeout: '30 seconds' });
    await registerSearchAttributes(connection, 'default');
    await connection.close();
    return server;
  };
  // The CLI is built (or found) once before the servers start side by side.
  await ensureTemporalCli({ log });
  const [temporal, pg, bundle] = await Promise.all([
    Promise.all(Array.from({ length: lanes }, () => startTemporal())),
    ensurePostgres({
      databaseUrl: process.env.TEST_DATABASE_URL,
      dataDir: tmp,
      databaseName: `svc_test_${randomBytes(6).toString('hex')}`,
      log,
    }),
    bundleWorkflows(),
  ]);

  const laneDatabases: string[] = [];
  for (let lane = 2; lane <= lanes; lane++) {
    const url = new URL(pg.url);
    url.pathname = `${url.pathname}_l${lane}`;
    await createDatabase(url.toString());
    laneDatabases.push(url.toString());
  }
  let pgvector = '';
  for (const url of [pg.url, ...laneDatabases]) {
    const orm = await openOrm(url);
    await migrateUp(orm);
    pgvector ||= await pgvectorState(orm);
    await orm.close();
  }

  const bundlePath = path.join(tmp, 'workflow-bundle.js');
  await writeFile(bundlePath, bundle.code);

  for (let lane = 1; lane <= lanes; lane++) {
    process.env[laneVariable('databaseUrl', lane)] = lane === 1 ? pg.url : laneDatabases[lane - 2];
    process.env[laneVariable('temporalAddress', lane)] = temporal[lane - 1].address;
  }
  process.env[TEST_ENV.workflowBundle] = bundlePath;
  // Cheaper password hashes in the test workers only (services/kernel/passwords.ts honours it under NODE_ENV=test).
  process.env.SVC_TEST_PASSWORD_HASH_N = String(2 ** 10);
  process.env[TEST_ENV.pgvector] = pgvector;
  (globalThis as unknown as { __svcTest: GlobalHandles }).__svcTest = { temporal, pg, laneDatabases, tmp };
}

/** Whether the migrated test database stores embeddings with pgvector, or why not. */
async function pgvectorState(orm: Awaited<ReturnType<typeof openOrm>>): Promise<string> {
  const [row] = await orm.em.getConnection().execute<Array<{ column: boolean; available: boolean }>>(
    `select exists (select 1 from information_schema.columns where table_name = 'knowledge_chunks' and column_name = 'embedding_vec') as column,
            exists (select 1 from pg_available_extensions where name = 'vector') as available`,
  );
  if (row.column) return 'available';
  return row.available
    ? 'the pgvector extension is installed on the server but the migration could not create it (needs superuser or CREATE on the database)'
    : 'the PostgreSQL server has no pgvector extension (see docs/operations.md, "pgvector")';
}
