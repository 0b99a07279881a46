import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';

export interface TemporalSettings {
  address: string;
  namespace: string;
}

/**
 * The one place clients connect to Temporal. `connectTimeout` is generous because the dev
 * server on a 2-core machine can take well over the SDK's default to answer at start.
 */
export async function connectTemporalClient(settings: TemporalSettings): Promise<{ connection: Connection; client: Client }> {
  const connection = await Connection.connect({ address: settings.address, connectTimeout: '30 seconds' });
  return { connection, client: new Client({ connection, namespace: settings.namespace }) };
}

/** Native (Rust core) connection for workers. */
export async function connectWorkerConnection(settings: TemporalSettings): Promise<NativeConnection> {
  return NativeConnection.connect({ address: settings.address });
}
