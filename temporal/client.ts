import { Client, Connection } from '@temporalio/client';
import type { PayloadCodec } from '@temporalio/common';
import { NativeConnection } from '@temporalio/worker';
import { installTemporalRuntime, type TemporalRuntimeOptions } from './runtime';

export interface TemporalSettings {
  address: string;
  namespace: string;
  /** Encrypts payloads (services/payloadCodec.ts); clients and workers of a namespace must agree. */
  payloadCodec?: PayloadCodec;
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
  const dataConverter = settings.payloadCodec ? { payloadCodecs: [settings.payloadCodec] } : undefined;
  return { connection, client: new Client({ connection, namespace: settings.namespace, dataConverter }) };
}

/**
 * Native (Rust core) connection for workers. The first call in a process installs the SDK
 * runtime (logs through our logger, worker metrics exported for `/metrics`): the runtime is
 * created with the first native connection and cannot be changed afterwards.
 */
export async function connectWorkerConnection(settings: TemporalSettings, runtime?: TemporalRuntimeOptions): Promise<NativeConnection> {
  if (runtime) await installTemporalRuntime(runtime);
  return NativeConnection.connect({ address: settings.address });
}
