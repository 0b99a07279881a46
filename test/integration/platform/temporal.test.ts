/**
 * Temporal wiring against the real dev server of global setup: search attributes, the
 * worker on `workflow-runs`, the smoke workflow and activity, and a worker killed mid-run.
 */
// Not on the kit: it tests the wiring under the app with its own workers, and a stack's worker on the same queue would take their runs.
import { readFile } from 'node:fs/promises';
import { Connection, Client } from '@temporalio/client';
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import type { Worker } from '@temporalio/worker';
import { openOrm, type MikroORM } from '../../../db/orm';
import { connectWorkerConnection } from '../../../temporal/client';
import { registerSearchAttributes } from '../../../temporal/searchAttributes';
import { SEARCH_ATTRIBUTES, TASK_QUEUE } from '../../../temporal/shared';
import { prebuiltWorkflowBundle } from '../../../temporal/worker';
import { createServiceWorker } from '../../../main/worker';
import { smokeWorkflow } from '../../../temporal/workflows';
import { testEnv } from '../../support/env';
import { testPayloadCodec } from '../../support/harness';
import { createLogger } from '../../../services/kernel/logger';

let connection: Connection;
let client: Client;
let orm: MikroORM;
let bundle: { code: string };

beforeAll(async () => {
  connection = await Connection.connect({ address: testEnv('temporalAddress') });
  client = new Client({ connection, dataConverter: { payloadCodecs: [testPayloadCodec] } });
  orm = await openOrm(testEnv('databaseUrl'), { poolMax: 2 });
  bundle = { code: await readFile(testEnv('workflowBundle'), 'utf8') };
});
afterAll(async () => {
  await connection.close();
  await orm.close();
});

async function runWorker<T>(
  fn: (worker: Worker) => Promise<T>,
  workflowBundle: { code: string } | { codePath: string } = bundle,
): Promise<T> {
  const nativeConnection = await connectWorkerConnection(
    { address: testEnv('temporalAddress'), namespace: 'default' },
    { logger: createLogger(process.env.TEST_LOG_LEVEL ?? 'error') },
  );
  const worker = await createServiceWorker({
    connection: nativeConnection,
    namespace: 'default',
    services: { orm, allowPrivateNetworks: true },
    workflowBundle,
    payloadCodec: testPayloadCodec,
  });
  try {
    return await worker.runUntil(fn(worker));
  } finally {
    await nativeConnection.close();
  }
}

const workspaceIdKey = defineSearchAttributeKey(SEARCH_ATTRIBUTES.WorkspaceId, SearchAttributeType.KEYWORD);
const workflowIdKey = defineSearchAttributeKey(SEARCH_ATTRIBUTES.SvcWorkflowId, SearchAttributeType.KEYWORD);
const triggerKey = defineSearchAttributeKey(SEARCH_ATTRIBUTES.SvcTrigger, SearchAttributeType.KEYWORD);

describe('Temporal wiring', () => {
  test('the three custom search attributes are registered as Keyword; registering again is a no-op', async () => {
    expect(await registerSearchAttributes(connection, 'default')).toEqual([]);
    const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace: 'default' });
    for (const name of Object.values(SEARCH_ATTRIBUTES)) {
      expect(customAttributes?.[name]).toBe(2); // INDEXED_VALUE_TYPE_KEYWORD
    }
  });

  test('a worker loads the prebuilt bundle named by WORKFLOW_BUNDLE_PATH (the production form) and runs workflows from it', async () => {
    expect(() => prebuiltWorkflowBundle('/nonexistent/workflow-bundle.js')).toThrow(/WORKFLOW_BUNDLE_PATH/);
    // From the sources (tsx) with nothing configured: bundled at start, never a stray file.
    expect(prebuiltWorkflowBundle(undefined)).toBeNull();
    const prebuilt = prebuiltWorkflowBundle(testEnv('workflowBundle'));
    expect(prebuilt).toEqual({ codePath: testEnv('workflowBundle') });
    const result = await runWorker(
      () =>
        client.workflow.execute(smokeWorkflow, {
          taskQueue: TASK_QUEUE,
          workflowId: `smoke-prebuilt-${Date.now()}`,
          args: [{ workspaceId: 'ws_test', message: 'from the file' }],
        }),
      prebuilt!,
    );
    expect(result.message).toBe('from the file');
  });

  test('a worker on workflow-runs runs the smoke workflow and its activity reaches PostgreSQL', async () => {
    const workflowId = `smoke-${Date.now()}`;
    const result = await runWorker(() =>
      client.workflow.execute(smokeWorkflow, {
        taskQueue: TASK_QUEUE,
        workflowId,
        args: [{ workspaceId: 'ws_test', message: 'hello' }],
        typedSearchAttributes: [
          { key: workspaceIdKey, value: 'ws_test' },
          { key: workflowIdKey, value: 'wf_smoke' },
          { key: triggerKey, value: 'manual' },
        ],
      }),
    );
    expect(result.message).toBe('hello');
    expect(new Date(result.databaseTime).getTime()).not.toBeNaN();
    const description = await client.workflow.getHandle(workflowId).describe();
    expect(description.typedSearchAttributes.get(workspaceIdKey)).toBe('ws_test');
    expect(description.typedSearchAttributes.get(triggerKey)).toBe('manual');
  });

  test('a run started while no worker polls completes once a worker comes back', async () => {
    const workflowId = `smoke-restart-${Date.now()}`;
    // First worker: started and shut down before the workflow exists.
    await runWorker(async () => undefined);
    const handle = await client.workflow.start(smokeWorkflow, {
      taskQueue: TASK_QUEUE,
      workflowId,
      args: [{ workspaceId: 'ws_test', message: 'after restart' }],
    });
    const result = await runWorker(() => handle.result());
    expect(result.message).toBe('after restart');
  });
});
