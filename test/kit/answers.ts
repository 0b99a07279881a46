/**
 * Answer types of routes whose schemas the typed client has no helper for, derived from the
 * API's own zod schemas (`api/schemas`, `api/routes`) so they cannot drift from the contract.
 */
import type { z } from 'zod';
import type { apiKeySchema } from '../../api/schemas';
import type { organizationSchema } from '../../api/routes/organizations';

export type ApiKey = z.infer<typeof apiKeySchema>;
/** POST /api/api-keys: the key, and its token shown once. */
export type CreatedApiKey = { apiKey: ApiKey; token: string };
/** GET /api/api-keys. */
export type ApiKeyList = { apiKeys: ApiKey[] };
/** PATCH /api/api-keys/{id}. */
export type RenamedApiKey = { apiKey: ApiKey };
/** DELETE /api/api-keys/{id}. */
export type RevokedApiKey = { deleted: true; apiKey: ApiKey };
/** GET, PATCH /api/organization and POST /api/organization/workspaces. */
export type OrganizationAnswer = { organization: z.infer<typeof organizationSchema> };
