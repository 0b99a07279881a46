/**
 * Node catalogue: one zod schema per node type's `config`, the node/edge/graph shapes, and
 * the output handles of each node. Kept out of workflow code: building these schemas in every
 * new workflow context cost more CPU than the rest of a short run (see docs/benchmarks.md), so
 * runs receive graphs whose configs were parsed here beforehand (withConfigDefaults).
 *
 * Expression convention
 * ---------------------
 * - `condition.expression`, `switch.expression` and `transform.expression` are always JSONata.
 * - Templated fields — `http` (url, header values, query values, string leaves of body),
 *   `response` (string leaves of headers and body), `log.message`, `fail.message` and the
 *   string leaves of `subworkflow.input` — hold JSON in which a string starting with `=` is a
 *   JSONata expression (everything after the `=`); every other string is a literal. The
 *   expression's result replaces the string as JSON (it is not stringified), so
 *   `"body": { "n": "=$count(items)" }` yields a number.
 * - A literal string that must start with `=` is written as an expression returning it:
 *   `="=not an expression"` is the JSONata string literal `"=not an expression"`.
 * - Keys are never expressions, nor are strings in any other config field.
 * Expressions see the node's input as `$` and `$input`, the run's trigger payload as
 * `$trigger`, and the outputs of finished nodes as `$nodes.<id>` (see expressions.ts).
 */
import { Cron } from 'croner';
import { z } from 'zod';
import { NODE_TYPES, TRIGGER_TYPES, type GraphEdge, type GraphNode, type NodeType, type TriggerType } from './types';

import { EXPRESSION_FIELDS, EXPRESSION_PREFIX, isTemplateExpression } from './expressionFields';
import { MAX_LLM_TOOL_ROUNDS, MAX_LOOP_BATCH_SIZE, MAX_LOOP_ITERATIONS } from './limits';

export { EXPRESSION_FIELDS, EXPRESSION_PREFIX, isTemplateExpression };

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

const MAX_JSON_DEPTH = 64;

/** Plain JSON check with a depth cap, so cyclic or absurdly deep input fails instead of overflowing. */
export function isJsonValue(value: unknown, depth = 0): value is JsonValue {
  if (depth > MAX_JSON_DEPTH) return false;
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return true;
  if (typeof value === 'number') return Number.isFinite(value);
  if (Array.isArray(value)) return value.every((v) => isJsonValue(v, depth + 1));
  if (typeof value === 'object') {
    // A plain object of any realm (a structuredClone or a vm context has its own Object.prototype).
    const proto: unknown = Object.getPrototypeOf(value);
    if (proto !== null && Object.getPrototypeOf(proto) !== null) return false;
    return Object.values(value as Record<string, unknown>).every((v) => isJsonValue(v, depth + 1));
  }
  return false;
}

// z.json() reports a wall of union errors; one readable message is more useful to users.
const jsonValue = z.custom<JsonValue>((v) => isJsonValue(v), {
  message: `expected a JSON value (string, number, boolean, null, array or object; at most ${MAX_JSON_DEPTH} levels deep)`,
});

const MAX_DURATION_SECONDS = 31_536_000; // one year
const durationSeconds = z.number().int().min(1).max(MAX_DURATION_SECONDS);
const stringRecord = z.record(z.string(), z.string());
// A refinement, not .trim(): parsing must not rewrite values such as code or messages.
const nonEmpty = z.string().refine((s) => s.trim().length > 0, 'must not be empty');
const expression = nonEmpty.max(20_000, 'expression is too long (max 20000 characters)');

// ---------------------------------------------------------------------------------------------
// Cron (5 fields). croner is the parser; Temporal's own parser remains the authority when the
// schedule is created. This runs when configs are parsed (save, deploy, run start), never
// inside workflow code.

const CRON_FIELDS: ReadonlyArray<{ name: string; allowed: string; max: number }> = [
  { name: 'minute', allowed: '0-59', max: 59 },
  { name: 'hour', allowed: '0-23', max: 23 },
  { name: 'day of month', allowed: '1-31', max: 31 },
  { name: 'month', allowed: '1-12 or JAN-DEC', max: 12 },
  { name: 'day of week', allowed: '0-7 (0 and 7 are Sunday) or SUN-SAT', max: 7 },
];

/** A fixed start for the "does it ever fire" probe, so the answer never depends on the clock. */
const CRON_PROBE_START = new Date(Date.UTC(2000, 0, 1));

