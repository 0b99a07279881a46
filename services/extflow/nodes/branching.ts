/**
 * If → condition (outputs true/false); Filter → condition whose false output is dropped; Switch
 * (rules and expression modes) → switch. When an input may carry several items (`ctx.perItem`)
 * each item is routed on its own, as the external tool does: the node becomes the per-item
 * routing of itemWiring.ts (routedNodes), each output passing on its items, and an output
 * without items not running what follows it.
 */
import { conditionOf, ruleCondition, v1Comparison } from '../conditions';
import { toJsonata } from '../expressions';
import { routedNodes } from '../itemWiring';
import { Unsupported } from '../types';
import { isRecord, ourNode, perItemScope, type MapContext, type Mapped, type Mapper } from './context';

/** A branching node routing each item: `route` gives, per item, the output indexes (strings) it goes to. */
function perItemRouting(ctx: MapContext, route: string, outputs: number, connected: (k: number) => boolean): Mapped {
  const made = routedNodes((id, type, config, offset) => ourNode(ctx, id, type, config, offset), ctx.id, route, outputs);
  if (ctx.node.alwaysOutputData === true)
    ctx.lossy(
      'unsupportedOption',
      '"Always output data" is not carried over for this node: an output without items does not run the nodes after it.',
    );
  return {
    nodes: made.nodes,
    edges: made.edges,
    entry: `${ctx.id}__anyin`,
    output: (i) => (i < outputs && connected(i) ? { source: made.outputOf(i) } : null),
    regularOutputs: outputs,
    errorSource: `${ctx.id}__route`,
    items: 'same',
  };
}

export const ifNode: Mapper = (ctx) => {
  if (ctx.perItem) return perItemRouting(ctx, `[(${conditionOf(ctx.params, ctx.version, perItemScope(ctx))}) ? "0" : "1"]`, 2, () => true);
  const expression = conditionOf(ctx.params, ctx.version, ctx.scope);
  return {
    nodes: [ourNode(ctx, ctx.id, 'condition', { expression })],
    output: (i) => (i === 0 ? { source: ctx.id, handle: 'true' } : i === 1 ? { source: ctx.id, handle: 'false' } : null),
    regularOutputs: 2,
  };
};

/** Filter keeps the item when the conditions hold (output 0); the optional "discarded" output is `false`. */
export const filterNode: Mapper = (ctx) => {
  const options = isRecord(ctx.params.options) ? ctx.params.options : {};
  if (ctx.perItem) {
    const condition = conditionOf(ctx.params, ctx.version, perItemScope(ctx));
    return perItemRouting(ctx, `[(${condition}) ? "0" : "1"]`, 2, (k) => k === 0 || options.allowDiscardedOutput === true);
  }
  const expression = conditionOf(ctx.params, ctx.version, ctx.scope);
  return {
    nodes: [ourNode(ctx, ctx.id, 'condition', { expression })],
    output: (i) =>
      i === 0 ? { source: ctx.id, handle: 'true' } : i === 1 && options.allowDiscardedOutput ? { source: ctx.id, handle: 'false' } : null,
    regularOutputs: options.allowDiscardedOutput ? 2 : 1,
  };
};

const HANDLE = /^[A-Za-z0-9 _.-]{1,100}$/;

/**
 * Switch: the rules become one JSONata expression returning the index of the first matching
 * rule (as a string), and each index is a case. The fallback output is the index it names
 * ("extra" adds one after the rules); "none" returns no index, so nothing runs.
 */
