import { ApplicationFailure } from '@temporalio/common';
import { purgeFile } from '../services/files';
import type { ActivityDeps } from './index';

/** The file purge workflow's activity (services/files/files.ts `purgeFile`). */
export function createFileActivities(deps: ActivityDeps) {
  return {
    async purgeFile(ref: { workspaceId: string; fileId: string }) {
      if (!deps.blobs) throw ApplicationFailure.retryable('This worker has no blob store configured.', 'BlobStoreMissing');
      return purgeFile(deps.orm.em.fork(), deps.blobs, ref);
    },
  };
}
