/**
 * The item nodes — Split Out, Aggregate, Summarize, Sort, Limit, Remove Duplicates, Rename Keys
 * and the older Item Lists (v1–v3) that combined them — → one code node each, running the item
 * runtime (services/extflow/itemRuntime.ts) over the node's item list. Their parameters are
 * passed as JSON; a parameter given by an expression is not evaluated per item here, so such a
 * node is listed as unsupported rather than guessed.
 */
import { itemNodeSource, type ItemSettings } from '../itemRuntime';
import type { ItemCount } from '../itemWiring';
import { Unsupported } from '../types';
import { isRecord, ourNode, type MapContext, type Mapped, type Mapper } from './context';

/** The item settings of an exported node (execute once, always output data, on error). */
export function itemSettingsOf(ctx: MapContext): ItemSettings {
  const n = ctx.node;
  const onError = n.onError ?? (n.continueOnFail === true ? 'continueRegularOutput' : undefined);
  return {
    ...(n.executeOnce === true ? { executeOnce: true } : {}),
    ...(n.alwaysOutputData === true ? { alwaysOutputData: true } : {}),
    ...(onError ? { onError } : {}),
  };
}

export function noExpressions(value: unknown, path: string): void {
  if (typeof value === 'string' && value.startsWith('='))
    throw new Unsupported(`"${path}" is an expression, which this node does not evaluate per item here`, 'Give the value literally.');
  if (Array.isArray(value)) value.forEach((v, i) => noExpressions(v, `${path}[${i}]`));
  else if (isRecord(value)) for (const [k, v] of Object.entries(value)) noExpressions(v, path ? `${path}.${k}` : k);
}

function itemNode(ctx: MapContext, op: string, params: Record<string, unknown>, count: ItemCount, extra = ''): Mapped {
  noExpressions(params, '');
  const source = itemNodeSource(op, { ...params, typeVersion: ctx.version }, itemSettingsOf(ctx), extra);
  return { nodes: [ourNode(ctx, ctx.id, 'code', { source })], items: count };
}

const pick = (p: Record<string, unknown>, keys: string[]) =>
  Object.fromEntries(keys.filter((k) => p[k] !== undefined).map((k) => [k, p[k]]));

const SPLIT_KEYS = ['fieldToSplitOut', 'include', 'fieldsToInclude', 'options'];
const AGGREGATE_KEYS = [
  'aggregate',
  'fieldsToAggregate',
  'destinationFieldName',
  'include',
  'fieldsToExclude',
  'fieldsToInclude',
  'options',
];
const SUMMARIZE_KEYS = ['fieldsToSummarize', 'fieldsToSplitBy', 'options'];
const DEDUPE_KEYS = ['compare', 'fieldsToExclude', 'fieldsToCompare', 'options'];
const LIMIT_KEYS = ['maxItems', 'keep'];

function splitOutOp(ctx: MapContext): Mapped {
  const p = ctx.params;
  if (typeof p.fieldToSplitOut !== 'string' || p.fieldToSplitOut.trim() === '')
    throw new Unsupported('no field to split out is set', 'Name the field holding the list.');
  return itemNode(ctx, 'splitOut', pick(p, SPLIT_KEYS), 'many');
}

function aggregateOp(ctx: MapContext): Mapped {
  const options = isRecord(ctx.params.options) ? ctx.params.options : {};
  if (options.includeBinaries === true)
    throw new Unsupported('"include binaries" (binary data is not carried here)', 'Aggregate the JSON fields only.');
  if (typeof options.groupByFields === 'string' && options.groupByFields.trim() !== '')
    throw new Unsupported('"group by fields" of Aggregate', 'Use a Summarize node split by those fields, or a code node.');
  return itemNode(ctx, 'aggregate', pick(ctx.params, AGGREGATE_KEYS), 'one');
}

function summarizeOp(ctx: MapContext): Mapped {
  const p = ctx.params;
  const split = typeof p.fieldsToSplitBy === 'string' && p.fieldsToSplitBy.trim() !== '';
  const single = isRecord(p.options) && p.options.outputFormat === 'singleItem';
  return itemNode(ctx, 'summarize', pick(p, SUMMARIZE_KEYS), split && !single ? 'many' : 'one');
}

function sortOp(ctx: MapContext): Mapped {
  const p = ctx.params;
  const type = typeof p.type === 'string' ? p.type : 'simple';
  if (type === 'random') ctx.warn('A random sort gives another order on every run, as in the external tool.');
  if (type === 'code') {
    const code = typeof p.code === 'string' ? p.code : '';
    if (!/\breturn\b/.test(code)) throw new Unsupported("the sort code doesn't return", "Add a 'return' statement to the sort code.");
    return itemNode(ctx, 'sort', { type }, 'same', `var __sortCode = function (a, b) {\n${code}\n};\n`);
  }
  return itemNode(ctx, 'sort', pick(p, ['type', 'sortFieldsUi', 'options']), 'same');
}

function limitOp(ctx: MapContext): Mapped {
  const max = ctx.params.maxItems === undefined ? 1 : ctx.params.maxItems;
  return itemNode(ctx, 'limit', pick(ctx.params, LIMIT_KEYS), max === 1 ? 'one' : 'same');
}

function removeDuplicatesOp(ctx: MapContext): Mapped {
  const operation = typeof ctx.params.operation === 'string' ? ctx.params.operation : 'removeDuplicateInputItems';
  if (operation !== 'removeDuplicateInputItems' && operation !== 'removeDuplicates')
    throw new Unsupported(
      `Remove Duplicates "${operation}" (it keeps state between runs)`,
      'Keep the values seen in a table (table nodes) and filter against it.',
    );
  return itemNode(ctx, 'removeDuplicates', pick(ctx.params, DEDUPE_KEYS), 'same');
}

export const splitOut: Mapper = splitOutOp;
export const aggregate: Mapper = aggregateOp;
export const summarize: Mapper = summarizeOp;
export const sort: Mapper = sortOp;
export const limit: Mapper = limitOp;
export const removeDuplicates: Mapper = removeDuplicatesOp;

export const renameKeys: Mapper = (ctx) => {
  const more = isRecord(ctx.params.additionalOptions) ? ctx.params.additionalOptions : {};
  if (more.regexReplacement !== undefined)
    throw new Unsupported('renaming keys by regular expression', 'List the keys to rename one by one, or use a code node.');
  return itemNode(ctx, 'renameKeys', pick(ctx.params, ['keys']), 'same');
};

/** Item Lists v1–v3: one node, its operation naming one of the nodes above. */
export const itemLists: Mapper = (ctx) => {
  const operation = typeof ctx.params.operation === 'string' ? ctx.params.operation : 'splitOutItems';
  switch (operation) {
    case 'splitOutItems':
      return splitOutOp(ctx);
    case 'aggregateItems':
    case 'concatenateItems':
      return aggregateOp(ctx);
    case 'summarize':
      return summarizeOp(ctx);
    case 'sort':
      return sortOp(ctx);
    case 'limit':
      return limitOp(ctx);
    case 'removeDuplicates':
      return itemNode(ctx, 'removeDuplicates', pick(ctx.params, DEDUPE_KEYS), 'same');
    default:
      throw new Unsupported(`the Item Lists operation "${operation}"`, 'Rebuild it with a code node.');
  }
};
