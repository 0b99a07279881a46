import { ApplicationFailure } from '@temporalio/common';
import type { ActivityDeps } from './index';
import type { TableNodeType } from '../engine/types';
import { oversizedOutput } from '../engine/limits';
import { DomainError } from '../services/kernel/errors';
import { runTableNode } from '../services/databases';

/**
 * Table nodes (table_read, table_insert, table_update, table_delete) on the run's own
 * workspace: the workspace comes from the run, never from the node's config, so a table id of
 * another workspace is "Table not found". Input the rows API would refuse (unknown column,
 * wrong type, missing row) fails the node for good; database outages stay retryable.
 */
export function createDatabaseActivities(deps: ActivityDeps) {
  return {
    async tableNode(args: { workspaceId: string; nodeType: TableNodeType; config: Record<string, unknown> }): Promise<{ output: unknown }> {
      let output: unknown;
      try {
        output = await runTableNode(deps.orm.em.fork(), args.workspaceId, args.nodeType, args.config);
      } catch (err) {
        if (err instanceof DomainError) throw ApplicationFailure.nonRetryable(err.message, 'TableNodeRefused', err.details ?? null);
        throw err;
      }
      const oversized = oversizedOutput(output);
      if (oversized) throw ApplicationFailure.nonRetryable(oversized, 'NodeOutputTooLarge');
      return { output };
    },
  };
}
