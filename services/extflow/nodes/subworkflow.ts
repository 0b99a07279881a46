/**
 * Execute Workflow → subworkflow. The called workflow is referenced by its externalId
 * (`extflow-<id>`): a bundle (or import-originals) that carries it links the node to it.
 */
import { toTemplate } from '../expressions';
import { Unsupported } from '../types';
import { isRecord, locatorValue, ourNode, type Mapper } from './context';

export const EXTERNAL_ID_PREFIX = 'extflow-';

/** The externalId of a workflow of the external tool with this id. */
export function externalIdFor(sourceId: string): string {
  return `${EXTERNAL_ID_PREFIX}${sourceId.replace(/[^A-Za-z0-9._-]/g, '_')}`.slice(0, 200);
}

export const executeWorkflow: Mapper = (ctx) => {
  const p = ctx.params;
  const source = typeof p.source === 'string' ? p.source : 'database';
  if (source !== 'database') throw new Unsupported(`a sub-workflow from "${source}"`, 'Import the sub-workflow and reference it by id.');
  const sourceId = locatorValue(p.workflowId);
  if (!sourceId || sourceId.startsWith('='))
    throw new Unsupported('a sub-workflow chosen by an expression', 'Reference one sub-workflow by id.');
  const options = isRecord(p.options) ? p.options : {};
  if (options.waitForSubWorkflow === false) ctx.warn('The run waits for the sub-workflow to finish ("wait for sub-workflow" was off).');
  if (p.mode === 'each') ctx.warn('"Run once for each item" runs the sub-workflow once with the node\'s input.');
  const reference = externalIdFor(sourceId);
  ctx.subworkflow(reference);
  let input: unknown = '=$';
  const mapping = isRecord(p.workflowInputs) ? p.workflowInputs : null;
  if (mapping && mapping.mappingMode === 'defineBelow' && isRecord(mapping.value)) input = toTemplate(mapping.value, ctx.scope);
  // The called workflow answers with its last node's output, an item list when that node is an
  // item node; it receives the caller's items as they are when no inputs are mapped.
  return { nodes: [ourNode(ctx, ctx.id, 'subworkflow', { workflowId: reference, input })], items: 'same', takesItems: input === '=$' };
};
