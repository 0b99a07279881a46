/**
 * The outbox dispatcher takes pending webhook requests fairly across workspaces
 * (services/webhooks/store.ts, `lockPendingOutbox`): a workspace with a backlog does not make
 * another workspace's later request wait behind all of it.
 */
import { WebhookOutboxSchema } from '../../../db/entities';
import { dispatchOutbox } from '../../../services/webhooks';
import { deployWebhook, useTestStack, waitRun } from '../../kit';

// No outbox dispatcher: the test runs the passes itself, with a batch of 10.
const stack = useTestStack();
const PASS = 10;

const echo = {
  nodes: [
    { id: 'hook', type: 'webhook', config: {} },
    { id: 'echo', type: 'transform', config: { expression: '"ran"' } },
  ],
  edges: [{ source: 'hook', target: 'echo' }],
};
const entriesOf = (workflowId: string) =>
  stack.app.orm.em.fork().find(WebhookOutboxSchema, { workflowId }, { orderBy: { createdAt: 'asc' } });
const pass = () => dispatchOutbox(stack.app.orm.em.fork(), stack.app.deps.services.runs.launcher, PASS);

test('a request of B accepted after 3 batches of A’s backlog is taken in the next pass; A’s backlog then drains in order', async () => {
  const a = await deployWebhook(stack, { name: 'Backlog A', ...echo });
  const other = await stack.workspace('Bystander B');
  const b = await deployWebhook({ app: stack.app, ws: { token: other.token } }, { name: 'Bystander B', ...echo });

  for (let i = 0; i < 3 * PASS; i++) expect((await stack.as().post(a.webhookPath, { i })).status).toBe(202);
  expect((await stack.as(other.token).post(b.webhookPath, { who: 'B' })).status).toBe(202);

  // Oldest first would take 10 of A's 30 and leave B's request for the fourth pass.
  await pass();
  const [bEntry] = await entriesOf(b.workflowId);
  expect(bEntry).toMatchObject({ status: 'dispatched' });
  expect((await waitRun({ app: stack.app, ws: { token: other.token } }, bEntry!.runId)).status).toBe('succeeded');
  const aTaken = (await entriesOf(a.workflowId)).filter((e) => e.status === 'dispatched');
  // B's turn took one place of the pass (other test files' pending entries would take more).
  expect(aTaken.length).toBeLessThanOrEqual(PASS - 1);
  expect(aTaken.length).toBeGreaterThan(0);

  // Within a workspace the order stays oldest first, and nothing is taken twice.
  for (let i = 0; i < 20 && (await entriesOf(a.workflowId)).some((e) => e.status === 'pending'); i++) await pass();
  const entries = await entriesOf(a.workflowId);
  expect(entries.map((e) => e.status)).toEqual(entries.map(() => 'dispatched'));
  expect(entries.map((e) => e.attempts)).toEqual(entries.map(() => 1));
  expect(new Set(entries.map((e) => e.runId)).size).toBe(3 * PASS);
});
