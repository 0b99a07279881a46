/** Temporal namespaces of one test file, so no other file's worker picks up its tasks. */
import { Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import { registerSearchAttributes } from '../../temporal/searchAttributes';
import { testEnv } from './env';

/**
 * Registers `namespace` (and the service's search attributes in it) on the shared dev server,
 * if it is not there yet; a new namespace takes a moment to be usable, so this waits for it.
 * Use it where a test needs workers with other settings than the shared ones (the outbound
 * guard on) or needs no worker to answer (a stalled worker).
 */
export async function ensureNamespace(namespace: string): Promise<void> {
  const connection = await Connection.connect({ address: testEnv('temporalAddress') });
  try {
    await connection.workflowService
      .registerNamespace({ namespace, workflowExecutionRetentionPeriod: msToTs('1 day') })
      .catch((err: Error) => {
        if (!/already (exists|registered)/i.test(err.message)) throw err;
      });
    for (let attempt = 0; ; attempt++) {
      try {
        await registerSearchAttributes(connection, namespace);
        return;
      } catch (err) {
        if (attempt >= 60) throw err;
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  } finally {
    await connection.close();
  }
}
