import type { PostgresHandle } from '../../scripts/lib/postgres';
import type { TemporalDevServer } from '../../scripts/lib/temporalDevServer';

/** Environment variables through which global setup hands addresses to test files. */
export const TEST_ENV = {
  databaseUrl: 'SVC_TEST_DATABASE_URL',
  temporalAddress: 'SVC_TEST_TEMPORAL_ADDRESS',
  workflowBundle: 'SVC_TEST_WORKFLOW_BUNDLE',
  /** `available`, or why the test databases have no pgvector column (the same for every lane). */
  pgvector: 'SVC_TEST_PGVECTOR',
} as const;

export interface GlobalHandles {
  /** One dev server per lane. */
  temporal: TemporalDevServer[];
  pg: PostgresHandle;
  /** Databases of lanes 2…n on the same server (lane 1 is `pg.url`). */
  laneDatabases: string[];
  tmp: string;
}

/**
 * The lane of this test process: jest's worker id (1 when run in band). Each lane has its own
 * Temporal dev server and database, so test files in parallel workers never share a task queue
 * or a table, exactly as when the files run one after another.
 */
export function testLane(): number {
  return Number(process.env.JEST_WORKER_ID) || 1;
}

/** The name of a per-lane variable: lane 1 uses the plain name. */
export function laneVariable(name: keyof typeof TEST_ENV, lane: number): string {
  return lane === 1 || name === 'workflowBundle' || name === 'pgvector' ? TEST_ENV[name] : `${TEST_ENV[name]}_${lane}`;
}

export function testEnv(name: keyof typeof TEST_ENV): string {
  const value = process.env[laneVariable(name, testLane())];
  if (!value) throw new Error(`${TEST_ENV[name]} is not set: run the tests through jest (global setup starts Temporal and PostgreSQL).`);
  return value;
}
