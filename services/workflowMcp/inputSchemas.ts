import type { JsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';
import type { Workflow, WorkflowMcpTool } from '../../db/entities';
import { canonicalJson } from '../../engine/canonicalJson';
import { internalFailure, invalidInput } from '../kernel/errors';
import { lazyModule } from '../kernel/lazyModule';

export type McpInputSchema = Record<string, unknown> & { type: 'object' };

/**
 * The input schema a tool advertises in tools/list, and the one its calls are checked against:
 * the tool's declared `inputSchema`, else the workflow's start node `config.inputSchema` (of
 * the draft, read at each request, so it follows edits), else any object.
 */
export function advertisedInputSchema(tool: WorkflowMcpTool, workflow: Pick<Workflow, 'nodes'>): McpInputSchema {
  const start = workflow.nodes.find((n) => n.type === 'start');
  const derived = (start?.config as { inputSchema?: Record<string, unknown> } | undefined)?.inputSchema;
  const schema = tool.inputSchema ?? derived ?? { type: 'object', additionalProperties: true };
  return { ...schema, type: 'object' as const };
}

/** The MCP SDK's Ajv validator, loaded with the first schema to compile (services/kernel/lazyModule.ts). */
const loadAjvValidator = lazyModule(
  async () => (await import('@modelcontextprotocol/sdk/validation/ajv-provider.js')).AjvJsonSchemaValidator,
);

/** Compiled validators by canonical schema text, least recently used first. */
const compiled = new Map<string, JsonSchemaValidator<unknown>>();
/** Distinct schemas kept compiled; a busy server has a handful, a hostile one cannot grow the process. */
const MAX_COMPILED = 200;

/**
 * The validator of a schema, compiled once. Each schema gets its own Ajv instance (the MCP SDK's
 * AjvJsonSchemaValidator: ajv with formats, every error reported): Ajv keeps every schema it
 * compiled for its lifetime, so a shared instance would grow with each distinct schema ever seen,
 * whereas an evicted entry here takes its instance with it. Throws what Ajv throws for a schema
 * it cannot compile (an unknown type, a `$ref` that resolves nowhere).
 */
async function validatorFor(schema: McpInputSchema): Promise<JsonSchemaValidator<unknown>> {
  const key = canonicalJson(schema);
  const hit = compiled.get(key);
  if (hit) {
    compiled.delete(key);
    compiled.set(key, hit);
    return hit;
  }
  const AjvJsonSchemaValidator = await loadAjvValidator();
  const validator = new AjvJsonSchemaValidator().getValidator<unknown>(schema);
  compiled.set(key, validator);
  if (compiled.size > MAX_COMPILED) compiled.delete(compiled.keys().next().value!);
  return validator;
}

/** Ajv names the checked value `data`; in a tool call it is the call's `arguments`. */
const asArgumentsPath = (message: string) => message.replace(/(^|, )data(?=[/ ])/g, '$1arguments');

/**
 * Checks a tool call's arguments against the schema the tool advertises, before anything runs.
 * `invalid` (the JSON-RPC endpoint answers -32602 Invalid params) with every failing path, as
 * `arguments/who must be string`, in the message and in `details.errors`; `internal` when the
 * advertised schema itself cannot be compiled (the tool is broken, not the call).
 */
export async function checkToolArguments(toolName: string, schema: McpInputSchema, args: unknown): Promise<void> {
  let validate: JsonSchemaValidator<unknown>;
  try {
    validate = await validatorFor(schema);
  } catch (err) {
    throw internalFailure(`The input schema of tool "${toolName}" is not a valid JSON Schema: ${(err as Error).message}`);
  }
  const result = validate(args);
  if (result.valid) return;
  const errors = asArgumentsPath(result.errorMessage);
  throw invalidInput(`Invalid arguments for tool "${toolName}": ${errors}`, { details: { tool: toolName, errors } });
}

/** Refuses a declared input schema that cannot be compiled, when the server is stored rather than at each call. */
export async function requireCompilableSchema(schema: Record<string, unknown>, where: string): Promise<void> {
  try {
    await validatorFor({ ...schema, type: 'object' });
  } catch (err) {
    throw invalidInput(`${where} is not a valid JSON Schema: ${(err as Error).message}`);
  }
}
