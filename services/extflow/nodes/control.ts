/** No Operation → pass-through transform; Stop and Error → fail; Split In Batches (Loop Over Items) → a `loop` node. */
import { toJsonata, toTemplate } from '../expressions';
import { Unsupported } from '../types';
import { MAX_LOOP_BATCH_SIZE } from '../../../engine/limits';
import { isRecord, ourNode, type Mapper, type OutputRef } from './context';

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
 * The items a loop's `done` output carries, as the external tool gives them: what came back in
 * every iteration (one item, or an array of several), as one list; one item is that item.
 */
const DONE_ITEMS = '( $r := $reduce($, function($a, $v) { $append($a, $v) }, []); $count($r) = 1 ? $r[0] : $r )';

/** A batch of several items as a list, and of one item (the last batch may be one) as that item. */
const BATCH_ITEMS = '$type($) = "array" and $count($) = 1 ? $[0] : $';

/**
 * Split In Batches / Loop Over Items → our `loop` node, its loop-back connection a loop-back
 * edge (convert.ts). v3: output 0 "done" carries every item that came back once the items run
 * out (a transform `<id>__done` lists them), output 1 "loop" the current batch. v1 and v2 have
 * one output, the batch, and end by passing nothing on. batchSize defaults to 1 in v3 and to
 * 10 before. Without anything on v3's "loop" the node only passes its input on to "done".
 */
export const splitInBatches: Mapper = (ctx) => {
  const p = ctx.params;
  if (isRecord(p.options) && p.options.reset === true) {
    throw new Unsupported(
      'the "Reset" option (start the loop again on every input) has no equivalent',
      'Remove the option, or process the list in a code node.',
    );
  }
  const batchSize =
    typeof p.batchSize === 'number' && Number.isInteger(p.batchSize) && p.batchSize >= 1 ? p.batchSize : ctx.version < 3 ? 10 : 1;
  if (batchSize > MAX_LOOP_BATCH_SIZE) throw new Unsupported(`a batch size over ${MAX_LOOP_BATCH_SIZE}`, 'Use a smaller batch size.');
  const loopOutput = ctx.version < 3 ? 0 : 1;
  if (!ctx.connectedOutputs.has(loopOutput)) {
    ctx.warn('Nothing is connected to the "loop" output, so the node passes its input to "done" unchanged.');
    return { nodes: [ourNode(ctx, ctx.id, 'transform', { expression: '$' })], items: 'same' };
  }
  const nodes = [ourNode(ctx, ctx.id, 'loop', { batchSize })];
  const edges: Array<{ source: string; target: string; handle?: string }> = [];
  let batch: OutputRef = { source: ctx.id, handle: 'loop' };
  if (batchSize > 1) {
    const batchId = `${ctx.id}__batch`;
    nodes.push(ourNode(ctx, batchId, 'transform', { expression: BATCH_ITEMS }, 1));
    edges.push({ source: ctx.id, target: batchId, handle: 'loop' });
    batch = { source: batchId };
  }
  const doneId = `${ctx.id}__done`;
  if (ctx.version >= 3) {
    nodes.push(ourNode(ctx, doneId, 'transform', { expression: DONE_ITEMS }, 2));
    edges.push({ source: ctx.id, target: doneId, handle: 'done' });
  }
  return {
    nodes,
    edges,
    output: (i) => (i === loopOutput ? batch : ctx.version >= 3 && i === 0 ? { source: doneId } : null),
    regularOutputs: ctx.version < 3 ? 1 : 2,
    // What comes back round the loop is kept as it is (a batch is a list of items), never cut to one item.
    takesItems: true,
  };
};
