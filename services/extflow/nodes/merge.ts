/**
 * Merge v1–v3 → merge (waits for its live inputs) and a code node running the item runtime's
 * merge (services/extflow/itemRuntime.ts) over the inputs' item lists, as the external tool
 * does: append; combine by matching fields (keep matches, keep non-matches, keep everything,
 * enrich input 1 / 2, with the clash options); combine by position (with "include unpaired");
 * combine all (the cross join, bounded at 100,000 output items); choose branch; and v1's modes
 * (keepKeyMatches, removeKeyMatches, mergeByIndex, mergeByKey, multiplex, passThrough, wait).
 * An input that did not run counts as an input without items. Combining by SQL is listed.
 */
import { ITEM_RUNTIME } from '../itemRuntime';
import type { ItemCount } from '../itemWiring';
import { Unsupported } from '../types';
import { isRecord, ourNode, type MapContext, type Mapper } from './context';
import { itemSettingsOf, noExpressions } from './items';

function inputsByIndex(ctx: MapContext): string[] {
  const byIndex: string[] = [];
  for (const { sourceId, inputIndex } of ctx.inputs) {
    if (byIndex[inputIndex] !== undefined)
      throw new Unsupported(`input ${inputIndex + 1} has several connections`, 'Connect one node to each input.');
    byIndex[inputIndex] = sourceId;
  }
  return byIndex;
}

const str = (v: unknown, fallback: string) => (typeof v === 'string' && v !== '' ? v : fallback);

/** The fields to match: v3's "a, b" text, or the pairs of input 1 / input 2 field names. */
function matchFields(p: Record<string, unknown>, version: number): Array<{ field1: string; field2: string }> {
  if (version >= 3 && p.advanced !== true) {
    return str(p.fieldsToMatchString, '')
      .split(',')
      .map((f) => ({ field1: f.trim(), field2: f.trim() }));
  }
  const values = isRecord(p.mergeByFields) && Array.isArray(p.mergeByFields.values) ? p.mergeByFields.values : [{}];
  return values.map((v) => ({
    field1: isRecord(v) && typeof v.field1 === 'string' ? v.field1 : '',
    field2: isRecord(v) && typeof v.field2 === 'string' ? v.field2 : '',
  }));
}

const V1_MODES = new Set([
  'append',
  'keepKeyMatches',
  'removeKeyMatches',
  'mergeByIndex',
  'mergeByKey',
  'multiplex',
  'passThrough',
  'wait',
]);

/** The merge's parameters, normalised across versions for the runtime. */
function mergeParams(ctx: MapContext, inputCount: number): Record<string, unknown> {
  const p = ctx.params;
  const v = ctx.version;
  const options = isRecord(p.options) ? p.options : {};
  const clash = isRecord(options.clashHandling) && isRecord(options.clashHandling.values) ? options.clashHandling.values : {};
  const mode = str(p.mode, 'append');
  if (v < 2) {
    if (!V1_MODES.has(mode)) throw new Unsupported(`merge mode "${mode}"`, 'Merge the items in a code node.');
    return {
      mode,
      propertyName1: str(p.propertyName1, ''),
      propertyName2: str(p.propertyName2, ''),
      join: str(p.join, 'left'),
      overwrite: str(p.overwrite, 'always'),
      output: str(p.output, 'input1'),
    };
  }
  if (mode === 'append') return { mode };
  if (mode === 'combineBySql') throw new Unsupported('combining items with SQL', 'Combine the items in a code node after a merge.');
  if (mode === 'chooseBranch') {
    const output = str(p.output, v >= 3 ? 'specifiedInput' : 'input1');
    if (output === 'empty') return { mode, output };
    const n = output === 'input2' ? 2 : output === 'specifiedInput' ? Number(p.useDataOfInput ?? 1) : 1;
    if (!Number.isInteger(n) || n < 1 || n > inputCount)
      throw new Unsupported(`choosing input ${String(p.useDataOfInput)}`, 'Choose a connected input.');
    return { mode, useDataOfInput: n };
  }
  if (mode !== 'combine') throw new Unsupported(`merge mode "${mode}"`, 'Use append, combine or choose branch.');
  const by = v >= 3 ? str(p.combineBy, 'combineByFields') : str(p.combinationMode, 'mergeByFields');
  if (by === 'combineByPosition' || by === 'mergeByPosition')
    return { mode: 'combineByPosition', clash, includeUnpaired: options.includeUnpaired === true };
  if (by === 'combineAll' || by === 'multiplex') return { mode: 'combineAll', clash };
  if (by !== 'combineByFields' && by !== 'mergeByFields')
    throw new Unsupported(`combining items by "${by}"`, 'Combine the items in a code node.');
  return {
    mode: 'combineByFields',
    fields: matchFields(p, v),
    joinMode: str(p.joinMode, 'keepMatches'),
    outputDataFrom: str(p.outputDataFrom, 'both'),
    options: {
      disableDotNotation: options.disableDotNotation === true,
      fuzzyCompare: options.fuzzyCompare === true,
      multipleMatches: str(options.multipleMatches, 'all'),
    },
    clash,
  };
}

/**
 * How many items the merge may output for its inputs: at most one when every input holds at most
 * one ('same': choosing, pairing or joining single items), except where items of both inputs are
 * listed one after the other (append, keep everything, keep non-matches from both).
 */
function countOf(params: Record<string, unknown>): ItemCount {
  const { mode, joinMode, outputDataFrom, output } = params;
  if (mode === 'append') return 'many';
  if (mode === 'wait' || (mode === 'chooseBranch' && output === 'empty')) return 'one';
  if (mode === 'combineByFields' && (joinMode === 'keepEverything' || (joinMode === 'keepNonMatches' && outputDataFrom === 'both')))
    return 'many';
  return 'same';
}

export const mergeNode: Mapper = (ctx) => {
  const inputs = inputsByIndex(ctx);
  const declared = ctx.version >= 3 && typeof ctx.params.numberInputs === 'number' ? ctx.params.numberInputs : 2;
  const count = Math.max(declared, inputs.length, ctx.version < 2 || ctx.params.mode !== 'append' ? 2 : 1);
  const params = { ...mergeParams(ctx, count), typeVersion: ctx.version };
  noExpressions(params, '');
  if (inputs.filter(Boolean).length < 2) ctx.warn('Fewer than two inputs are connected.');
  // The merge's value is keyed by the node each edge leaves from: the source's own id, or one of its aux nodes (`<id>__…`).
  const ids = Array.from({ length: count }, (_, i) => inputs[i] ?? null);
  const source = [
    ITEM_RUNTIME,
    `var __ids = ${JSON.stringify(ids)};`,
    'var __keys = Object.keys(input || {});',
    'var __inputs = __ids.map(function (id) { if (id === null) return undefined; var k = __keys.find(function (k) { return k === id || k.indexOf(id + "__") === 0; }); return k === undefined ? undefined : input[k]; });',
    `return __items.runInputs("merge", ${JSON.stringify(params)}, __inputs, ${JSON.stringify(itemSettingsOf(ctx))});`,
  ].join('\n');
  const mergeId = `${ctx.id}__merge`;
  return { nodes: [ourNode(ctx, mergeId, 'merge', {}, 1), ourNode(ctx, ctx.id, 'code', { source })], items: countOf(params) };
};
