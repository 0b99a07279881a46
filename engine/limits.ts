/**
 * Size limits of values that travel through Temporal. Temporal refuses any payload over 2 MB
 * (the server's blob size limit): a node output that grows past it would end the execution
 * with a server error while the run's projection said otherwise. Every node output is checked
 * against a lower limit first, so the node fails with a clear message (and `onError` applies).
 * Pure and deterministic: it runs inside workflow code.
 */

/** The largest node output (and run result), as UTF-8 JSON: 1.5 MiB, well below Temporal's 2 MB. */
export const NODE_OUTPUT_LIMIT_BYTES = 1.5 * 1024 * 1024;

/** UTF-8 length of a string, without Buffer or TextEncoder (unavailable to pure engine code in every host). */
export function utf8Bytes(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    // A surrogate pair is 4 bytes in UTF-8 (2 per half); JSON.stringify escapes lone halves as ASCII.
    bytes += c < 0x80 ? 1 : c < 0x800 ? 2 : c >= 0xd800 && c <= 0xdfff ? 2 : 3;
  }
  return bytes;
}

/** Size of a value's JSON text in UTF-8 bytes (`undefined` and functions count as 0). */
export function jsonBytes(value: unknown): number {
  const text = JSON.stringify(value);
  return text === undefined ? 0 : utf8Bytes(text);
}

const limitLabel = (limit: number) => `${Math.round((limit / (1024 * 1024)) * 100) / 100} MB`;

/**
 * The message a node fails with when its output is over the limit, or null when it fits:
 * `Node output is N bytes, over the 1.5 MB limit`.
 */
export function oversizedOutput(value: unknown, what = 'Node output', limit = NODE_OUTPUT_LIMIT_BYTES): string | null {
  return outputLimitMessage(jsonBytes(value), limit, what);
}

/** oversizedOutput for a size already measured. */
export function outputLimitMessage(bytes: number, limit = NODE_OUTPUT_LIMIT_BYTES, what = 'Node output'): string | null {
  return bytes > limit ? `${what} is ${bytes} bytes, over the ${limitLabel(limit)} limit` : null;
}

/**
 * The longest error or log message a run keeps, in characters. A node's error is copied into
 * its step, a log line, the run's error, the run's log and Temporal's failure: unbounded, one
 * 1 MiB message became megabytes of workflow-task work and payload (issue 26, item 3).
 */
export const MESSAGE_LIMIT_CHARS = 16 * 1024;

/**
 * `text` within `limit` characters, cut on a code point (never half a surrogate pair) and
 * ending with how much was cut; `text` itself when it fits.
 */
export function boundedMessage(text: string, limit = MESSAGE_LIMIT_CHARS): string {
  if (text.length <= limit) return text;
  let end = limit;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1;
  return `${text.slice(0, end)}… (${text.length - end} more characters cut)`;
}

/**
 * Loops (loop-back edges, docs/workflow-graph.md): iterations of one loop when its loop-back
 * edge sets no `maxIterations`. A loop that reaches its limit fails the run, naming its head.
 */
export const DEFAULT_LOOP_ITERATIONS = 1_000;

/** The largest `maxIterations` a loop-back edge may set: a run's loops stay bounded whatever the graph says. */
export const MAX_LOOP_ITERATIONS = 10_000;

/** The largest `batchSize` of a `loop` node. */
export const MAX_LOOP_BATCH_SIZE = 10_000;

/**
 * The largest loop state a run carries into a continued execution (Temporal continue-as-new),
 * as UTF-8 JSON: it travels as the new execution's input, under Temporal's 2 MB payload limit.
 * A larger state keeps the loop in the current history instead.
 */
export const LOOP_CHECKPOINT_LIMIT_BYTES = 1.5 * 1024 * 1024;

/** The most tool rounds an `llm` node may set (`maxToolRounds`): a model that keeps calling tools ends there. */
export const MAX_LLM_TOOL_ROUNDS = 20;

/** The most tool calls of one model answer an `llm` node runs; further calls of that answer are answered with an error. */
export const MAX_LLM_TOOL_CALLS_PER_ROUND = 16;

/** The longest tool result, in characters, given back to the model (longer results are cut, saying so). */
export const LLM_TOOL_RESULT_LIMIT_CHARS = 32 * 1024;
