import { MikroORM, type Options } from '@mikro-orm/postgresql';
import { Migrator } from '@mikro-orm/migrations';
import { entities } from './entities';
import { migrationsList } from './migrations';

/** MikroORM options for a database URL; the one place the ORM is configured. */
export function ormOptions(databaseUrl: string, opts: { debug?: boolean; poolMax?: number } = {}): Options {
  return {
    clientUrl: databaseUrl,
    entities,
    extensions: [Migrator],
    debug: opts.debug ?? false,
    // Entities are EntitySchema definitions; no decorator metadata or file discovery needed.
    discovery: { warnWhenNoEntities: true },
    pool: { min: 0, max: opts.poolMax ?? 10 },
    migrations: {
      migrationsList,
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

/** Applies pending migrations; returns the names applied. */
export async function migrateUp(orm: MikroORM): Promise<string[]> {
  const applied = await orm.getMigrator().up();
  return applied.map((m) => m.name);
}

/** Names of committed migrations not yet applied to this database. */
export async function pendingMigrations(orm: MikroORM): Promise<string[]> {
  const pending = await orm.getMigrator().getPendingMigrations();
  return pending.map((m) => m.name);
}

export type { MikroORM };
