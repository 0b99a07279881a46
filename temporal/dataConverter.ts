/**
 * The Temporal boundary for text (issue 26, item 3): every string that leaves this process for
 * Temporal is well-formed. Failure messages, types, stack traces and sources are protobuf
 * `string`s, which must be valid UTF-8: the SDK encodes a lone UTF-16 surrogate as bytes that
 * are not, and sdk-core then rejects the whole workflow task completion, fails the worker and
 * fails the next worker again when the run's task is retried (F1). Payloads (workflow and
 * activity arguments and results, signals, updates, queries, memo, heartbeat details, failure
 * details) are JSON bytes and survive, but would bring the same strings back into workflow
 * code and PostgreSQL; they are made well-formed on the way out too.
 *
 * Loaded in three places: the worker (activities' failures and results), every client, and the
 * workflow sandbox (workflow failures are converted there), through `payloadConverterPath` and
 * `failureConverterPath` (see dataConverterOptions in temporal/client.ts and bundleWorkflows).
 * So it imports nothing but @temporalio/common and the pure rule in engine/.
 *
 * Search attributes are encoded by the SDK's own fixed converter, not this one: ours hold ids
 * and fixed names (WorkspaceId, SvcWorkflowId, SvcTrigger, SvcTarget), and one tenant text,
 * SvcName, made well-formed and bounded by svcNameValue (temporal/shared.ts) before it leaves.
 */
import {
  BinaryPayloadConverter,
  CompositePayloadConverter,
  DefaultFailureConverter,
  JsonPayloadConverter,
  UndefinedPayloadConverter,
  type Payload,
  type PayloadConverter,
  type ProtoFailure,
  type SerializationContext,
} from '@temporalio/common';
import { boundedMessage } from '../engine/limits';
import { toStorable, wellFormedJsonText } from '../engine/wellFormedText';

/**
 * Longest failure message and stack trace sent to Temporal, in characters. A failure is stored
 * in the run's history, where an event over the server's 2 MB blob limit fails the workflow task
 * for ever; the full text of a node's error is in the run's projection (PostgreSQL) anyway.
 */
export const FAILURE_TEXT_MAX_CHARS = 32 * 1024;

const encoder = new TextEncoder();

/** JSON payloads as the SDK's JsonPayloadConverter writes them, with the text made well-formed. */
class WellFormedJsonPayloadConverter extends JsonPayloadConverter {
  override toPayload(value: unknown): Payload | undefined {
    if (value === undefined) return undefined;
    let json: string | undefined;
    try {
      json = JSON.stringify(value);
    } catch {
      return undefined; // as the SDK's converter: the next converter (none) reports it
    }
    if (json === undefined) return undefined;
    return { metadata: { encoding: encoder.encode('json/plain') }, data: encoder.encode(wellFormedJsonText(json)) };
  }
}

/** The SDK's default payload converters, with JSON text made well-formed. */
export const payloadConverter: PayloadConverter = new CompositePayloadConverter(
  new UndefinedPayloadConverter(),
  new BinaryPayloadConverter(),
  new WellFormedJsonPayloadConverter(),
);

/** A message or stack within FAILURE_TEXT_MAX_CHARS (the engine's rule for messages, with Temporal's bound). */
function boundedText(text: string | null | undefined): string | null | undefined {
  return typeof text === 'string' ? boundedMessage(text, FAILURE_TEXT_MAX_CHARS) : text;
}

/** The failure and its causes with every string well-formed and messages and stacks bounded; a copy where anything changed. */
function wellFormedFailure(failure: ProtoFailure, depth = 0): ProtoFailure {
  const clean = toStorable(failure);
  const message = boundedText(clean.message);
  const stackTrace = boundedText(clean.stackTrace);
  // The SDK cuts cause chains long before this; the bound keeps a hand-made cycle from looping.
  const cause = clean.cause && depth < 32 ? wellFormedFailure(clean.cause, depth + 1) : clean.cause;
  if (message === clean.message && stackTrace === clean.stackTrace && cause === clean.cause) return clean;
  return { ...clean, message, stackTrace, cause };
}

/**
 * The SDK's DefaultFailureConverter (same failures, same errors back), whose failures carry
 * well-formed, bounded text.
 */
export class WellFormedFailureConverter extends DefaultFailureConverter {
  override errorToFailure(err: unknown, converter: PayloadConverter, context?: SerializationContext): ProtoFailure {
    return wellFormedFailure(super.errorToFailure(err, converter, context));
  }
}

export const failureConverter = new WellFormedFailureConverter();
