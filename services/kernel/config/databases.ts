import { z } from 'zod';
import { defineArea, envBool } from './define';

/** Users' databases: read-only SQL over them (services/databases/) and configuration packages applied to them. */
export const databasesArea = defineArea('databases', 'Databases and configuration packages', {
  DATABASE_QUERY_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(100)
    .max(300_000)
    .default(5_000)
    .describe('Statement timeout of read-only SQL over user databases (`POST /api/v1/databases/query`); over it: 408.'),
  DATABASE_QUERY_MAX_ROWS: z.coerce
    .number()
    .int()
    .min(1)
    .max(100_000)
    .default(1_000)
    .describe('Rows a read-only query returns at most (`truncated: true` beyond).'),
  DATABASE_QUERY_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .max(64 * 1024 * 1024)
    .default(1024 * 1024)
    .describe('JSON bytes of rows a read-only query returns at most, measured by PostgreSQL before sending (`truncated: true` beyond).'),
  DATABASE_QUERY_POOL_MAX: z.coerce
    .number()
    .int()
    .min(1)
    .max(100)
    .default(4)
    .describe("Connections of the user-SQL pool, apart from the ORM's (per process)."),
  DATABASE_QUERY_PER_WORKSPACE: z.coerce
    .number()
    .int()
    .min(1)
    .max(100)
    .default(2)
    .describe('Read-only queries of one workspace running at once (per process); others wait their fair turn.'),
  DATABASE_QUERY_QUEUE_PER_WORKSPACE: z.coerce
    .number()
    .int()
    .min(0)
    .max(1000)
    .default(8)
    .describe('Queries of one workspace waiting at once; beyond: 429 `query_queue_full` with Retry-After.'),
  CONFIGURATION_WRITES_ENABLED: envBool(true).describe(
    'Feature switch of configuration package apply; off: the catalog says `applyEnabled: false`, `writes_disabled`, and apply is 503 unless its receipt exists.',
  ),
});

export type DatabasesEnv = z.output<typeof databasesArea.schema>;

export interface DatabasesConfig {
  /** Read-only SQL over user databases (POST /api/v1/databases/query). */
  databaseQuery: {
    timeoutMs: number;
    maxRows: number;
    maxBytes: number;
    pool?: { poolMax: number; perWorkspace: number; queuePerWorkspace: number };
  };
  /** Feature switch of configuration package writes (apply); the catalog reports it. */
  configurationWritesEnabled: boolean;
}

export function databasesConfig(e: DatabasesEnv): DatabasesConfig {
  return {
    databaseQuery: {
      timeoutMs: e.DATABASE_QUERY_TIMEOUT_MS,
      maxRows: e.DATABASE_QUERY_MAX_ROWS,
      maxBytes: e.DATABASE_QUERY_MAX_BYTES,
      pool: {
        poolMax: e.DATABASE_QUERY_POOL_MAX,
        perWorkspace: e.DATABASE_QUERY_PER_WORKSPACE,
        queuePerWorkspace: e.DATABASE_QUERY_QUEUE_PER_WORKSPACE,
      },
    },
    configurationWritesEnabled: e.CONFIGURATION_WRITES_ENABLED,
  };
}
