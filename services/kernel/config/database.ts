import { z } from 'zod';
import { defineArea } from './define';

/** The service's own PostgreSQL database (db/, scripts/lib/ownerRole.ts). */
export const databaseArea = defineArea('database', 'PostgreSQL', {
  DATABASE_URL: z
    .string()
    .optional()
    .describe(
      'PostgreSQL URL the service connects as (a non-superuser owner role, docs/postgres-roles.md); unset: `npm start` uses the local server on 127.0.0.1:5432 (or an embedded one if none answers) and connects as the `svc_owner` role it provisions there.',
    ),
  DATABASE_ADMIN_URL: z
    .string()
    .optional()
    .describe(
      "A superuser URL used only by `npm start` and `npm run migrate` to create or repair `DATABASE_URL`'s owner role, hand it the database's objects and create the pgvector extension (docs/postgres-roles.md).",
    ),
});

export type DatabaseEnv = z.output<typeof databaseArea.schema>;

export interface DatabaseConfig {
  databaseUrl: string | undefined;
  /** A superuser URL used only by `npm start` and migrate to provision DATABASE_URL's owner role (scripts/lib/ownerRole.ts). */
  databaseAdminUrl: string | undefined;
}

export function databaseConfig(e: DatabaseEnv): DatabaseConfig {
  return { databaseUrl: e.DATABASE_URL || undefined, databaseAdminUrl: e.DATABASE_ADMIN_URL || undefined };
}
