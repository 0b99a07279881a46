import { z } from 'zod';
import { defineRoute } from '../http/route';
import type { AppDeps } from '../deps';

const CHECK_TIMEOUT_MS = 2_000;

export const healthzRoute = defineRoute({
  method: 'get',
  path: '/healthz',
  operationId: 'healthz',
  summary: 'Liveness: the process answers',
  tags: ['Health'],
  family: 'bare',
  access: { kind: 'public' },
  responses: { 200: { description: 'Alive', schema: z.strictObject({ status: z.literal('ok') }) } },
  handler: async () => ({ status: 200, body: { status: 'ok' } }),
});

const checkSchema = z.object({ ok: z.boolean(), latencyMs: z.number(), error: z.string().optional() });

export const readyzRoute = defineRoute({
  method: 'get',
  path: '/readyz',
  operationId: 'readyz',
  summary: 'Readiness: PostgreSQL and Temporal answer and the process is not shutting down',
  tags: ['Health'],
  family: 'bare',
  access: { kind: 'public' },
  responses: {
    200: { description: 'Ready', schema: z.strictObject({ status: z.literal('ready'), checks: z.record(z.string(), checkSchema) }) },
    503: { description: 'Not ready', schema: z.strictObject({ status: z.enum(['not_ready', 'shutting_down']), checks: z.record(z.string(), checkSchema) }) },
  },
  handler: async (ctx, { deps }) => {
    const [database, temporal] = await Promise.all([
      timed(() => ctx.state.em.getConnection().execute('select 1')),
      timed(() => temporalCheck(deps)),
    ]);
    const checks = { database, temporal };
    if (deps.lifecycle.shuttingDown) return { status: 503, body: { status: 'shutting_down', checks } };
    const ready = database.ok && temporal.ok;
    return { status: ready ? 200 : 503, body: { status: ready ? 'ready' : 'not_ready', checks } };
  },
});

async function temporalCheck(deps: AppDeps): Promise<void> {
  await deps.temporal.connection.workflowService.getSystemInfo({});
}

/** Runs a dependency check with a deadline; reports failures without their connection details. */
async function timed(check: () => Promise<unknown>): Promise<z.infer<typeof checkSchema>> {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      check(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error('timed out')), CHECK_TIMEOUT_MS);
      }),
    ]);
    return { ok: true, latencyMs: Math.round(performance.now() - started) };
  } catch (err) {
    const message = (err as Error).message === 'timed out' ? 'timed out' : 'unreachable';
    return { ok: false, latencyMs: Math.round(performance.now() - started), error: message };
  } finally {
    clearTimeout(timer);
  }
}

export const healthRoutes = [healthzRoute, readyzRoute];
