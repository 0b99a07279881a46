/**
 * Issue 30 item 3: the webhook intake is group-committed (services/kernel/groupCommit.ts), so
 * one workspace's requests share INSERTs with everyone else's. Workspace A floods its webhook
 * with ordinary requests mixed with hostile ones (a body over the limit, nesting past the depth
 * cap, malformed JSON, NUL characters and lone surrogates, a slow body); workspace B's webhook,
 * called in the middle of the flood, still gets its 202 and its run still succeeds with B's
 * input. No answer is a 5xx, every hostile request is refused before it reaches a batch, and
 * every 202 A got is one outbox row.
 */
import net from 'node:net';
import { deployWorkflow, eventually, http, node, useTestStack, webhookChain, type HttpResult } from '../kit';

jest.setTimeout(900_000);

const stack = useTestStack({ config: { bodyLimit: '64kb' }, temporal: { dispatcher: true } });

/** A POST whose body trickles in a byte at a time, then stops short: the intake must not hold a batch for it. */
function slowBody(url: string, path: string): Promise<string> {
  return new Promise((resolve) => {
    const { hostname, port } = new URL(url);
    const socket = net.connect(Number(port), hostname, () => {
      socket.write(`POST ${path} HTTP/1.1\r\nHost: ${hostname}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"n":`);
    });
    let answer = '';
    socket.on('data', (d) => (answer += d.toString()));
    const drip = setInterval(() => socket.write(' '), 50);
    setTimeout(() => {
      clearInterval(drip);
      socket.destroy();
      resolve(answer);
    }, 3_000);
    socket.on('error', () => undefined);
  });
}

test('a flood of ordinary and hostile webhook requests from A: B’s webhook run completes, A gets no 5xx, every 202 is one row', async () => {
  const other = await stack.workspace('Bystander B');
  const a = await deployWorkflow(stack, webhookChain(node.transform('echo', 'n')));
  const b = await deployWorkflow({ app: stack.app, ws: { token: other.token } }, webhookChain(node.transform('echo', 'who')));
  const aPath = String(a.webhookPath);
  const bPath = String(b.webhookPath);

  const deep = (depth: number): unknown => (depth === 0 ? 1 : { d: deep(depth - 1) });
  const hostile: Array<() => Promise<HttpResult>> = [
    () => http(stack.app, 'POST', aPath, { body: { n: -1, pad: 'x'.repeat(200_000) } }),
    () => http(stack.app, 'POST', aPath, { body: { n: -1, deep: deep(150) } }),
    () => http(stack.app, 'POST', aPath, { body: { n: -1, text: 'nul \u0000 here' } }),
    () => http(stack.app, 'POST', aPath, { body: { n: -1, text: 'lone \ud800 surrogate' } }),
    () => http(stack.app, 'POST', aPath, { rawBody: '{"n": -1, "broken": ', headers: { 'content-type': 'application/json' } }),
  ];
  const answers: Array<HttpResult & { n: number }> = [];
  let next = 0;
  const FLOOD = 200;
  const lanes = Array.from({ length: 20 }, async (_, lane) => {
    while (next < FLOOD) {
      const n = next++;
      const attack = n % 10 === 0 ? hostile[(n / 10 + lane) % hostile.length]! : () => http(stack.app, 'POST', aPath, { body: { n } });
      answers.push({ ...(await attack()), n });
    }
  });
  const slow = slowBody(stack.app.url, aPath);

  // B calls in the middle of the flood.
  await eventually(
    async () => answers.length,
    (n) => n >= FLOOD / 3,
    120_000,
  );
  const bAnswer = await http<{ outboxId: string; status: string }>(stack.app, 'POST', bPath, { body: { who: 'bystander' } });
  expect([bAnswer.status, bAnswer.body.status]).toEqual([202, 'accepted']);
  await Promise.all(lanes);
  await slow;

  const bRun = await eventually(
    async () =>
      stack.app.orm.em
        .fork()
        .execute<Array<{ status: string; output: unknown; workspace_id: string }>>(
          `select r.status, r.output, r.workspace_id from runs r join webhook_outbox o on o.run_id = r.id where o.id = ?`,
          [bAnswer.body.outboxId],
        ),
    (rows) => rows[0]?.status === 'succeeded',
    // B's entry waits behind A's earlier ones (the dispatcher takes the oldest first): generous on a loaded machine.
    600_000,
  );
  expect(bRun).toEqual([{ status: 'succeeded', output: 'bystander', workspace_id: other.workspaceId }]);

  const fivexx = answers.filter((r) => r.status >= 500).map((r) => `${r.status} ${r.text.slice(0, 200)}`);
  expect(fivexx).toEqual([]);
  const refused = answers.filter((r) => r.n % 10 === 0);
  for (const r of refused) expect([r.n, r.status >= 400 && r.status < 500]).toEqual([r.n, true]);
  const accepted = answers.filter((r) => r.status === 202);
  expect(accepted).toHaveLength(FLOOD - refused.length);
  const rows = await stack.app.orm.em
    .fork()
    .execute<Array<{ n: number }>>(`select (payload->>'n')::int as n from webhook_outbox where workflow_id = ?`, [a.workflowId]);
  // Nothing hostile was written, and each accepted request is one row.
  expect(rows.map((r) => r.n).sort((x, y) => x - y)).toEqual(accepted.map((r) => r.n).sort((x, y) => x - y));
});
