/** Applies pending migrations to DATABASE_URL (the one-shot `migrate` service in docker-compose). */
import { migrateUp, openOrm } from '../db/orm';
import { loadConfig } from '../services/kernel/config';
import { ensureServiceDatabase } from './lib/ownerRole';

async function main(): Promise<void> {
  const config = loadConfig();
  const pg = await ensureServiceDatabase({
    databaseUrl: config.databaseUrl,
    adminUrl: config.databaseAdminUrl,
    secretKey: config.secretKey,
    dataDir: config.dataDir,
    log: console.log,
  });
  const orm = await openOrm(pg.url);
  try {
    const applied = await migrateUp(orm);
    console.log(applied.length > 0 ? `applied: ${applied.join(', ')}` : 'database is up to date');
  } finally {
    await orm.close();
    await pg.stop();
  }
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
