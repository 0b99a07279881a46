/**
 * Where expressions sit in node configs (the convention is described in nodes.ts). Free of
 * zod so that workflow code can use it without loading the config schemas.
 */
import type { NodeType } from './types';

/** Prefix marking a templated string as a JSONata expression. */
export const EXPRESSION_PREFIX = '=';

/** True for strings that are templated expressions (`=` + JSONata). */
export function isTemplateExpression(value: unknown): value is string {
  return typeof value === 'string' && value.startsWith(EXPRESSION_PREFIX);
}

/** Which config fields hold expressions, per node type. */
export const EXPRESSION_FIELDS: Readonly<Partial<Record<NodeType, { jsonata?: readonly string[]; templated?: readonly string[] }>>> = {
  condition: { jsonata: ['expression'] },
  switch: { jsonata: ['expression'] },
  transform: { jsonata: ['expression'] },
  http: { templated: ['url', 'headers', 'query', 'body'] },
  response: { templated: ['headers', 'body'] },
  log: { templated: ['message'] },
  fail: { templated: ['message'] },
  subworkflow: { templated: ['input'] },
  table_read: { templated: ['filter'] },
  table_insert: { templated: ['values'] },
  table_update: { templated: ['rowIndex', 'values'] },
  table_delete: { templated: ['rowIndex'] },
  llm: { templated: ['system', 'prompt', 'history'] },
};
