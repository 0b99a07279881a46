import { Client, Connection, WorkflowNotFoundError, type WorkflowStartOptions } from '@temporalio/client';
import { WorkflowExecutionAlreadyStartedError, type DataConverter, type PayloadCodec } from '@temporalio/common';
import type { NativeConnection } from '@temporalio/worker';
import { installTemporalRuntime, type TemporalRuntimeOptions } from './runtime';

export interface TemporalSettings {
  address: string;
  namespace: string;
  /** Encrypts payloads (services/kernel/payloadCodec.ts); clients and workers of a namespace must agree. */
  payloadCodec?: PayloadCodec;
}

/** The module of our payload and failure converters (well-formed text, temporal/dataConverter.ts). */
export const DATA_CONVERTER_PATH = require.resolve('./dataConverter');

/**
 * The data converter of every client and worker of the service: our payload and failure
 * converters (loaded by path, as the workflow sandbox needs them too) and the deployment's codec.
 */
export function dataConverterOptions(payloadCodec?: PayloadCodec): DataConverter {
  return {
    payloadConverterPath: DATA_CONVERTER_PATH,
    failureConverterPath: DATA_CONVERTER_PATH,
    ...(payloadCodec ? { payloadCodecs: [payloadCodec] } : {}),
  };
}

/**
 * The one place clients connect to Temporal. `connectTimeout` is generous because the dev
 * server on a 2-core machine can take well over the SDK's default to answer at start.
 */
export interface ConnectedTemporalClient {
  connection: Connection;
  client: Client;
}

export async function connectTemporalClient(settings: TemporalSettings): Promise<ConnectedTemporalClient> {
  const connection = await Connection.connect({ address: settings.address, connectTimeout: '30 seconds' });
  return {
    connection,
    client: new Client({ connection, namespace: settings.namespace, dataConverter: dataConverterOptions(settings.payloadCodec) }),
  };
}

/**
 * Native (Rust core) connection for workers. The first call in a process installs the SDK
 * runtime (logs through our logger, worker metrics exported for `/metrics`): the runtime is
 * created with the first native connection and cannot be changed afterwards.
 */
export async function connectWorkerConnection(settings: TemporalSettings, runtime?: TemporalRuntimeOptions): Promise<NativeConnection> {
  if (runtime) await installTemporalRuntime(runtime);
  // The worker package (and its native bridge) is loaded by worker processes only (services/kernel/lazyModule.ts).
  const { NativeConnection } = await import('@temporalio/worker');
  return NativeConnection.connect({ address: settings.address });
}

/** Runs `act` against a workflow execution; false, not an error, when no such execution exists. */
export async function ifExecutionExists(act: () => Promise<unknown>): Promise<boolean> {
  try {
    await act();
    return true;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return false;
    throw err;
  }
}

/** Asks Temporal to cancel a workflow execution; false when no such execution exists. */
export function cancelExecution(client: Client, workflowId: string): Promise<boolean> {
  return ifExecutionExists(() => client.workflow.getHandle(workflowId).cancel());
}

/**
 * Starts a workflow whose id names the work it does (a run, a file's purge, an indexing pass): an
 * open execution under that id is the same work, so it is left running and the call succeeds.
 * Any other refusal is thrown. Only for ids that name the work: a fresh id never collides.
 */
export async function startOnce(client: Client, workflowType: string, options: WorkflowStartOptions): Promise<void> {
  try {
    await client.workflow.start(workflowType, options);
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
  }
}