export const switchNode: Mapper = (ctx) => {
  const p = ctx.params;
  const options = isRecord(p.options) ? p.options : {};
  const allMatching = options.allMatchingOutputs === true && ctx.version >= 3 && p.mode !== 'expression';
  if (allMatching && !ctx.perItem) throw new Unsupported('"send data to all matching outputs"', 'Use one If node per output instead.');
  const scope = ctx.perItem ? perItemScope(ctx) : ctx.scope;
  let expression: string;
  let route = '';
  let count: number;
  const handles: string[] = [];
  // v1 has four outputs; v2 as many as `outputsAmount`; v3 as `numberOutputs` (expression mode) or its rules.
  const legacyOutputs = ctx.version < 2 ? 4 : typeof p.outputsAmount === 'number' ? p.outputsAmount : 4;
  if (p.mode === 'expression') {
    count = ctx.version < 3 ? legacyOutputs : typeof p.numberOutputs === 'number' ? p.numberOutputs : 4;
    expression = `$string(${toJsonata(p.output ?? '', scope)})`;
    for (let i = 0; i < count; i++) handles.push(`output${i}`);
  } else if (ctx.version < 3) {
    // v1 and v2 rules: one typed value1 compared with each rule's value2; the first match sends to the rule's output.
    count = Math.max(1, Math.min(64, legacyOutputs));
    const type = typeof p.dataType === 'string' ? p.dataType : 'number';
    const rules = isRecord(p.rules) && Array.isArray(p.rules.rules) ? (p.rules.rules as Array<Record<string, unknown>>) : [];
    if (rules.length === 0) throw new Unsupported('a switch without rules', 'Add rules.');
    const outputOf = (v: unknown) => (typeof v === 'number' && v >= 0 && v < count ? v : null);
    const fallback = outputOf(p.fallbackOutput);
    expression = rules.reduceRight(
      (acc, r) => {
        const out = outputOf(r.output ?? 0);
        if (out === null)
          throw new Unsupported(`a rule sends to output ${String(r.output)}`, `Send each rule to an output from 0 to ${count - 1}.`);
        return `(${v1Comparison(type, r.operation, p.value1, r.value2, scope)} ? ${jsonString(out)} : ${acc})`;
      },
      fallback === null ? '"-1"' : jsonString(fallback),
    );
    for (let i = 0; i < count; i++) handles.push(`output${i}`);
  } else {
    const rules = isRecord(p.rules) && Array.isArray(p.rules.values) ? (p.rules.values as Array<Record<string, unknown>>) : [];
    if (rules.length === 0) throw new Unsupported('a switch without rules', 'Add rules.');
    const fallback = options.fallbackOutput;
    const conds = rules.map((r) => ruleCondition(r, scope));
    let otherwise = '"-1"';
    count = rules.length;
    if (fallback === 'extra') {
      otherwise = jsonString(rules.length);
      count++;
    } else if (typeof fallback === 'number' && fallback >= 0 && fallback < rules.length) otherwise = jsonString(fallback);
    expression = conds.reduceRight((acc, c, i) => `(${c} ? ${jsonString(i)} : ${acc})`, otherwise);
    if (allMatching)
      route = `($__m := [${conds.map((c, i) => `(${c}) ? ${jsonString(i)}`).join(', ')}]; $count($__m) > 0 ? $__m : [${otherwise}])`;
    rules.forEach((r, i) => {
      const key = r.renameOutput === true && typeof r.outputKey === 'string' && HANDLE.test(r.outputKey) ? r.outputKey : `output${i}`;
      handles.push(handles.includes(key) || key === 'default' || key === 'error' ? `output${i}` : key);
    });
    if (fallback === 'extra')
      handles.push(
        typeof options.renameFallbackOutput === 'string' &&
          HANDLE.test(options.renameFallbackOutput) &&
          !handles.includes(options.renameFallbackOutput)
          ? options.renameFallbackOutput
          : 'fallback',
      );
  }
  if (ctx.perItem) return perItemRouting(ctx, route || `[${expression}]`, count, () => true);
  const cases = handles.map((handle, i) => ({ value: String(i), handle }));
  return {
    nodes: [ourNode(ctx, ctx.id, 'switch', { expression, cases })],
    output: (i) => (i < count ? { source: ctx.id, handle: handles[i] } : null),
    regularOutputs: count,
  };
};

const jsonString = (n: number) => JSON.stringify(String(n));
