import type { EntityManager } from '@mikro-orm/postgresql';
import { CredentialSchema } from '../../db/entities';

/** Whether `credentialId` names a credential of the workspace: the one check destinations make on connection bindings and CI sources. */
export async function credentialBelongsToWorkspace(em: EntityManager, workspaceId: string, credentialId: string): Promise<boolean> {
  return (await em.count(CredentialSchema, { id: credentialId, workspaceId })) > 0;
}
