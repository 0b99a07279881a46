/** No Operation → pass-through transform; Stop and Error → fail; Split In Batches (Loop Over Items) → pass-through when it does not loop. */
import { toJsonata, toTemplate } from '../expressions';
import { Unsupported } from '../types';
import { ourNode, type Mapper } from './context';

// Passes its input on as it came, one item or an item list: transparent to the item model.
export const noOp: Mapper = (ctx) => ({ nodes: [ourNode(ctx, ctx.id, 'transform', { expression: '$' })], items: 'same' });

export const stopAndError: Mapper = (ctx) => {
  const p = ctx.params;
  let message: unknown;
  if (p.errorType === 'errorObject') {
    message = `=$string(${toJsonata(p.errorObject ?? '{}', ctx.scope)})`;
  } else {
    message = toTemplate(typeof p.errorMessage === 'string' && p.errorMessage !== '' ? p.errorMessage : 'Workflow stopped', ctx.scope);
  }
  return { nodes: [ourNode(ctx, ctx.id, 'fail', { message })] };
};

/**
 * Loop Over Items (v3): output 0 "done" carries every item once the loop ends, output 1
 * "loop" the current batch. Without anything on "loop" the node only passes its input to
 * "done", which we can express; a loop needs a cycle, which our graphs do not have.
 */
export const splitInBatches: Mapper = (ctx) => {
  if (ctx.version < 3)
    throw new Unsupported(
      'Split In Batches before version 3 loops back through a connection',
      'Process the list in a code node, or call a subworkflow per item.',
    );
  if (ctx.connectedOutputs.has(1)) {
    throw new Unsupported(
      'a loop over batches (the "loop" output is connected); graphs here have no cycles',
      'Process the list in one code node, or move the loop body into a subworkflow called per item.',
    );
  }
  ctx.warn('Nothing is connected to the "loop" output, so the node passes its input to "done" unchanged.');
  return { nodes: [ourNode(ctx, ctx.id, 'transform', { expression: '$' })], items: 'same' };
};
