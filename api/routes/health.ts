import { z } from 'zod';
import { routeGroup, PUBLIC } from '../http/route';
import { checkReadiness } from '../../services/platform/health';

const healthRoute = routeGroup({ tags: ['Health'], family: 'bare', access: PUBLIC });

export const healthzRoute = healthRoute({
  method: 'get',
  path: '/healthz',
  operationId: 'healthz',
  summary: 'Liveness: the process answers',
  responses: { 200: { description: 'Alive', schema: z.strictObject({ status: z.literal('ok') }) } },
  handler: async () => ({ status: 200, body: { status: 'ok' } }),
});

const checkSchema = z.object({ ok: z.boolean(), latencyMs: z.number(), error: z.string().optional() });
const count = z.number().int().min(0);
const workersSchema = z
  .strictObject({ starting: count, running: count, draining: count, failed: count, stopped: count })
  .describe('Worker processes with a fresh heartbeat, by state');

export const readyzRoute = healthRoute({
  method: 'get',
  path: '/readyz',
  operationId: 'readyz',
  summary: 'Readiness: PostgreSQL and Temporal answer, a worker process is running, and the process is not shutting down',
  responses: {
    200: {
      description: 'Ready',
      schema: z.strictObject({ status: z.literal('ready'), checks: z.record(z.string(), checkSchema), workers: workersSchema }),
    },
    503: {
      description: 'Not ready',
      schema: z.strictObject({
        status: z.enum(['not_ready', 'shutting_down']),
        checks: z.record(z.string(), checkSchema),
        workers: workersSchema,
      }),
    },
  },
  handler: async (ctx, { deps }) => {
    const readiness = await checkReadiness(ctx.state.em, {
      pingTemporal: () => deps.temporal.connection.workflowService.getSystemInfo({}),
      shuttingDown: deps.lifecycle.shuttingDown,
      workerStaleMs: deps.config.processes.heartbeatStaleMs,
    });
    return { status: readiness.status === 'ready' ? 200 : 503, body: readiness };
  },
});

export const healthRoutes = [healthzRoute, readyzRoute];
