/**
 * The extflow bundle section of the worker doctor. Seam for the extflow import (issue 19,
 * "Import"): it will report the imported bundle (its workflows, their readiness, credential
 * aliases, the latest imported-workflow smoke test). Until that lands nothing can be imported,
 * and the section says so.
 */
import type { EntityManager } from '@mikro-orm/postgresql';

export interface ExtflowBundleSection {
  imported: boolean;
  /** The `bundlePath` the doctor was asked about, as given (null when none). */
  bundlePath: string | null;
  workflows: number;
  message: string;
}

export async function extflowBundleSection(_em: EntityManager, _workspaceId: string, bundlePath: string | undefined): Promise<ExtflowBundleSection> {
  return { imported: false, bundlePath: bundlePath ?? null, workflows: 0, message: 'No extflow bundle has been imported.' };
}
