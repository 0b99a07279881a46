import type { PostgresHandle } from '../../scripts/lib/postgres';
import type { TemporalDevServer } from '../../scripts/lib/temporal-dev-server';

/** Environment variables through which global setup hands addresses to test files. */
export const TEST_ENV = {
  databaseUrl: 'SVC_TEST_DATABASE_URL',
  temporalAddress: 'SVC_TEST_TEMPORAL_ADDRESS',
  workflowBundle: 'SVC_TEST_WORKFLOW_BUNDLE',
} as const;

export interface GlobalHandles {
  temporal: TemporalDevServer;
  pg: PostgresHandle;
  tmp: string;
}

export function testEnv(name: keyof typeof TEST_ENV): string {
  const value = process.env[TEST_ENV[name]];
  if (!value) throw new Error(`${TEST_ENV[name]} is not set: run the tests through jest (global setup starts Temporal and PostgreSQL).`);
  return value;
}
