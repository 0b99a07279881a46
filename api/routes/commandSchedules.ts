import { z } from 'zod';
import { routeGroup, type AnyRoute, ANY_KEY_READ, ANY_KEY_WRITE, SESSION_READ, SESSION_WRITE } from '../http/route';
import { scheduleCreatedSchema, scheduleListSchema } from '../schemas/commands';
import { forbidden } from '../../services/kernel/errors';
import { createSchedule, listSchedules } from '../../services/commands';

/**
 * Command schedules (bare family). v1 accepts workspace, personal and copilot keys; the session
 * twins take the cookie and an optional `workspaceId` that must be the session's. No update or
 * delete over HTTP (spec).
 */
const body = z
  .object({
    title: z.unknown(),
    prompt: z.unknown(),
    cron: z.unknown(),
    timezone: z.unknown(),
    threadId: z.unknown(),
    workspaceId: z.unknown(),
  })
  .partial();

/** One mount of the schedules: v1 (keys) or the session twin (cookie), each with its read access. */
const scheduleGroup = (kind: 'v1' | 'session') =>
  routeGroup({
    tags: ['Command schedules'],
    family: 'bare',
    access: kind === 'v1' ? ANY_KEY_READ : SESSION_READ,
    errors: {
      400: 'Schedule title is required. / Schedule prompt is required. / invalid cron or timezone',
      401: 'Valid bearer API key (or session) is required',
      403: 'Wrong key scope, or another workspace',
      404: 'threadId not in this workspace',
    },
    pathPrefix: kind === 'v1' ? '/api/v1/svc-command/schedules' : '/api/svc-command/schedules',
  });

export const commandScheduleRoutes: AnyRoute[] = [
  ...(['v1', 'session'] as const).flatMap((kind) => {
    const scheduleRoute = scheduleGroup(kind);
    const suffix = kind === 'v1' ? '' : 'Session';
    return [
      scheduleRoute({
        method: 'get',
        path: '',
        operationId: `listCommandSchedules${suffix}`,
        summary: 'Command schedules of the workspace',
        responses: { 200: { description: '`{ schedules }`', schema: scheduleListSchema } },
        handler: async (ctx, { principal }) => ({ status: 200, body: { schedules: await listSchedules(ctx.state.em, principal) } }),
      }),
      scheduleRoute({
        method: 'post',
        path: '',
        operationId: `createCommandSchedule${suffix}`,
        summary:
          'Create a command schedule (title, prompt, cron, timezone default UTC, optional threadId); created enabled, as a Temporal Schedule',
        // Personal and copilot keys may create (safe-read scopes), but only for a member above viewer.
        access: kind === 'v1' ? ANY_KEY_WRITE : SESSION_WRITE,
        body,
        responses: { 201: { description: '`{ schedule }`', schema: scheduleCreatedSchema } },
        handler: async (ctx, { principal, body: input, deps }) => {
          if (kind === 'session' && input.workspaceId !== undefined && input.workspaceId !== principal.workspaceId)
            throw forbidden('The session is not signed in to that workspace.');
          return {
            status: 201,
            body: { schedule: await createSchedule(ctx.state.em, deps.services.commands.schedules, principal, input) },
          };
        },
      }),
    ];
  }),
];
