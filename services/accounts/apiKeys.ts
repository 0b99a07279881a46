import type { EntityManager } from '@mikro-orm/postgresql';
import { flushUnique } from '../kernel/flush';
import {
  ApiKeySchema,
  MembershipSchema,
  type ApiKey,
  type ApiKeyScope,
  type AuditSeverity,
  type OrganizationGrant,
} from '../../db/entities';
import { API_KEY_PREFIX } from './auth';
import { recordAudit } from '../kernel/audit';
import { AUTH_MESSAGES, invalidInput, forbidden, notFound } from '../kernel/errors';
import { newId, randomToken, sha256Hex } from '../kernel/ids';
import { isAdminRole, type Principal, type SessionPrincipal } from '../kernel/principal';
import { organizationGrantFor, organizationKeyIdsFor } from './organizations';

export interface ApiKeyView extends Pick<
  ApiKey,
  'id' | 'name' | 'scope' | 'workspaceId' | 'tokenPrefix' | 'createdById' | 'createdAt' | 'lastUsedAt'
> {
  organization?: OrganizationGrant;
  allowedWorkflowIds?: string[];
}

export function apiKeyView(key: ApiKey): ApiKeyView {
  return {
    id: key.id,
    name: key.name,
    scope: key.scope,
    workspaceId: key.workspaceId,
    tokenPrefix: key.tokenPrefix,
    createdById: key.createdById,
    createdAt: key.createdAt,
    lastUsedAt: key.lastUsedAt,
    ...(key.organization ? { organization: key.organization } : {}),
    ...(key.allowedWorkflowIds ? { allowedWorkflowIds: key.allowedWorkflowIds } : {}),
  };
}

export interface CreateApiKeyInput {
  name: string;
  scope: ApiKeyScope;
  workspaceId?: string;
  organization?: { workspaceSelection: 'organization' | 'selected'; workspaceIds?: string[]; permission: 'read' | 'write' };
  allowedWorkflowIds?: string[];
}

export interface ApiKeyPolicy {
  /** end_user_gateway keys exist only when the deployment enables end users. */
  endUsersEnabled: boolean;
  /** Checks that every id is a workflow of the workspace; without it every id is refused. */
  workflowIdsExist?: (em: EntityManager, workspaceId: string, ids: string[]) => Promise<boolean>;
}

/** Generates a token: `hise_` + 24 random bytes base64url. Shown once; only its hash is stored. */
export function generateApiKeyToken(): string {
  return `${API_KEY_PREFIX}${randomToken(24)}`;
}

const duplicateName = (name: string) => invalidInput(`An API key named "${name}" already exists for this scope.`);

/**
 * Creates a key as an Admin or Owner session. Name uniqueness is per scope inside the
 * workspace (organization keys: per creator), trimmed and case-insensitive, among keys not
 * revoked. The token is returned once.
 */
export async function createApiKey(
  em: EntityManager,
  actor: SessionPrincipal,
  input: CreateApiKeyInput,
  policy: ApiKeyPolicy,
): Promise<{ apiKey: ApiKeyView; token: string }> {
  const name = input.name.trim();
  const nameKey = name.toLowerCase();
  const workspaceId = input.workspaceId ?? actor.workspaceId;
  const membership = await em.findOne(MembershipSchema, { workspaceId, userId: actor.userId });
  if (!membership) throw forbidden('You are not a member of this workspace.');
  if (!isAdminRole(membership.role)) throw forbidden(AUTH_MESSAGES.adminRequired);

  if (input.scope !== 'organization' && input.organization) throw invalidInput('organization is only accepted for organization keys.');
  if (input.scope !== 'end_user_gateway' && input.allowedWorkflowIds) {
    throw invalidInput('allowedWorkflowIds is only accepted for end_user_gateway keys.');
  }
  if (input.scope === 'organization' && !input.organization)
    throw invalidInput('organization { workspaceSelection, workspaceIds, permission } is required for organization keys.');
  const organization =
    input.scope === 'organization' ? await organizationGrantFor(em, actor.userId, workspaceId, input.organization!) : null;
  const allowedWorkflowIds =
    input.scope === 'end_user_gateway' ? await gatewayWorkflows(em, workspaceId, input.allowedWorkflowIds, policy) : null;
  const keyWorkspaceId = input.scope === 'organization' ? null : workspaceId;

  const existing = await em.findOne(ApiKeySchema, {
    scope: input.scope,
    nameKey,
    revokedAt: null,
    ...(keyWorkspaceId ? { workspaceId: keyWorkspaceId } : { workspaceId: null, createdById: actor.userId }),
  });
  if (existing) throw duplicateName(name);

  return issueApiKey(em, actor, {
    name,
    scope: input.scope,
    workspaceId: keyWorkspaceId,
    auditWorkspaceId: workspaceId,
    createdById: actor.userId,
    organization,
    allowedWorkflowIds,
  });
}