function parseCron(pattern: string): Cron {
  // Without a callback croner only parses: nothing is scheduled.
  return new Cron(pattern, { paused: true, timezone: 'UTC' });
}

/**
 * Problems with a 5-field cron expression (empty when it is valid). Each field is checked on its
 * own (the others set to `*`) so every bad field is named; then the whole expression must fire
 * at least once (`0 0 30 2 *` never does).
 *
 * Caveat: croner refuses `5/10`; Temporal (like most cron dialects) reads it as `5-59/10`, so a
 * numeric start with a step is widened to a range before croner sees it.
 */
export function cronErrors(cron: string): string[] {
  const fields = cron.trim().split(/\s+/).filter(Boolean);
  if (fields.length !== 5) {
    return [`expected 5 fields (minute hour day-of-month month day-of-week), got ${fields.length}`];
  }
  const normalised = fields.map((text, i) => text.replace(/(^|,)(\d+)\/(?=\d)/g, `$1$2-${CRON_FIELDS[i]?.max}/`));
  const errors: string[] = [];
  normalised.forEach((text, i) => {
    try {
      parseCron(normalised.map((other, j) => (j === i ? text : '*')).join(' '));
    } catch {
      errors.push(
        `${CRON_FIELDS[i]?.name}: ${fields[i]} is not a valid value, list (a,b), range (a-b) or step (*/n, a-b/n); allowed values are ${CRON_FIELDS[i]?.allowed}`,
      );
    }
  });
  if (errors.length > 0) return errors;
  if (parseCron(normalised.join(' ')).nextRun(CRON_PROBE_START) === null) {
    return [`"${cron.trim()}" never fires: the day of month does not exist in the chosen months`];
  }
  return [];
}

function isValidTimeZone(timeZone: string): boolean {
  try {
    new Intl.DateTimeFormat(undefined, { timeZone });
    return true;
  } catch {
    return false;
  }
}

// ---------------------------------------------------------------------------------------------
// Config schemas. Strict objects: an unknown key in a config is almost always a typo
// (`timeoutSecond`) that would otherwise be silently ignored.

// inputSchema is a JSON Schema for the run input; only its JSON-ness is checked here.
const startConfig = z.strictObject({ inputSchema: z.record(z.string(), jsonValue).optional() });

const webhookConfig = z.strictObject({
  method: z.enum(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'ANY']).default('ANY'),
  dedupeHeader: z
    .string()
    .regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$/, 'must be an HTTP header name')
    .optional(),
});

const scheduleConfig = z.strictObject({
  cron: z.string().superRefine((cron, ctx) => {
    for (const message of cronErrors(cron)) ctx.addIssue({ code: 'custom', message });
  }),
  timezone: z.string().refine(isValidTimeZone, { message: 'must be an IANA time zone such as "UTC" or "Europe/Berlin"' }).default('UTC'),
});

// The jobs, credential and interval of a CI trigger belong to its destination's CI source.
const ciConfig = z.strictObject({});

const conditionConfig = z.strictObject({ expression });

const switchConfig = z.strictObject({
  expression,
  cases: z
    .array(
      z.strictObject({
        value: jsonValue,
        handle: nonEmpty
          .max(100)
          // 'error' is reserved too: it is the failure handle of nodes with onError 'branch'.
          .refine((h) => h !== 'default' && h !== 'error', { message: 'must not be "default" or "error" (reserved handles)' }),
      }),
    )
    .min(1, 'needs at least one case')
    .max(50, 'at most 50 cases')
    .superRefine((cases, ctx) => {
      const seen = new Set<string>();
      cases.forEach((c, i) => {
        if (seen.has(c.handle)) ctx.addIssue({ code: 'custom', path: [i, 'handle'], message: `duplicate case handle "${c.handle}"` });
        seen.add(c.handle);
      });
    }),
});

const transformConfig = z.strictObject({ expression });

const mergeConfig = z.strictObject({});

/** A loop over the items of its input (an array; any other value is one item), `batchSize` at a time. */
const loopConfig = z.strictObject({ batchSize: z.number().int().min(1).max(MAX_LOOP_BATCH_SIZE).default(1) });

