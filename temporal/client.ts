import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import type { Logger } from 'pino';
import { installTemporalLogger } from './logging';

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

/**
 * Native (Rust core) connection for workers. The first call in a process also routes the
 * SDK's logs through `logger` (the SDK runtime is created with the first native connection).
 */
export async function connectWorkerConnection(settings: TemporalSettings, logger?: Logger): Promise<NativeConnection> {
  if (logger) installTemporalLogger(logger);
  return NativeConnection.connect({ address: settings.address });
}
