import type { Client } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import type { Payload } from '@temporalio/common';
import { decode } from '@temporalio/common/lib/internal-non-workflow';

/**
 * The event history of a workflow execution once it has closed. A run's read model records its
 * terminal state from inside the workflow (a local activity), before the workflow task that
 * carries it completes: fetched at that moment, the history still lacks that task's events
 * (its patch markers, its commands). Waiting for the execution's result closes that gap.
 */
export async function closedHistory(client: Client, workflowId: string): Promise<temporal.api.history.v1.IHistory> {
  const handle = client.workflow.getHandle(workflowId);
  await handle.result().catch(() => undefined);
  return handle.fetchHistory();
}

/**
 * The full event history of a workflow execution as JSON text, with every payload DECODED:
 * each payload (inputs, results, markers of local activities, failure details, memo, search
 * attributes, headers…) is run through the client's payload codecs and payload converter and
 * replaced by `{ decoded: <value> }`. Searching this text for a secret is meaningful even when
 * payloads are encrypted by a codec (searching the raw bytes would prove nothing). Any other
 * byte array is shown as UTF-8 text.
 */
export async function historyText(client: Client, workflowId: string): Promise<string> {
  const history = await closedHistory(client, workflowId);
  const converter = client.options.loadedDataConverter;
  const decodePayload = async (payload: Payload): Promise<unknown> => {
    const [decoded] = await decode(converter.payloadCodecs, [payload]);
    try {
      return { decoded: converter.payloadConverter.fromPayload(decoded) };
    } catch {
      return { decoded: decoded.data ? Buffer.from(decoded.data).toString('utf8') : null, undecodable: true };
    }
  };
  const isPayload = (v: Record<string, unknown>) => 'data' in v && v.data instanceof Uint8Array && 'metadata' in v;
  const walk = async (value: unknown): Promise<unknown> => {
    if (value instanceof Uint8Array) return Buffer.from(value).toString('utf8');
    if (Array.isArray(value)) return Promise.all(value.map(walk));
    if (value && typeof value === 'object') {
      const obj = value as Record<string, unknown>;
      if (isPayload(obj)) return decodePayload(obj as Payload);
      if (typeof (obj as { toNumber?: unknown }).toNumber === 'function') return String(obj); // Long
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(obj)) out[k] = await walk(v);
      return out;
    }
    return value;
  };
  return JSON.stringify(await walk(history));
}