const waitConfig = z
  .strictObject({
    seconds: z.number().positive().max(MAX_DURATION_SECONDS).optional(),
    until: z.iso.datetime({ offset: true, error: 'must be an ISO 8601 date-time with a time zone, e.g. 2030-01-01T09:00:00Z' }).optional(),
  })
  .refine((c) => (c.seconds === undefined) !== (c.until === undefined), { message: 'set exactly one of "seconds" or "until"' });

const approvalConfig = z.strictObject({
  prompt: z.string().max(2000).optional(),
  timeoutSeconds: durationSeconds.optional(),
});

const eventConfig = z.strictObject({ timeoutSeconds: durationSeconds.optional() });

const responseConfig = z.strictObject({
  status: z.number().int().min(100).max(599).default(200),
  headers: stringRecord.optional(),
  body: jsonValue,
});

const subworkflowConfig = z.strictObject({ workflowId: nonEmpty, input: jsonValue.optional() });

const failConfig = z.strictObject({ message: nonEmpty });

const logConfig = z.strictObject({
  level: z.enum(['debug', 'info', 'warn', 'error']),
  message: z.string(),
});

const httpConfig = z.strictObject({
  method: z.enum(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD']),
  url: nonEmpty.refine((url) => isTemplateExpression(url) || /^https?:\/\/[^\s/?#]+\S*$/i.test(url), {
    message: 'must be an http(s) URL or an "=" expression',
  }),
  headers: stringRecord.optional(),
  query: stringRecord.optional(),
  body: jsonValue.optional(),
  credentialId: nonEmpty.optional(),
  timeoutMs: z.number().int().min(1).max(120_000).default(30_000),
  // Optional without defaults, so graphs that do not set them parse (and hash) as before.
  /** `auto` (absent): JSON content types are parsed; `json`: always parsed, invalid JSON fails the node; `text`: never parsed. */
  responseFormat: z.enum(['auto', 'json', 'text']).optional(),
  /** true: a 4xx or 5xx answer is the node's output instead of a failure. */
  acceptAnyStatus: z.boolean().optional(),
  /** false: a redirect answer is the node's output instead of being followed. */
  followRedirects: z.boolean().optional(),
});

const codeConfig = z.strictObject({ source: nonEmpty.max(100_000) });

// Table nodes: the table is named by id (GET /api/v1/databases lists them); cells are checked
// against the table's columns when the node runs, by the same rules as the rows API.
const tableId = nonEmpty.max(200);
const cellValues = z.record(z.string(), jsonValue);
const rowIndexField = z.union([
  z.number().int().min(1).max(2_147_483_647),
  z.string().refine(isTemplateExpression, 'must be a positive integer or an "=" expression'),
]);
const tableReadConfig = z.strictObject({ tableId, filter: cellValues.optional(), limit: z.number().int().min(1).max(1000).default(100) });
const tableInsertConfig = z.strictObject({ tableId, values: cellValues });
const tableUpdateConfig = z.strictObject({ tableId, rowIndex: rowIndexField, values: cellValues });
const tableDeleteConfig = z.strictObject({ tableId, rowIndex: rowIndexField });

// A model call (docs/workflow-graph.md, "llm"): through the workspace's `llm` credential (or the
// deployment's model), with HTTP tools the model may call and an optional JSON Schema its answer must follow.
const MAX_LLM_TEXT = 100_000;
const llmToolName = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be 1-64 characters of A-Z, a-z, 0-9, "_" or "-"');
const llmHttpTool = z.strictObject({
  name: llmToolName,
  description: z.string().max(4000).default(''),
  /** JSON Schema (an object) of the arguments the model passes; default: any object. */
  parameters: z.record(z.string(), jsonValue).optional(),
  http: z.strictObject({
    method: z.enum(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']).default('GET'),
    /** `{name}` placeholders are replaced by the URL-encoded argument of that name. */
    url: nonEmpty.refine((url) => /^https?:\/\/[^\s/?#]+\S*$/i.test(url), { message: 'must be an http(s) URL' }),
    headers: stringRecord.optional(),
    query: stringRecord.optional(),
    body: z.record(z.string(), jsonValue).optional(),
    credentialId: nonEmpty.optional(),
    timeoutMs: z.number().int().min(1).max(120_000).default(30_000),
  }),
});
const llmConfig = z.strictObject({
  credentialId: nonEmpty.optional(),
  model: nonEmpty.max(200).optional(),
  system: z.string().max(MAX_LLM_TEXT).optional(),
  prompt: nonEmpty.max(MAX_LLM_TEXT),
  /** Earlier turns (`[{ role: "user" | "assistant", content }]`), usually an expression reading the node's own last output. */
  history: jsonValue.optional(),
  /** Keep the conversation in the output (`messages`), at most this many last messages. */
  historyWindow: z.number().int().min(1).max(200).optional(),
  outputSchema: z.record(z.string(), jsonValue).optional(),
  tools: z
    .array(llmHttpTool)
    .max(32, 'at most 32 tools')
    .superRefine((tools, ctx) => {
      const seen = new Set<string>();
      tools.forEach((t, i) => {
        if (seen.has(t.name)) ctx.addIssue({ code: 'custom', path: [i, 'name'], message: `duplicate tool name "${t.name}"` });
        seen.add(t.name);
      });
    })
    .optional(),
  maxToolRounds: z.number().int().min(0).max(MAX_LLM_TOOL_ROUNDS).default(5),
  temperature: z.number().min(0).max(2).optional(),
  maxTokens: z.number().int().min(1).max(200_000).optional(),
  /** Budget of the whole node (every model call and tool call). */
  timeoutMs: z.number().int().min(1000).max(600_000).default(120_000),
});

/** The config schema of every node type. Parsing applies defaults. */
export const NODE_CONFIG_SCHEMAS = {
  start: startConfig,
  webhook: webhookConfig,
  schedule: scheduleConfig,
  ci: ciConfig,
  condition: conditionConfig,
  switch: switchConfig,
  transform: transformConfig,
  merge: mergeConfig,
  loop: loopConfig,
  wait: waitConfig,
  approval: approvalConfig,
  event: eventConfig,
  response: responseConfig,
  subworkflow: subworkflowConfig,
  fail: failConfig,
  log: logConfig,
  http: httpConfig,
  code: codeConfig,
  table_read: tableReadConfig,
  table_insert: tableInsertConfig,
  table_update: tableUpdateConfig,
  table_delete: tableDeleteConfig,
  llm: llmConfig,
} satisfies Record<NodeType, z.ZodType>;

/** Parsed (defaults applied) config of a node type. */
export type NodeConfig<T extends NodeType> = z.output<(typeof NODE_CONFIG_SCHEMAS)[T]>;

export function isNodeType(type: unknown): type is NodeType {
  return typeof type === 'string' && (NODE_TYPES as readonly string[]).includes(type);
}

export function isTriggerType(type: unknown): type is TriggerType {
  return typeof type === 'string' && (TRIGGER_TYPES as readonly string[]).includes(type);
}

/** True when `path` names a key that is absent from its (object) parent in `input`. */
function isMissing(input: unknown, path: readonly PropertyKey[]): boolean {
  if (path.length === 0) return input === undefined;
  let parent = input;
  for (const key of path.slice(0, -1)) {
    if (parent === null || typeof parent !== 'object') return false;
    parent = (parent as Record<PropertyKey, unknown>)[key];
  }
  return parent !== null && typeof parent === 'object' && (parent as Record<PropertyKey, unknown>)[path.at(-1)!] === undefined;
}

/**
 * `config.cron: expected 5 fields ...` — one line per zod issue, paths prefixed with `prefix`.
 * Pass the parsed `input` to turn zod's type/enum complaints about absent keys into "is required".
 */
export function formatZodIssues(issues: readonly z.core.$ZodIssue[], prefix = 'config', input?: unknown): string[] {
  return issues.map((issue) => {
    const path = formatPath(prefix, issue.path);
    const typeOrValue = issue.code === 'invalid_type' || issue.code === 'invalid_value' || issue.code === 'custom';
    const missing = typeOrValue && issue.path.length > 0 && isMissing(input, issue.path);
    return `${path}: ${missing ? 'is required' : issue.message}`;
  });
}

/** Thrown by parseNodeConfig; `issues` are the readable per-field problems. */
export class NodeConfigError extends Error {
  constructor(
    readonly nodeType: string,
    readonly issues: string[],
  ) {
    super(`Invalid ${nodeType} config: ${issues.join('; ')}`);
    this.name = 'NodeConfigError';
  }
}

/**
 * Parses a node's config with its type's schema and returns it with defaults applied.
 * Throws NodeConfigError for an unknown type or an invalid config. Expression strings are
 * returned as-is (not evaluated, not compiled).
 */
export function parseNodeConfig<T extends NodeType>(type: T, config: unknown): NodeConfig<T>;
export function parseNodeConfig(type: string, config: unknown): Record<string, unknown>;
export function parseNodeConfig(type: string, config: unknown): unknown {
  if (!isNodeType(type)) throw new NodeConfigError(type, [`unknown node type "${type}"`]);
  const result = (NODE_CONFIG_SCHEMAS[type] as z.ZodType).safeParse(config ?? {});
  if (!result.success) throw new NodeConfigError(type, formatZodIssues(result.error.issues, 'config', config ?? {}));
  return result.data;
}

/**
 * The graph a run executes: every node's config parsed, defaults applied. Workflow code does
 * not parse configs itself (it must not load zod), so whoever hands a graph to the engine —
 * the run launcher, child and scheduled runs, dry runs — passes it through here first.
 * Throws NodeConfigError for an invalid config; graphs are validated before they can run.
 */
export function withConfigDefaults<G extends { nodes: GraphNode[] }>(graph: G): G {
  return { ...graph, nodes: graph.nodes.map((node) => ({ ...node, config: parseNodeConfig(node.type, node.config ?? {}) })) };
}

// ---------------------------------------------------------------------------------------------
// Node, edge and graph shapes. Loose objects (unknown keys stripped): editors keep their own
// state (selection, sizes) on nodes and edges, and that must not make a graph invalid.

/**
 * Node ids that cannot be keys of `$nodes` (a plain object in expressions): `__proto__` would set
 * the prototype instead of adding a key, and `constructor`/`prototype` read as inherited members
 * in expressions and user code. Reserved, so validation refuses them.
 */
export const RESERVED_NODE_IDS: readonly string[] = ['__proto__', 'constructor', 'prototype'];

export const nodeSchema = z.object({
  id: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,100}$/, 'must be 1-100 characters of A-Z, a-z, 0-9, "_" or "-"')
    .refine((id) => !RESERVED_NODE_IDS.includes(id), { message: `is reserved (${RESERVED_NODE_IDS.join(', ')} cannot be node ids)` }),
  type: z.string(),
  name: z.string().max(200).optional(),
  config: z.record(z.string(), z.unknown()).default({}),
  position: z.object({ x: z.number(), y: z.number() }).optional(),
  disabled: z.boolean().optional(),
  retry: z
    .object({
      maxAttempts: z.number().int().min(1).max(10),
      backoffSeconds: z.number().min(0).max(3600),
    })
    .optional(),
  onError: z.enum(['stop', 'continue', 'branch']).optional(),
});

export const edgeSchema = z.object({
  id: z.string().optional(),
  source: z.string(),
  target: z.string(),
  // Editors commonly send `null` for "no handle"; treat it like an absent handle. The outer
  // optional() keeps the key optional in GraphEdge (a transform's output key is required).
  sourceHandle: z
    .string()
    .nullish()
    .transform((h) => h ?? undefined)
    .optional(),
  /** A loop-back edge: it closes a loop and starts the next iteration at its target (docs/workflow-graph.md, "Loops"). */
  loop: z.boolean().optional(),
  /** Iterations of the loop this edge closes, the first included (default DEFAULT_LOOP_ITERATIONS). */
  maxIterations: z
    .number()
    .int()
    .min(1, 'must be at least 1')
    .max(MAX_LOOP_ITERATIONS, `must be at most ${MAX_LOOP_ITERATIONS}`)
    .optional(),
});

export const MAX_NODES = 500;
export const MAX_EDGES = 2000;

export const graphSchema = z.object({
  nodes: z.array(nodeSchema).max(MAX_NODES, `at most ${MAX_NODES} nodes`),
  edges: z.array(edgeSchema).max(MAX_EDGES, `at most ${MAX_EDGES} edges`),
});

/**
 * A node and an edge as a draft holds them. Drafts are saved before validation (an editor saves
 * half-built graphs; repository artifacts carry drafts), so the API and artifacts accept any
 * object here and validateGraph reports what is wrong before a deploy. They are typed as the
 * graph the rest of the code reads; this is the one place that types unvalidated input as a
 * graph, instead of a cast at each caller.
 */
export const draftNodeSchema = z.looseObject({}).pipe(z.custom<GraphNode>());
export const draftEdgeSchema = z.looseObject({}).pipe(z.custom<GraphEdge>());

// ---------------------------------------------------------------------------------------------
// Output handles

type HandleNode = Pick<GraphNode, 'type' | 'config' | 'onError'>;

/** Node types whose regular output is split into named handles (no unnamed output). */
const BRANCHING_TYPES = new Set(['condition', 'switch', 'approval', 'loop']);

/**
 * The named output handles of a node, or null when its only output is the single default
 * one (edges without `sourceHandle`). condition → true/false, switch → case handles + default,
 * approval → approved/rejected, loop → loop/done; `onError: 'branch'` adds `error` to any node — for a node with
 * a single default output that gives `['error']`, and its edges without a handle still carry
 * the regular output (see isValidSourceHandle). Tolerates invalid switch configs (uses the
 * string handles it finds) so the editor can still draw a half-configured node.
 */
export function outputHandles(node: HandleNode): string[] | null {
  let handles: string[] | null = null;
  if (node.type === 'condition') handles = ['true', 'false'];
  else if (node.type === 'approval') handles = ['approved', 'rejected'];
  else if (node.type === 'loop') handles = ['loop', 'done'];
  else if (node.type === 'switch') {
    const cases = (node.config as { cases?: unknown } | undefined)?.cases;
    const caseHandles = Array.isArray(cases)
      ? cases
          .map((c) => (c && typeof c === 'object' ? (c as { handle?: unknown }).handle : undefined))
          .filter((h): h is string => typeof h === 'string')
      : [];
    handles = [...new Set(caseHandles), 'default'];
  }
  if (node.onError === 'branch') handles = [...(handles ?? []), 'error'];
  return handles;
}

/**
 * Whether an edge leaving `node` through `sourceHandle` can ever carry data. Nodes with a
 * single default output accept edges without a handle (and, like the interpreter, the
 * handle name `default`); branching nodes need one of their named handles.
 */
export function isValidSourceHandle(node: HandleNode, sourceHandle: string | undefined): boolean {
  const handles = outputHandles(node) ?? [];
  if (sourceHandle === undefined) return !BRANCHING_TYPES.has(node.type);
  if (handles.includes(sourceHandle)) return true;
  return sourceHandle === 'default' && !BRANCHING_TYPES.has(node.type);
}

// ---------------------------------------------------------------------------------------------
// Expressions of a node

export interface NodeExpression {
  /** Where the expression sits, e.g. `config.body.items[0].name`. */
  path: string;
  /** The JSONata source (without the `=` of templated strings). */
  expression: string;
}

function formatPath(prefix: string, path: readonly PropertyKey[]): string {
  let out = prefix;
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else if (typeof key === 'string' && /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(key)) out += `.${key}`;
    else out += `[${JSON.stringify(String(key))}]`;
  }
  return out;
}

function walkTemplated(value: unknown, path: PropertyKey[], out: NodeExpression[], depth: number): void {
  if (depth > MAX_JSON_DEPTH) return;
  if (isTemplateExpression(value)) {
    out.push({ path: formatPath('config', path), expression: value.slice(EXPRESSION_PREFIX.length) });
  } else if (Array.isArray(value)) {
    value.forEach((v, i) => walkTemplated(v, [...path, i], out, depth + 1));
  } else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) walkTemplated(v, [...path, k], out, depth + 1);
  }
}

/**
 * Every expression in a node's config, for validation. Walks the parsed config when it is
 * valid and the raw config otherwise, so expression errors are reported alongside config
 * errors. Never throws; unknown types have no expressions.
 */
export function collectExpressions(node: Pick<GraphNode, 'type' | 'config'>): NodeExpression[] {
  const rules = isNodeType(node?.type) ? EXPRESSION_FIELDS[node.type] : undefined;
  if (!rules) return [];
  const parsed = (NODE_CONFIG_SCHEMAS[node.type as NodeType] as z.ZodType).safeParse(node.config ?? {});
  const config = parsed.success ? parsed.data : node.config;
  if (!config || typeof config !== 'object') return [];
  const record = config as Record<string, unknown>;
  const out: NodeExpression[] = [];
  for (const field of rules.jsonata ?? []) {
    if (typeof record[field] === 'string') out.push({ path: formatPath('config', [field]), expression: record[field] });
  }
  for (const field of rules.templated ?? []) walkTemplated(record[field], [field], out, 0);
  return out;
}
