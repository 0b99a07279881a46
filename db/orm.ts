import { MikroORM, type Options } from '@mikro-orm/postgresql';
import { entities } from './entities';
import { useWellFormedTypes } from './wellFormedTypes';

/** MikroORM options for a database URL; the one place the ORM is configured. */
export function ormOptions(databaseUrl: string, opts: { debug?: boolean; poolMax?: number } = {}): Options {
  return {
    clientUrl: databaseUrl,
    entities,
    debug: opts.debug ?? false,
    // Entities are EntitySchema definitions; no decorator metadata or file discovery needed.
    // Json and text columns make their strings well-formed on the way in (db/wellFormedTypes.ts).
    discovery: { warnWhenNoEntities: true, onMetadata: useWellFormedTypes },
    pool: { min: 0, max: opts.poolMax ?? 10 },
    // The migrator and the migration classes load on first use (migrator()): the API and the
    // worker never migrate, and @mikro-orm/migrations with umzug costs them ≈ 10 MiB each.
    migrations: {
      tableName: 'mikro_orm_migrations',
      transactional: true,
      allOrNothing: true,
      snapshot: false,
      // Callers log what was applied; the migrator's own console output would break JSON logs.
      silent: true,
    },
    // Request-scoped forks are created explicitly (em.fork()); the global context is a bug magnet.
    allowGlobalContext: false,
  };
}

export async function openOrm(databaseUrl: string, opts: { debug?: boolean; poolMax?: number } = {}): Promise<MikroORM> {
  return MikroORM.init(ormOptions(databaseUrl, opts));
}

/** The ORM's migrator, loading it and the committed migrations on first use. */
async function migrator(orm: MikroORM) {
  const options = orm.config.get('migrations');
  if (!options.migrationsList) {
    const [{ Migrator }, { migrationsList }] = await Promise.all([import('@mikro-orm/migrations'), import('./migrations')]);
    options.migrationsList = migrationsList;
    Migrator.register(orm);
  }
  return orm.getMigrator();
}

/** Applies pending migrations; returns the names applied. */
export async function migrateUp(orm: MikroORM): Promise<string[]> {
  const applied = await (await migrator(orm)).up();
  return applied.map((m) => m.name);
}

/** Names of committed migrations not yet applied to this database. */
export async function pendingMigrations(orm: MikroORM): Promise<string[]> {
  const pending = await (await migrator(orm)).getPendingMigrations();
  return pending.map((m) => m.name);
}

export type { MikroORM };
