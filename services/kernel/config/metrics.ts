import { z } from 'zod';
import { defineArea, SECRET } from './define';
import type { HttpEnv } from './http';

/** Who may scrape `/metrics`, and on which port (api/metricsAccess.ts, docs/operations.md). */
export const metricsArea = defineArea('metrics', 'Metrics', {
  METRICS_PORT: z
    .preprocess((v) => (v === '' ? undefined : v), z.coerce.number().int().min(1).max(65535).optional())
    .describe('Serve `/metrics` on this port only (1 to 65535), not on `PORT`; unset: on `PORT`.'),
  METRICS_HOST: z.string().optional().describe('Bind address of `METRICS_PORT`. Unset: `HOST`.'),
  METRICS_TOKEN: z
    .string()
    .refine((v) => v === '' || v.length >= 16, 'expected at least 16 characters')
    .optional()
    .meta(SECRET)
    .describe(
      'At least 16 characters; `/metrics` then needs `Authorization: Bearer <token>` (401 otherwise) on whichever port serves it. With neither this nor `METRICS_PORT`, `/metrics` answers loopback callers only (404 to others and to proxied requests).',
    ),
});

export type MetricsEnv = z.output<typeof metricsArea.schema>;

export interface MetricsConfig {
  /** Who may scrape /metrics (api/metricsAccess.ts, docs/operations.md). */
  metrics: {
    /** METRICS_PORT: /metrics is served there only (the API port answers 404); unset: on the API port. */
    port: number | undefined;
    /** METRICS_HOST: the metrics port's bind address; default HOST. */
    host: string;
    /** METRICS_TOKEN: scrapes must send `Authorization: Bearer <token>`; unset with no port: loopback callers only. */
    token: string | undefined;
  };
}

export function metricsConfig(e: MetricsEnv & Pick<HttpEnv, 'HOST'>): MetricsConfig {
  return { metrics: { port: e.METRICS_PORT, host: e.METRICS_HOST || e.HOST, token: e.METRICS_TOKEN || undefined } };
}
