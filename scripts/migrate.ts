/** Applies pending migrations to DATABASE_URL (the one-shot `migrate` service in docker-compose). */
import { migrateUp, openOrm } from '../db/orm';
import { loadConfig } from '../services/config';
import { ensurePostgres } from './lib/postgres';

async function main(): Promise<void> {
  const config = loadConfig();
  const pg = await ensurePostgres({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
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
