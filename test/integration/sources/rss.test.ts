/** RSS sources: conditional requests, baseline first poll, one run per new item with trigger `rss`, state shown in GET /targets. */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { RunSchema } from '../../../db/entities';
import { parseFeed, pollRssSource } from '../../../services/sources';
import { rssScheduleId, syncSourceSchedules } from '../../../temporal/sourcesClient';
import { deployWorkflow, useTestStack } from '../../kit';
import { runsOfWorkflow } from '../../support/runs';
import { changed, listTargets } from '../destinations/helpers';

let server: Server;
let feedUrl: string;
let feed = { status: 200, etag: '"v1"', body: '' };
const requests: IncomingHttpHeaders[] = [];
const scheduled = new Set<string>();

const rss = (items: Array<{ guid: string; title: string }>) =>
  `<?xml version="1.0"?><rss version="2.0"><channel><title>News</title>${items.map((i) => `<item><guid>${i.guid}</guid><title>${i.title}</title><link>https://news.example.test/${i.guid}</link></item>`).join('')}</channel></rss>`;

beforeAll(async () => {
  server = createServer((req, res) => {
    requests.push(req.headers);
    if (feed.status !== 200) return void res.writeHead(feed.status).end('down');
    if (req.headers['if-none-match'] === feed.etag) return void res.writeHead(304).end();
    res.writeHead(200, { 'content-type': 'application/rss+xml', etag: feed.etag }).end(feed.body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  feedUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/feed.xml`;
});
const stack = useTestStack(() => ({ config: { outboundAllowPrivateNetworks: true }, temporal: { dispatcher: true } }));
stack.beforeClose(async () => {
  // Leave no schedule behind on the shared Temporal server.
  for (const id of scheduled)
    await stack.app.deps.temporal.client.schedule
      .getHandle(id)
      .delete()
      .catch(() => undefined);
});
afterAll(async () => {
  await new Promise((r) => server?.close(r));
});

const runsOf = (workflowId: string, count: number) => runsOfWorkflow(stack.app, workflowId, count);

test('first poll is a baseline; 304 on an unchanged ETag; each new item starts exactly one rss run; errors are shown', async () => {
  const { app, ws } = stack;
  const { workflowId } = await deployWorkflow(stack, {});
  const prod = (await listTargets(app, ws.token, workflowId)).targets.find((t: { kind: string }) => t.kind === 'production')!;
  const configured = await changed(app, ws.token, workflowId, {
    action: 'configure-source',
    expectedRevision: prod.revision,
    source: { kind: 'rss', targetId: prod.targetId, feedUrl },
  });
  const sourceId = configured.receipt.sourceId!;
  const poll = () => pollRssSource(app.orm.em.fork(), { allowPrivateNetworks: true }, sourceId);

  feed = {
    status: 200,
    etag: '"v1"',
    body: rss([
      { guid: 'a', title: 'Old A' },
      { guid: 'b', title: 'Old B' },
    ]),
  };
  expect(await poll()).toEqual({ outcome: 'baseline', started: 0 });
  expect(await poll()).toEqual({ outcome: 'not_modified', started: 0 });
  expect(requests[requests.length - 1]['if-none-match']).toBe('"v1"');

  feed = {
    status: 200,
    etag: '"v2"',
    body: rss([
      { guid: 'd', title: 'New D' },
      { guid: 'c', title: 'New C' },
      { guid: 'a', title: 'Old A' },
      { guid: 'b', title: 'Old B' },
    ]),
  };
  expect(await poll()).toEqual({ outcome: 'polled', started: 2 });
  // Two pollers racing over the same new item (a retried activity after a worker was killed) start it once.
  feed = {
    status: 200,
    etag: '"v2b"',
    body: rss([
      { guid: 'e', title: 'New E' },
      { guid: 'd', title: 'New D' },
      { guid: 'c', title: 'New C' },
      { guid: 'a', title: 'Old A' },
      { guid: 'b', title: 'Old B' },
    ]),
  };
  const raced = await Promise.all([poll(), poll()]);
  expect(raced.reduce((n, r) => n + r.started, 0)).toBe(1);
  // The server ignores the validator now: the same items are seen again and start nothing.
  feed = { ...feed, etag: '"v3"' };
  expect(await poll()).toEqual({ outcome: 'polled', started: 0 });

  const runs = await runsOf(workflowId, 3);
  expect(runs).toHaveLength(3);
  expect(runs.every((r) => r.trigger === 'rss')).toBe(true);
  expect(runs.map((r) => (r.input as { rss: { item: { title: string } } }).rss.item.title).sort()).toEqual(['New C', 'New D', 'New E']);

  let view = (await listTargets(app, ws.token, workflowId)).targets.find((t: { kind: string }) => t.kind === 'production')!;
  expect(view.sources.rss[0]).toMatchObject({ id: sourceId, lastPolledAt: expect.any(String), paused: false, error: null });

  feed = { status: 500, etag: '"v4"', body: '' };
  const failed = await poll();
  expect(failed.outcome).toBe('failed');
  view = (await listTargets(app, ws.token, workflowId)).targets.find((t: { kind: string }) => t.kind === 'production')!;
  expect(view.sources.rss[0].error).toContain('HTTP 500');
  expect(await stack.app.orm.em.fork().count(RunSchema, { workflowId })).toBe(3);
});

test('the parser reads RSS 2.0, Atom and JSON Feed; items without an id are keyed by their link', () => {
  const atom = `<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"><title>T</title><entry><id>urn:1</id><title>One</title><link rel="alternate" href="https://x.test/1"/><updated>2026-01-01T00:00:00Z</updated></entry><entry><title>Two</title><link href="https://x.test/2"/></entry></feed>`;
  const atomItems = parseFeed(atom);
  expect(atomItems.map((i) => [i.key, i.title, i.link])).toEqual([
    ['id:urn:1', 'One', 'https://x.test/1'],
    [expect.stringMatching(/^link:/), 'Two', 'https://x.test/2'],
  ]);
  const json = JSON.stringify({
    version: 'https://jsonfeed.org/version/1.1',
    title: 'J',
    items: [{ id: '9', title: 'Nine', url: 'https://x.test/9' }],
  });
  expect(parseFeed(json)).toEqual([{ key: 'id:9', title: 'Nine', link: 'https://x.test/9', summary: null, publishedAt: null }]);
  expect(parseFeed(rss([{ guid: 'g', title: 'G &amp; H' }]))[0]).toMatchObject({ key: 'id:g', title: 'G & H' });
  expect(() => parseFeed('<html><body>no</body></html>')).toThrow();
});

test('each RSS source of a live destination gets a Temporal Schedule at its interval; a triggered poll starts rss runs', async () => {
  const { app, ws } = stack;
  const client = app.deps.temporal.client;
  const { workflowId } = await deployWorkflow(stack, {});
  const prod = (await listTargets(app, ws.token, workflowId)).targets.find((t: { kind: string }) => t.kind === 'production')!;
  const url = `${feedUrl}?scheduled=1`;
  const configured = await changed(app, ws.token, workflowId, {
    action: 'configure-source',
    expectedRevision: prod.revision,
    source: { kind: 'rss', targetId: prod.targetId, feedUrl: url, intervalSeconds: 3600 },
  });
  const sourceId = configured.receipt.sourceId!;
  feed = { status: 200, etag: '"s1"', body: rss([{ guid: 's-a', title: 'Base' }]) };

  const synced = await syncSourceSchedules(client, app.orm.em.fork());
  synced.kept.forEach((id) => scheduled.add(id));
  expect(synced.kept).toContain(rssScheduleId(sourceId));
  const handle = client.schedule.getHandle(rssScheduleId(sourceId));
  const described = await handle.describe();
  expect(described.spec.intervals?.[0]?.every).toBe(3_600_000);

  const sourceView = async () =>
    (await listTargets(app, ws.token, workflowId)).targets
      .find((t: { kind: string }) => t.kind === 'production')!
      .sources.rss.find((s: { id: string }) => s.id === sourceId)!;
  const waitFor = async (done: () => Promise<boolean>) => {
    const deadline = Date.now() + 30_000;
    while (!(await done()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
  };
  await handle.trigger();
  await waitFor(async () => (await sourceView()).lastPolledAt !== null);
  expect((await sourceView()).lastPolledAt).toEqual(expect.any(String));
  expect(await stack.app.orm.em.fork().count(RunSchema, { workflowId })).toBe(0);

  feed = {
    status: 200,
    etag: '"s2"',
    body: rss([
      { guid: 's-b', title: 'Scheduled B' },
      { guid: 's-a', title: 'Base' },
    ]),
  };
  await handle.trigger();
  const runs = await runsOf(workflowId, 1);
  expect(runs).toHaveLength(1);
  expect(runs[0].trigger).toBe('rss');

  // A stopped (disabled) destination loses its schedule on the next sync.
  await stack.app.orm.em.fork().getConnection().execute('update workflow_targets set enabled = false where id = ?', [prod.targetId]);
  const after = await syncSourceSchedules(client, app.orm.em.fork());
  expect(after.removed).toContain(rssScheduleId(sourceId));
  await expect(handle.describe()).rejects.toThrow();
});
