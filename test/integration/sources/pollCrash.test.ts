/**
 * A worker SIGKILLed while an RSS or CI poll is in progress (the loopback feed or CI server
 * holds its answer): after a new worker starts, the retried attempt (the activity heartbeats,
 * so the retry comes within seconds) polls again; every new item or build starts exactly one
 * run and none is lost.
 */
import type { ChildProcess } from 'node:child_process';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { RunSchema } from '../../../db/entities';
import { WORKFLOW_TYPES, TASK_QUEUE } from '../../../temporal/shared';
import { deployWorkflow, useTestStack, type WorkflowBody } from '../../kit';
import { runsOfWorkflow } from '../../support/runs';
import { killWorker, spawnWorker } from '../../support/workerProcess';
import { changed, listTargets } from '../destinations/helpers';

let server: Server;
let base: string;
let worker: ChildProcess | undefined;
/** What the server answers: the feed, or each CI job's builds (newest first). */
let feedBody = '';
const builds: Record<string, Array<{ number: number; result: string | null }>> = { api: [] };
/** While set, the next request is held (never answered) and `arrived` resolves. */
let holdNext: { arrived: () => void } | null = null;
const held: ServerResponse[] = [];

const rss = (guids: string[]) =>
  `<?xml version="1.0"?><rss version="2.0"><channel><title>News</title>${guids.map((g) => `<item><guid>${g}</guid><title>Item ${g}</title><link>https://news.example.test/${g}</link></item>`).join('')}</channel></rss>`;

const stack = useTestStack(async () => {
  server = createServer((req, res) => {
    if (holdNext) {
      held.push(res);
      holdNext.arrived();
      holdNext = null;
      return;
    }
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname === '/feed.xml') return void res.writeHead(200, { 'content-type': 'application/rss+xml' }).end(feedBody);
    const job = /^\/job\/([^/]+)\/api\/json$/.exec(url.pathname)?.[1];
    if (!job || !builds[job]) return void res.writeHead(404).end('{}');
    const list = [...builds[job]]
      .reverse()
      .map((b) => ({ ...b, url: `${base}/job/${job}/${b.number}/`, timestamp: 1_700_000_000_000 + b.number }));
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ builds: list }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // The worker is a child process (spawned below), so it can be SIGKILLed.
  return { config: { outboundAllowPrivateNetworks: true }, temporal: { dispatcher: true }, worker: false };
});
beforeAll(async () => {
  worker = await spawnWorker();
  stack.beforeClose(async () => {
    if (worker) await killWorker(worker);
  });
});
afterAll(async () => {
  for (const res of held) res.destroy();
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r));
});

async function deployed(body: WorkflowBody = {}): Promise<{ workflowId: string; prod: { targetId: string; revision: number } }> {
  const { workflowId } = await deployWorkflow(stack, body);
  return {
    workflowId,
    prod: (await listTargets(stack.app, stack.ws.token, workflowId)).targets.find((t: { kind: string }) => t.kind === 'production')!,
  };
}

/** Starts one poll, waits until its request is held by the server, SIGKILLs the worker and starts a new one; returns the poll's result. */
async function pollThroughACrash(type: string, sourceId: string): Promise<{ outcome: string; started: number }> {
  const arrived = new Promise<void>((resolve) => (holdNext = { arrived: resolve }));
  const handle = await stack.app.deps.temporal.client.workflow.start(type, {
    taskQueue: TASK_QUEUE,
    workflowId: `crash-${sourceId}-${Date.now()}`,
    args: [{ sourceId }],
  });
  await arrived;
  await killWorker(worker!);
  for (const res of held.splice(0)) res.destroy();
  worker = await spawnWorker();
  return handle.result();
}

const poll = (type: string, sourceId: string) =>
  stack.app.deps.temporal.client.workflow.execute(type, {
    taskQueue: TASK_QUEUE,
    workflowId: `poll-${sourceId}-${Date.now()}`,
    args: [{ sourceId }],
  }) as Promise<{ outcome: string; started: number }>;

test('kill -9 of the worker during an RSS poll loses no item and starts none twice', async () => {
  const { workflowId, prod } = await deployed();
  const configured = await changed(stack.app, stack.ws.token, workflowId, {
    action: 'configure-source',
    expectedRevision: prod.revision,
    source: { kind: 'rss', targetId: prod.targetId, feedUrl: `${base}/feed.xml` },
  });
  const sourceId = configured.receipt.sourceId!;
  feedBody = rss(['a', 'b']);
  expect(await poll(WORKFLOW_TYPES.rssPoll, sourceId)).toEqual({ outcome: 'baseline', started: 0 });

  feedBody = rss(['e', 'd', 'c', 'a', 'b']);
  expect(await pollThroughACrash(WORKFLOW_TYPES.rssPoll, sourceId)).toEqual({ outcome: 'polled', started: 3 });
  // Polling again starts nothing more.
  expect(await poll(WORKFLOW_TYPES.rssPoll, sourceId)).toEqual({ outcome: 'polled', started: 0 });
  const runs = await runsOfWorkflow(stack.app, workflowId, 3);
  expect(runs.map((r) => (r.input as { rss: { item: { key: string } } }).rss.item.key).sort()).toEqual(['id:c', 'id:d', 'id:e']);
  expect(runs.every((r) => r.trigger === 'rss')).toBe(true);
  expect(await stack.app.orm.em.fork().count(RunSchema, { workflowId })).toBe(3);
}, 120_000);

test('kill -9 of the worker during a CI poll loses no build and starts none twice', async () => {
  const cred = await stack.api.post<{ credential: { id: string } }>('/api/v1/credentials', {
    name: 'Jenkins',
    type: 'ci',
    value: { token: 'ci-crash-token-0123456789', username: 'bot', baseUrl: base },
  });
  expect(cred.status).toBe(201);
  const { workflowId, prod } = await deployed({
    nodes: [
      { id: 'build', type: 'ci', config: {} },
      { id: 'out', type: 'transform', config: { expression: '"ci"' } },
    ],
    edges: [{ source: 'build', target: 'out' }],
  });
  const configured = await changed(stack.app, stack.ws.token, workflowId, {
    action: 'configure-source',
    expectedRevision: prod.revision,
    source: {
      kind: 'ci',
      targetId: prod.targetId,
      nodeId: 'build',
      credentialId: cred.body.credential.id,
      jobs: ['api'],
      results: ['FAILURE', 'SUCCESS'],
    },
  });
  const sourceId = configured.receipt.sourceId!;
  builds.api = [{ number: 1, result: 'SUCCESS' }];
  expect(await poll(WORKFLOW_TYPES.ciPoll, sourceId)).toMatchObject({ started: 0 });

  builds.api.push({ number: 2, result: 'FAILURE' }, { number: 3, result: 'SUCCESS' });
  expect(await pollThroughACrash(WORKFLOW_TYPES.ciPoll, sourceId)).toMatchObject({ started: 2 });
  expect(await poll(WORKFLOW_TYPES.ciPoll, sourceId)).toMatchObject({ started: 0 });
  const runs = await runsOfWorkflow(stack.app, workflowId, 2);
  expect(runs.map((r) => (r.input as { ci: { build: { number: number } } }).ci.build.number).sort()).toEqual([2, 3]);
  expect(await stack.app.orm.em.fork().count(RunSchema, { workflowId })).toBe(2);
}, 120_000);
