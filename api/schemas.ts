import { z } from 'zod';
import { LOG_LEVELS, RUN_STATUSES, RUN_TRIGGERS } from '../db/entities';
import { RUN_SORTS } from '../services/runs/queries';

/** Response and shared schemas reused across areas; request schemas live beside their routes. */
export const bareErrorSchema = z.object({ error: z.string(), code: z.string().optional() }).passthrough();
export const envelopeErrorSchema = z.object({ ok: z.literal(false), error: z.object({ code: z.string(), message: z.string() }) });

export const isoDate = z.string().describe('ISO-8601 timestamp');

export const workspaceSchema = z.object({ id: z.string(), name: z.string(), createdAt: isoDate, updatedAt: isoDate });

export const redactionSchema = z.object({
  applied: z.literal(true),
  projection: z.literal('safe-content'),
  contractVersion: z.literal('workspace-safe.v1'),
  restrictedFields: z.array(z.string()),
});

export const userSchema = z.object({
  id: z.string(),
  email: z.string(),
  name: z.string().nullable(),
  status: z.enum(['active', 'invited', 'banned']),
  createdAt: isoDate,
});

export const roleSchema = z.enum(['owner', 'admin', 'member', 'viewer']);

export const apiKeySchema = z.object({
  id: z.string(),
  name: z.string(),
  scope: z.string(),
  workspaceId: z.string().nullable(),
  tokenPrefix: z.string(),
  createdById: z.string(),
  createdAt: isoDate,
  lastUsedAt: isoDate.nullable(),
  organization: z
    .object({ workspaceSelection: z.enum(['organization', 'selected']), workspaceIds: z.array(z.string()), permission: z.enum(['read', 'write']) })
    .optional(),
  allowedWorkflowIds: z.array(z.string()).optional(),
});

/** Standard error responses of an API-key route in the bare family. */
export const bareAuthErrors = {
  400: { description: 'Invalid request', schema: bareErrorSchema },
  401: { description: 'Valid bearer API key is required', schema: bareErrorSchema },
  403: { description: 'Wrong key scope or role', schema: bareErrorSchema },
};

/**
 * Query filters shared by the runs list and the logs routes. Empty or `all` means no filter;
 * `limit` stays a string because each route clamps it with its own bounds.
 */
export const runFiltersQuery = z.object({
  status: z.enum(['all', '', ...RUN_STATUSES]).optional(),
  trigger: z.enum(['all', '', ...RUN_TRIGGERS]).optional(),
  workflowId: z.string().optional(),
  level: z.enum(['all', '', ...LOG_LEVELS]).optional(),
  dateFrom: z.string().optional(),
  dateTo: z.string().optional(),
  query: z.string().max(500).optional(),
  sort: z.enum(RUN_SORTS).optional(),
  limit: z.string().optional(),
});
