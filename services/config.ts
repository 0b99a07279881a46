import path from 'node:path';
import { z } from 'zod';
import { unavailable } from './errors';

/**
 * Every setting the service reads from the environment, with its default.
 * The README's configuration table mirrors this list; keep them in step.
 */
const envBool = (fallback: boolean) =>
  z
    .enum(['true', 'false', '1', '0'])
    .default(fallback ? 'true' : 'false')
    .transform((v) => v === 'true' || v === '1');

const envSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().default('0.0.0.0'),
  DATABASE_URL: z.string().optional(),
  TEMPORAL_ADDRESS: z.string().optional(),
  TEMPORAL_NAMESPACE: z.string().default('default'),
  TEMPORAL_UI_URL: z.string().optional(),
  TEMPORAL_SDK_METRICS_ADDRESS: z.string().regex(/^(\[[0-9a-fA-F:]+\]|[\w.-]+):\d{1,5}$/, 'expected host:port, e.g. 0.0.0.0:9464').optional(),
  TEMPORAL_PORT: z.coerce.number().int().min(1).max(65535).default(7233),
  TEMPORAL_UI_PORT: z.coerce.number().int().min(1).max(65535).default(8233),
  DATA_DIR: z.string().default('.data'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  BODY_LIMIT: z.string().default('1mb'),
  TRUST_PROXY: envBool(false),
  SESSION_TTL_HOURS: z.coerce.number().positive().default(24 * 7),
  SHUTDOWN_TIMEOUT_MS: z.coerce.number().int().positive().default(15_000),
  BOOTSTRAP_OWNER_EMAIL: z.string().email().default('owner@example.com'),
  END_USERS_ENABLED: envBool(false),
  OUTBOUND_ALLOW_PRIVATE_NETWORKS: envBool(false),
  SECRET_KEY: z.string().min(32, 'SECRET_KEY must be at least 32 characters').optional(),
  WEBHOOK_SYNC_BUDGET_MS: z.coerce.number().int().min(100).max(300_000).default(30_000),
  OUTBOX_POLL_MS: z.coerce.number().int().min(50).max(60_000).default(1_000),
  ERRTRACKER_INGRESS_ENABLED: envBool(false),
  VALIDATE_RESPONSES: envBool(false),
});

export type AppConfig = {
  port: number;
  host: string;
  databaseUrl: string | undefined;
  temporal: {
    address: string | undefined;
    namespace: string;
    uiUrl: string | undefined;
    devPort: number;
    devUiPort: number;
    /** `host:port` of a worker's Prometheus exporter for SDK metrics; unset: a private loopback port. */
    sdkMetricsAddress: string | undefined;
  };
  dataDir: string;
  logLevel: z.infer<typeof envSchema>['LOG_LEVEL'];
  bodyLimit: string;
  trustProxy: boolean;
  sessionTtlMs: number;
  shutdownTimeoutMs: number;
  bootstrapOwnerEmail: string;
  endUsersEnabled: boolean;
  /** Lets http nodes call private, loopback and link-local addresses. */
  outboundAllowPrivateNetworks: boolean;
  /** Derives webhook tokens and encrypts stored secrets; required by the api process. */
  secretKey: string | undefined;
  webhookSyncBudgetMs: number;
  outboxPollMs: number;
  errtrackerIngressEnabled: boolean;
  /**
   * Checks every route answer against its declared response schema and turns a mismatch into
   * a 500. On in the test harness; it costs a parse per response, so off by default.
   */
  validateResponses: boolean;
};

/** Reads the configuration once; throws a readable error naming the bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): AppConfig {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new Error(`Invalid configuration: ${issues}`);
  }
  const e = parsed.data;
  return {
    port: e.PORT,
    host: e.HOST,
    databaseUrl: e.DATABASE_URL || undefined,
    temporal: {
      address: e.TEMPORAL_ADDRESS || undefined,
      namespace: e.TEMPORAL_NAMESPACE,
      uiUrl: e.TEMPORAL_UI_URL || undefined,
      devPort: e.TEMPORAL_PORT,
      devUiPort: e.TEMPORAL_UI_PORT,
      sdkMetricsAddress: e.TEMPORAL_SDK_METRICS_ADDRESS || undefined,
    },
    dataDir: path.resolve(e.DATA_DIR),
    logLevel: e.LOG_LEVEL,
    bodyLimit: e.BODY_LIMIT,
    trustProxy: e.TRUST_PROXY,
    sessionTtlMs: e.SESSION_TTL_HOURS * 3600_000,
    shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT_MS,
    bootstrapOwnerEmail: e.BOOTSTRAP_OWNER_EMAIL,
    endUsersEnabled: e.END_USERS_ENABLED,
    outboundAllowPrivateNetworks: e.OUTBOUND_ALLOW_PRIVATE_NETWORKS,
    secretKey: e.SECRET_KEY,
    webhookSyncBudgetMs: e.WEBHOOK_SYNC_BUDGET_MS,
    outboxPollMs: e.OUTBOX_POLL_MS,
    errtrackerIngressEnabled: e.ERRTRACKER_INGRESS_ENABLED,
    validateResponses: e.VALIDATE_RESPONSES,
  };
}

/**
 * SECRET_KEY, which webhook tokens and stored secrets derive from. The api process may start
 * without it (deploys without webhook triggers work), so the features that need it refuse
 * with `unavailable` when it is missing.
 */
export function requireSecretKey(secretKey: string | undefined): string {
  if (!secretKey) throw unavailable('Webhooks are unavailable: SECRET_KEY is not configured.');
  return secretKey;
}
