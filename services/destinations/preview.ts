import type { EntityManager } from '@mikro-orm/postgresql';
import type { WorkspacePrincipal } from '../kernel/principal';
import { ensureProductionTarget, loadScopedWorkflow } from './model';
import { assessPublication, type ConnectionReport, type DependencyReport, type PublicationCheck, type PublishFields } from './publication';
import { findTargetOf } from './runtime';

export interface PublicationPreview {
  ready: boolean;
  checks: PublicationCheck[];
  warnings: string[];
  /** Credential references only, never secret values. */
  connections: ConnectionReport[];
  dependencies: DependencyReport[];
}

/**
 * `POST /targets/preview-publication`: what publishing these fields would find, without
 * writing anything. Publish checks everything again.
 */
export async function previewPublication(
  em: EntityManager,
  principal: WorkspacePrincipal,
  workflowId: string,
  fields: PublishFields,
  opts: { secretKey: string | undefined },
): Promise<PublicationPreview> {
  const wf = await loadScopedWorkflow(em, principal, workflowId);
  await ensureProductionTarget(em, wf);
  const target = await findTargetOf(em, wf, fields.targetId);
  const { ready, checks, warnings, connections, dependencies } = await assessPublication(em, wf, target, fields, opts);
  return { ready, checks, warnings, connections, dependencies };
}
