/**
 * Merge → merge (waits for its live inputs) and a transform that shapes the result as the
 * external tool does: append (input 1's item, then input 2's), choose branch / pass-through
 * (one input's data, or an empty item), combine by position (the items' fields merged).
 * Combining by matching fields, SQL or all combinations is listed instead.
 */
import { fieldStep } from '../expressions';
import { Unsupported } from '../types';
import { ourNode, type MapContext, type Mapper } from './context';

function inputsByIndex(ctx: MapContext): string[] {
  const byIndex: string[] = [];
  for (const { sourceId, inputIndex } of ctx.inputs) {
    if (byIndex[inputIndex] !== undefined)
      throw new Unsupported(`input ${inputIndex + 1} has several connections`, 'Connect one node to each input.');
    byIndex[inputIndex] = sourceId;
  }
  return byIndex;
}

const ref = (id: string | undefined) => (id ? `$.${fieldStep(id)}` : '()');

export const mergeNode: Mapper = (ctx) => {
  const p = ctx.params;
  const inputs = inputsByIndex(ctx);
  const v = ctx.version;
  let mode = typeof p.mode === 'string' ? p.mode : 'append';
  if (v < 2) {
    const legacy: Record<string, string> = {
      append: 'append',
      passThrough: 'chooseBranch',
      wait: 'wait',
      mergeByIndex: 'combineByPosition',
    };
    if (!(mode in legacy))
      throw new Unsupported(`merge mode "${mode}"`, 'Use append, pass-through, wait or merge by index, or merge in a code node.');
    mode = legacy[mode] ?? mode; // present: checked above
  } else if (mode === 'combine') {
    const by =
      typeof p.combineBy === 'string' ? p.combineBy : typeof p.combinationMode === 'string' ? p.combinationMode : 'combineByFields';
    if (by === 'mergeByPosition' || by === 'combineByPosition') mode = 'combineByPosition';
    else
      throw new Unsupported(
        `combining items by ${by === 'mergeByFields' || by === 'combineByFields' ? 'matching fields' : by === 'multiplex' || by === 'combineAll' ? 'all combinations' : by}`,
        'Combine the items in a code node after a merge.',
      );
  } else if (mode === 'mergeByIndex' || mode === 'combineByPosition') mode = 'combineByPosition';
  let expression: string;
  switch (mode) {
    case 'append':
      expression = `[${inputs.map((id) => ref(id)).join(', ')}]`;
      ctx.warn('Appended items become one array value (input 1 first).');
      break;
    case 'combineByPosition':
      expression = `$merge([${inputs.map((id) => ref(id)).join(', ')}])`;
      break;
    case 'wait':
      expression = '{}';
      break;
    case 'chooseBranch': {
      const out = typeof p.output === 'string' ? p.output : 'input1';
      if (out === 'empty') expression = '{}';
      else {
        const n = out === 'specifiedInput' ? Number(p.useDataOfInput ?? 1) : out === 'input2' ? 2 : 1;
        expression = ref(inputs[n - 1]);
      }
      break;
    }
    case 'combineBySql':
      throw new Unsupported('combining items with SQL', 'Combine the items in a code node after a merge.');
    default:
      throw new Unsupported(`merge mode "${mode}"`, 'Use append, choose branch or combine by position.');
  }
  if (inputs.filter(Boolean).length < 2) ctx.warn('Fewer than two inputs are connected.');
  const mergeId = `${ctx.id}__merge`;
  return { nodes: [ourNode(ctx, mergeId, 'merge', {}, 1), ourNode(ctx, ctx.id, 'transform', { expression })] };
};
