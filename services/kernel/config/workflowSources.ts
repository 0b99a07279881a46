import { z } from 'zod';
import { defineArea } from './define';

/** Where workflows may be read from on disk: local Git repositories (services/repository) and extflow bundles (services/extflow). */
export const workflowSourcesArea = defineArea('workflowSources', 'Workflow sources', {
  WORKFLOW_REPOSITORY_ROOT: z
    .string()
    .min(1)
    .optional()
    .describe(
      'Directory holding the bare Git repositories workspace repository settings may name (`localPath` is resolved inside it); unset refuses `localPath` settings (smart-HTTP `remoteUrl` settings need no root).',
    ),
  EXTFLOW_IMPORT_DIR: z
    .string()
    .min(1)
    .optional()
    .describe(
      'The only directory `bundlePath` of the extflow worker routes may read (relative paths, no `..`, symbolic links must resolve inside it); unset refuses `bundlePath`.',
    ),
});

export type WorkflowSourcesEnv = z.output<typeof workflowSourcesArea.schema>;

export interface WorkflowSourcesConfig {
  /** WORKFLOW_REPOSITORY_ROOT: where local bare repositories of workspace repository settings may live (services/repository). */
  workflowRepositoryRoot: string | undefined;
  /** EXTFLOW_IMPORT_DIR: the only directory `bundlePath` of the extflow worker routes may read (services/extflow). */
  extflowImportDir: string | undefined;
}

export function workflowSourcesConfig(e: WorkflowSourcesEnv): WorkflowSourcesConfig {
  return { workflowRepositoryRoot: e.WORKFLOW_REPOSITORY_ROOT, extflowImportDir: e.EXTFLOW_IMPORT_DIR };
}