/**
 * Writes a new key and its `api_key.create` audit record in one flush. Callers have already
 * checked permissions and the request; `actor` is null for operator tooling (admin command,
 * first-run bootstrap).
 */
export async function issueApiKey(
  em: EntityManager,
  actor: Principal | null,
  args: {
    name: string;
    scope: ApiKeyScope;
    workspaceId: string | null;
    auditWorkspaceId: string;
    createdById: string;
    organization?: OrganizationGrant | null;
    allowedWorkflowIds?: string[] | null;
  },
): Promise<{ apiKey: ApiKeyView; token: string }> {
  const token = generateApiKeyToken();
  const key = em.create(ApiKeySchema, {
    id: newId('key'),
    name: args.name,
    nameKey: args.name.trim().toLowerCase(),
    scope: args.scope,
    tokenHash: sha256Hex(token),
    tokenPrefix: token.slice(0, 12),
    workspaceId: args.workspaceId,
    createdById: args.createdById,
    organization: args.organization ?? null,
    allowedWorkflowIds: args.allowedWorkflowIds ?? null,
    createdAt: new Date(),
    lastUsedAt: null,
    revokedAt: null,
  });
  recordAudit(em, actor, {
    action: 'api_key.create',
    severity: 'info',
    workspaceId: args.auditWorkspaceId,
    targetType: 'api_key',
    targetId: key.id,
    metadata: { name: args.name, scope: args.scope },
  });
  // A concurrent create with the same name can win the race for the partial unique index.
  await flushUnique(em, () => duplicateName(args.name));
  return { apiKey: apiKeyView(key), token };
}

async function gatewayWorkflows(
  em: EntityManager,
  workspaceId: string,
  requested: string[] | undefined,
  policy: ApiKeyPolicy,
): Promise<string[]> {
  if (!policy.endUsersEnabled) throw invalidInput('End-user gateway keys are not enabled on this deployment.');
  const ids = [...new Set(requested ?? [])];
  if (ids.length === 0) throw invalidInput('allowedWorkflowIds must name at least one workflow of the workspace.');
  const exist = policy.workflowIdsExist ? await policy.workflowIdsExist(em, workspaceId, ids) : false;
  if (!exist) throw invalidInput('allowedWorkflowIds must name workflows of this workspace.');
  return ids;
}

/**
 * Keys an Admin or Owner of the session's workspace manages: the workspace's own active keys
 * and the active organization keys of its organization. Newest first.
 */
export async function listApiKeys(em: EntityManager, actor: SessionPrincipal): Promise<ApiKeyView[]> {
  requireAdmin(actor);
  const keys = await em.find(
    ApiKeySchema,
    {
      revokedAt: null,
      $or: [{ workspaceId: actor.workspaceId }, { workspaceId: null, id: { $in: await organizationKeyIdsFor(em, actor.workspaceId) } }],
    },
    { orderBy: { createdAt: 'desc', id: 'desc' } },
  );
  return keys.map(apiKeyView);
}

