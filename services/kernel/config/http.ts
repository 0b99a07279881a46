import { z } from 'zod';
import { defineArea, envBool } from './define';

/** The API's HTTP server: where it listens, what it accepts, how it logs and stops. */
export const httpArea = defineArea('http', 'HTTP server', {
  PORT: z.coerce.number().int().min(0).max(65535).default(3000).describe('API port.'),
  HOST: z.string().default('0.0.0.0').describe('API bind address.'),
  LOG_LEVEL: z
    .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
    .default('info')
    .describe('Pino level: `fatal`, `error`, `warn`, `info`, `debug`, `trace`, `silent`.'),
  BODY_LIMIT: z.string().default('1mb').describe('Largest JSON or form body; larger bodies get 413.'),
  TRUST_PROXY: envBool(false).describe('Trust `X-Forwarded-*` (needed for `Secure` session cookies behind a TLS proxy).'),
  TRUST_PROXY_HOPS: z.coerce
    .number()
    .int()
    .min(1)
    .max(10)
    .default(1)
    .describe(
      'With `TRUST_PROXY`: how many proxies in front append to `X-Forwarded-For`; only those rightmost entries are believed, and the client address (which keys the sign-in limits) is the leftmost of them.',
    ),
  SHUTDOWN_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .positive()
    .default(15_000)
    .describe('How long shutdown waits for in-flight requests before cutting connections.'),
  VALIDATE_RESPONSES: envBool(false).describe(
    'Check every route answer against its declared response schema; a mismatch is logged and answered 500 (on in the test harness).',
  ),
});

export type HttpEnv = z.output<typeof httpArea.schema>;

export interface HttpConfig {
  port: number;
  host: string;
  logLevel: HttpEnv['LOG_LEVEL'];
  bodyLimit: string;
  trustProxy: boolean;
  /** TRUST_PROXY_HOPS: X-Forwarded-For entries (from the right) that trusted proxies wrote; Koa's `maxIpsCount`. */
  trustProxyHops: number;
  shutdownTimeoutMs: number;
  /**
   * Checks every route answer against its declared response schema and turns a mismatch into
   * a 500. On in the test harness; it costs a parse per response, so off by default.
   */
  validateResponses: boolean;
}

export function httpConfig(e: HttpEnv): HttpConfig {
  return {
    port: e.PORT,
    host: e.HOST,
    logLevel: e.LOG_LEVEL,
    bodyLimit: e.BODY_LIMIT,
    trustProxy: e.TRUST_PROXY,
    trustProxyHops: e.TRUST_PROXY_HOPS,
    shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT_MS,
    validateResponses: e.VALIDATE_RESPONSES,
  };
}
