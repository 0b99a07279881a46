/**
 * The outbox across a real Temporal outage: requests accepted while the Temporal server is
 * down wait in PostgreSQL and are dispatched, each exactly once, when it is back.
 */
import { Connection } from '@temporalio/client';
import { RunSchema, WebhookOutboxSchema } from '../../../db/entities';
import { ensureTemporalCli } from '../../../scripts/lib/temporalCli';
import { findFreePort, startTemporalDevServer, type TemporalDevServer } from '../../../scripts/lib/temporalDevServer';
import { registerSearchAttributes } from '../../../temporal/searchAttributes';
import { startTestWorker } from '../../support/harness';
import { deployWebhook, http, node, useTestStack, webhookChain } from '../../kit';

let server: TemporalDevServer;
let port: number;

async function startServer(): Promise<void> {
  server = await startTemporalDevServer({ binary: await ensureTemporalCli(), port, uiPort: null, startTimeoutMs: 120_000 });
  const connection = await Connection.connect({ address: server.address });
  await registerSearchAttributes(connection, 'default');
  await connection.close();
}

beforeAll(async () => {
  port = await findFreePort();
  await startServer();
});
// The app runs against this file's own Temporal server; its worker starts once the server is back.
const stack = useTestStack(() => ({ temporal: { dispatcher: true, temporalAddress: server.address }, worker: false }));
afterAll(() => server.stop());

test('requests accepted while Temporal is down are dispatched once it is back, exactly once', async () => {
  const { app } = stack;
  const { workflowId: id, webhookPath: invoke } = await deployWebhook(stack, webhookChain(node.transform('n', 'n')));

  await server.stop();
  for (let n = 0; n < 5; n++) expect((await http(app, 'POST', invoke, { body: { n } })).status).toBe(202);
  await new Promise((r) => setTimeout(r, 1500)); // several dispatcher passes fail meanwhile
  expect(await app.orm.em.fork().count(WebhookOutboxSchema, { workflowId: id, status: 'pending' })).toBe(5);

  await startServer();
  const worker = await startTestWorker(app, { temporalAddress: server.address });
  try {
    const deadline = Date.now() + 60_000;
    let runs = await app.orm.em.fork().find(RunSchema, { workflowId: id });
    while ((runs.length < 5 || runs.some((r) => r.status !== 'succeeded')) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 200));
      runs = await app.orm.em.fork().find(RunSchema, { workflowId: id });
    }
    expect(runs.map((r) => r.output).sort()).toEqual([0, 1, 2, 3, 4]);
    expect(await app.orm.em.fork().count(WebhookOutboxSchema, { workflowId: id, status: 'dispatched' })).toBe(5);
  } finally {
    await worker.stop();
  }
}, 180_000);
