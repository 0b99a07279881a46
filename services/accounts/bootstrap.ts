import type { EntityManager } from '@mikro-orm/postgresql';
import { WorkspaceSchema } from '../../db/entities';
import { issueApiKey, type ApiKeyView } from './apiKeys';
import { randomToken } from '../kernel/ids';
import { createWorkspaceWithOwner } from './workspaces';

export interface ProvisionedWorkspace {
  workspace: { id: string; name: string };
  user: { id: string; email: string };
  apiKey: Pick<ApiKeyView, 'id' | 'name' | 'scope'> & { token: string };
}

/**
 * Creates a workspace, its owner (or makes an existing user its owner after checking the
 * password) and a workspace-scoped key for that owner. Used by the admin command and the
 * first-run bootstrap; HTTP clients create keys through the session routes instead.
 */
export async function provisionWorkspace(
  em: EntityManager,
  input: { name: string; ownerEmail: string; ownerPassword: string; keyName?: string },
): Promise<ProvisionedWorkspace> {
  const { workspace, user } = await createWorkspaceWithOwner(em, input);
  const { apiKey, token } = await issueApiKey(em, null, {
    name: input.keyName ?? 'Owner key',
    scope: 'workspace',
    workspaceId: workspace.id,
    auditWorkspaceId: workspace.id,
    createdById: user.id,
  });
  return {
    workspace: { id: workspace.id, name: workspace.name },
    user: { id: user.id, email: user.email },
    apiKey: { id: apiKey.id, name: apiKey.name, scope: apiKey.scope, token },
  };
}

/**
 * On the very first start (no workspace exists yet) creates a default workspace with an
 * owner whose password is random, and returns the credentials to print once. Returns null
 * on later starts.
 */
export async function bootstrapFirstRun(
  em: EntityManager,
  ownerEmail: string,
): Promise<(ProvisionedWorkspace & { ownerPassword: string }) | null> {
  if ((await em.count(WorkspaceSchema, {})) > 0) return null;
  const ownerPassword = randomToken(12);
  const provisioned = await provisionWorkspace(em, { name: 'Default workspace', ownerEmail, ownerPassword });
  return { ...provisioned, ownerPassword };
}
