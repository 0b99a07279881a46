/**
 * The extflow bundle section of the worker doctor: how many of the workspace's workflows came
 * from the external tool (services/extflow stores them with externalId `extflow-…`).
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { WorkflowSchema } from '../../db/entities';

export interface ExtflowBundleSection {
  imported: boolean;
  /** The `bundlePath` the doctor was asked about, as given (null when none). */
  bundlePath: string | null;
  workflows: number;
  message: string;
}

export async function extflowBundleSection(
  em: EntityManager,
  workspaceId: string,
  bundlePath: string | undefined,
): Promise<ExtflowBundleSection> {
  const workflows = await em.count(WorkflowSchema, { workspaceId, externalId: { $like: 'extflow-%' } });
  if (workflows === 0)
    return { imported: false, bundlePath: bundlePath ?? null, workflows: 0, message: 'No extflow bundle has been imported.' };
  return {
    imported: true,
    bundlePath: bundlePath ?? null,
    workflows,
    message: `${workflows} workflow${workflows === 1 ? '' : 's'} imported from the external tool; POST /api/v1/workers/extflow/smoke-test checks them.`,
  };
}
