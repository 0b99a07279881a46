import { z } from 'zod';
import { isoDate, timestampFields } from './index';

/** Response schemas of the credentials area. No schema here has a field for a secret value. */

export const credentialSchema = z
  .strictObject({
    id: z.string(),
    workspaceId: z.string(),
    name: z.string(),
    type: z.string(),
    scope: z.literal('workspace'),
    source: z.enum(['inline', 'env']).describe('`env`: the value was copied from an allowed deployment variable at write time'),
    oauthScopes: z.array(z.string()).optional().describe('Present when the stored value has OAuth scopes'),
    allowedHosts: z
      .array(z.string())
      .describe(
        'Hosts the credential may be sent to (`host`, `host:port`, `*.domain`): those given at creation, those its value names (baseUrl, probeUrl, host) and its provider’s configured base URL',
      ),
    ...timestampFields,
  })
  .meta({ id: 'Credential' });

export const credentialListItemSchema = credentialSchema
  .extend({
    maskedValue: z
      .string()
      .nullable()
      .describe(
        'First 4 and last 2 characters of the secret around 8 bullets, or 8 bullets under 12 characters; null when the stored value cannot be decrypted',
      ),
    readable: z
      .boolean()
      .describe('False when the stored value cannot be decrypted (tampered, copied from another row, or its key is not configured)'),
  })
  .meta({ id: 'CredentialListItem' });

export const credentialListSchema = z.strictObject({ credentials: z.array(credentialListItemSchema) });
export const credentialEnvelopeSchema = z.strictObject({ credential: credentialSchema });

export const credentialTestResultSchema = z
  .strictObject({
    ok: z.boolean(),
    status: z.enum(['passed', 'auth_failed', 'failed', 'unreachable', 'timeout', 'refused', 'not_configured', 'unreadable', 'missing']),
    message: z.string().describe('What happened, never a secret'),
    checkedAt: isoDate,
    latencyMs: z.number().int().min(0),
  })
  .meta({ id: 'CredentialTestResult' });

export const credentialTestSchema = z.strictObject({ result: credentialTestResultSchema });

export const workflowCredentialTestSchema = z.strictObject({
  workflowId: z.string(),
  ok: z.boolean().describe('Every referenced credential passed'),
  credentials: z.array(
    z.strictObject({
      reference: z.string().describe('The `credentialId` the nodes give: a credential id, or a name'),
      nodeIds: z.array(z.string()),
      credential: z.strictObject({ id: z.string(), name: z.string(), type: z.string() }).nullable(),
      result: credentialTestResultSchema,
    }),
  ),
});

/** What a credentials bootstrap did with each credential reference: a workflow's, or an extflow import's aliases. */
export const bootstrapOutcome = {
  created: z.number().int(),
  skipped: z.number().int(),
  credentials: z.array(
    z.strictObject({
      reference: z.string(),
      outcome: z.enum(['created', 'exists', 'not_allowed', 'unset', 'invalid']),
      credentialId: z.string().nullable(),
    }),
  ),
};

export const bootstrapReportSchema = z.strictObject({
  bootstrap: z.strictObject({
    workflowId: z.string(),
    ...bootstrapOutcome,
  }),
});