/**
 * Revokes a key at once: the very next request with it gets 401. Audited as `api_key.revoke`
 * with severity `critical`. Keys of other workspaces, and already revoked keys, are 404.
 */
export async function revokeApiKey(em: EntityManager, actor: SessionPrincipal, id: string): Promise<ApiKeyView> {
  const key = await manageableKey(em, actor, id);
  key.revokedAt = new Date();
  auditKeyChange(em, actor, key, 'api_key.revoke', 'critical', { name: key.name, scope: key.scope });
  await em.flush();
  return apiKeyView(key);
}

/**
 * Audits a rename or revocation in the actor's workspace. Any Admin or Owner of a workspace of
 * the organization manages its keys, also those selecting only other workspaces (the contract
 * allows it; docs/decisions.md): such a change is marked `crossWorkspace`, raised to at least
 * `warning`, and recorded in each workspace the key selects as well, so their Admins see who
 * changed a key of theirs from elsewhere.
 */
function auditKeyChange(
  em: EntityManager,
  actor: SessionPrincipal,
  key: ApiKey,
  action: string,
  severity: AuditSeverity,
  metadata: Record<string, unknown>,
): void {
  const grant = key.organization;
  const selected = grant?.workspaceSelection === 'selected' ? [...new Set(grant.workspaceIds)] : [];
  const crossWorkspace = selected.length > 0 && !selected.includes(actor.workspaceId);
  const details = grant
    ? {
        ...metadata,
        organizationId: grant.organizationId ?? null,
        workspaceSelection: grant.workspaceSelection,
        keyWorkspaceIds: grant.workspaceIds,
        actorWorkspaceId: actor.workspaceId,
        crossWorkspace,
      }
    : metadata;
  const level: AuditSeverity = crossWorkspace && severity === 'info' ? 'warning' : severity;
  for (const workspaceId of [actor.workspaceId, ...(crossWorkspace ? selected : [])]) {
    recordAudit(em, actor, { action, severity: level, workspaceId, targetType: 'api_key', targetId: key.id, metadata: details });
  }
}

/**
 * A key an Admin or Owner of the session's workspace manages: one of the workspace's active
 * keys, or an active organization key of its organization. Else 404.
 */
async function manageableKey(em: EntityManager, actor: SessionPrincipal, id: string): Promise<ApiKey> {
  requireAdmin(actor);
  const key = await em.findOne(ApiKeySchema, { id, revokedAt: null });
  const manageable =
    key !== null &&
    (key.workspaceId === actor.workspaceId ||
      (key.workspaceId === null && (await organizationKeyIdsFor(em, actor.workspaceId)).includes(key.id)));
  if (!key || !manageable) throw notFound('API key not found');
  return key;
}

/**
 * Renames a key (the only change a key takes: scope, selection, permission and allowlists are
 * fixed at creation). Names stay unique per scope as on create; audited as `api_key.rename`.
 */
export async function renameApiKey(em: EntityManager, actor: SessionPrincipal, id: string, rawName: string): Promise<ApiKeyView> {
  const key = await manageableKey(em, actor, id);
  const name = rawName.trim();
  if (!name) throw invalidInput('name cannot be blank.');
  const nameKey = name.toLowerCase();
  const clash = await em.findOne(ApiKeySchema, {
    id: { $ne: key.id },
    scope: key.scope,
    nameKey,
    revokedAt: null,
    ...(key.workspaceId ? { workspaceId: key.workspaceId } : { workspaceId: null, createdById: key.createdById }),
  });
  if (clash) throw duplicateName(name);
  const previous = key.name;
  key.name = name;
  key.nameKey = nameKey;
  auditKeyChange(em, actor, key, 'api_key.rename', 'info', { from: previous, to: name, scope: key.scope });
  await flushUnique(em, () => duplicateName(name));
  return apiKeyView(key);
}

function requireAdmin(actor: SessionPrincipal): void {
  if (!isAdminRole(actor.role)) throw forbidden(AUTH_MESSAGES.adminRequired);
}
