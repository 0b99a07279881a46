/**
 * Issue 26, item 3, raw SQL: text that reaches PostgreSQL through `em.execute`/`client.query`
 * rather than an entity passes the same well-formed rule (engine/wellFormedText.ts,
 * `wellFormedParams`). Inbound mail is foreign text the sender cannot fix, so it is accepted
 * with each NUL and lone surrogate replaced by U+FFFD (as the entity types do) instead of a 500
 * that loses the message; JSON input of the API keeps its 400.
 */
import { createHmac } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pollRssSource } from '../../services/sources';
import { changed, production } from '../integration/destinations/helpers';
import { http, type HttpResult } from '../support/harness';
import { abuseStackPerFile, chain, codeNode, expectWellFormed } from './kit';

// Private networks: the RSS case's feed is served on loopback.
const kit = abuseStackPerFile({ config: { errtrackerIngressEnabled: true, outboundAllowPrivateNetworks: true } });
let n = 0;
const uniq = () => `${Date.now().toString(36)}${n++}`;
const FFFD = '\ufffd';

/** HTTP as A, with headers; the answer is recorded for the kit's no-5xx check. */
async function asA(
  method: string,
  path: string,
  opts: { body?: unknown; rawBody?: string; headers?: Record<string, string>; token?: boolean } = {},
): Promise<HttpResult> {
  const res = await http(kit.app, method, path, {
    token: opts.token === false ? undefined : kit.a.token,
    body: opts.body,
    rawBody: opts.rawBody,
    headers: opts.headers,
  });
  kit.responses.push(res);
  return res;
}

async function mailRoute(): Promise<{ id: string; address: string; secret: string }> {
  const workflowId = await kit.createWorkflow(kit.a, chain([]));
  await kit.deploy(kit.a, workflowId);
  const created = await asA('POST', '/api/v1/mailer/routes', {
    body: { address: `raw-${uniq()}@example.test`, workflowId },
    headers: { 'idempotency-key': `k-${uniq()}` },
  });
  expect([created.status, created.text.slice(0, 300)]).toEqual([201, expect.anything()]);
  return { id: created.body.route.id, address: created.body.route.address, secret: created.body.signingSecret };
}

/** A signed inbound delivery; the body is JSON text, so NUL and lone surrogates travel as `\u` escapes. */
function deliver(route: { id: string; secret: string }, body: Record<string, unknown>): Promise<HttpResult> {
  const raw = JSON.stringify(body);
  const ts = String(Math.floor(Date.now() / 1000));
  const signature = `v1=${createHmac('sha256', route.secret).update(`${ts}.`).update(raw).digest('hex')}`;
  return asA('POST', `/api/v1/mailer/inbound/${route.id}`, {
    rawBody: raw,
    headers: { 'x-svc-timestamp': ts, 'x-svc-signature': signature },
    token: false,
  });
}

async function storedMessage(messageId: string): Promise<Record<string, any>> {
  const conn = kit.app.orm.em.fork().getConnection();
  const [message] = await conn.execute('select * from mailer_messages where id = ?', [messageId]);
  const [thread] = await conn.execute('select * from mailer_threads where id = ?', [message.thread_id]);
  const [outbox] = await conn.execute('select payload from webhook_outbox where id = ?', [message.outbox_id]);
  return { message, thread, outbox };
}

test('signed inbound mail with NUL and lone surrogates in subject, from, text, html, thread id and metadata: 202, stored with U+FFFD', async () => {
  await kit.survives(async () => {
    const route = await mailRoute();
    const res = await deliver(route, {
      externalMessageId: `m-${uniq()}`,
      from: 'Eve\u0000 \ud800<eve@example.test>',
      subject: 'Order\u0000 42 \udc00',
      text: 'line\u0000one \ud83d',
      html: '<p>hi\u0000 \ud800</p>',
      externalThreadId: `t\u0000${uniq()}`,
      providerMetadata: { 'label\u0000': 'v\ud800', nested: ['x\u0000'] },
    });
    expect([res.status, res.text.slice(0, 300)]).toEqual([202, expect.anything()]);
    expectWellFormed(res.body);
    expect(res.body.message.subject).toBe(`Order${FFFD} 42 ${FFFD}`);
    const stored = await storedMessage(res.body.message.id);
    expectWellFormed(stored);
    expect(stored.message.text).toBe(`line${FFFD}one ${FFFD}`);
    expect(stored.thread.subject).toBe(`Order${FFFD} 42 ${FFFD}`);
    expect(stored.message.provider_metadata).toMatchObject({ [`label${FFFD}`]: `v${FFFD}`, nested: [`x${FFFD}`] });
    expect(stored.outbox.payload.email.subject).toBe(`Order${FFFD} 42 ${FFFD}`);
    const listed = await asA('GET', `/api/v1/mailer/threads/${res.body.message.threadId}`);
    expect(listed.status).toBe(200);
    expectWellFormed(listed.body);
  });
});

test('signed inbound raw MIME with NUL in the encoded subject, body and attachment name: 202, stored with U+FFFD', async () => {
  await kit.survives(async () => {
    const route = await mailRoute();
    const mime = [
      'From: =?utf-8?q?Eve=00?= <eve@example.test>',
      `To: ${route.address}`,
      'Subject: =?utf-8?q?Hello=00World?=',
      'MIME-Version: 1.0',
      'Content-Type: multipart/mixed; boundary="b"',
      '',
      '--b',
      'Content-Type: text/plain; charset=utf-8',
      'Content-Transfer-Encoding: quoted-printable',
      '',
      'body=00text',
      '--b',
      'Content-Type: text/plain',
      "Content-Disposition: attachment; filename*=utf-8''evil%00name.txt",
      'Content-Transfer-Encoding: base64',
      '',
      'aGVsbG8=',
      '--b--',
      '',
    ].join('\r\n');
    const res = await deliver(route, { externalMessageId: `m-${uniq()}`, from: 'eve@example.test', subject: '', raw: mime });
    expect([res.status, res.text.slice(0, 300)]).toEqual([202, expect.anything()]);
    expectWellFormed(res.body);
    const stored = await storedMessage(res.body.message.id);
    expectWellFormed(stored);
    expect(stored.message.subject).toBe(`Hello${FFFD}World`);
    expect(stored.message.text).toContain(`body${FFFD}text`);
    expect(stored.message.attachment_file_ids).toHaveLength(1);
    expect(stored.message.provider_metadata.mime.attachments[0].filename).toBe(`evil${FFFD}name.txt`);
  });
});

test('JSON input of the API with NUL (mailer route description, knowledge upload name): a 400, nothing stored', async () => {
  await kit.survives(async () => {
    const workflowId = await kit.createWorkflow(kit.a, chain([]));
    const route = await asA('POST', '/api/v1/mailer/routes', {
      body: { address: `d-${uniq()}@example.test`, workflowId, description: 'help\u0000desk' },
      headers: { 'idempotency-key': `k-${uniq()}` },
    });
    expect(route.status).toBe(400);
    const kb = await asA('POST', '/api/v1/knowledge-bases', { body: { name: `KB ${uniq()}` } });
    expect([kb.status, kb.text.slice(0, 300)]).toEqual([201, expect.anything()]);
    const form = new FormData();
    form.append('knowledgeBaseId', kb.body.knowledgeBase.id);
    form.append('name', 'title\u0000here');
    form.append('file', new Blob(['hello'], { type: 'text/plain' }), 'name.txt');
    const res = await fetch(`${kit.app.url}/api/v1/documents`, {
      method: 'POST',
      headers: { authorization: `Bearer ${kit.a.token}` },
      body: form,
    });
    const text = await res.text();
    kit.responses.push({ status: res.status, body: undefined, headers: res.headers, text });
    expect([res.status, text]).toEqual([400, expect.stringContaining('fields.name contains a NUL character (U+0000)')]);
    const listed = await asA('GET', `/api/v1/knowledge-bases/${kb.body.knowledgeBase.id}/documents`);
    expect(listed.body.documents).toEqual([]);
  });
});

test('a signed error-tracker delivery with NUL in its JSON: the route answers 400, nothing in the outbox', async () => {
  await kit.survives(async () => {
    const workflowId = await kit.createWorkflow(kit.a, chain([]));
    await kit.deploy(kit.a, workflowId);
    const secret = `tracker-signing-secret-${uniq()}`;
    const created = await asA('POST', '/api/v1/webhooks', {
      body: { provider: 'errtracker', workflowId, organizationSlug: 'acme', projectSlug: 'api', signingSecret: secret },
    });
    expect([created.status, created.text.slice(0, 300)]).toEqual([201, expect.anything()]);
    const raw = JSON.stringify({
      action: 'created',
      data: { issue: { id: '42', title: 'Type\u0000Error \ud800', 'tag\u0000': ['\udc00'] } },
    });
    const signature = createHmac('sha256', secret).update(raw).digest('hex');
    const res = await asA('POST', new URL(created.body.invokeUrl).pathname, {
      rawBody: raw,
      headers: { 'sentry-hook-resource': 'issue', 'sentry-hook-signature': signature },
      token: false,
    });
    expect([res.status, res.text]).toEqual([400, expect.stringContaining('contains a NUL character (U+0000)')]);
    const rows = await kit.app.orm.em.fork().getConnection().execute('select id from webhook_outbox where workflow_id = ?', [workflowId]);
    expect(rows).toEqual([]);
  });
});

// A raw NUL byte in a CSV is refused (422, csv_malformed); JSON escapes in a json cell are not.
test('a CSV import with NUL and lone-surrogate escapes in a json cell: 201, stored with U+FFFD', async () => {
  await kit.survives(async () => {
    const csv = 'name,meta\nab,"{""k\\u0000"":""v\\ud800""}"\n';
    const form = new FormData();
    form.append('databaseName', `raw_${uniq()}`);
    form.append('file', new Blob([csv], { type: 'text/csv' }), 'nul.csv');
    const res = await fetch(`${kit.app.url}/api/v1/databases/import`, {
      method: 'POST',
      headers: { authorization: `Bearer ${kit.a.token}` },
      body: form,
    });
    const text = await res.text();
    kit.responses.push({ status: res.status, body: undefined, headers: res.headers, text });
    expect([res.status, text.slice(0, 300)]).toEqual([201, expect.anything()]);
    const table = JSON.parse(text).table;
    expect(table.columns).toEqual([
      expect.objectContaining({ name: 'name', type: 'text' }),
      expect.objectContaining({ name: 'meta', type: 'json' }),
    ]);
    const rows = await asA('GET', `/api/v1/databases/${table.id}/rows`);
    expect(rows.status).toBe(200);
    expect(rows.body.rows.map((r: any) => r.values)).toEqual([{ name: 'ab', meta: { [`k${FFFD}`]: `v${FFFD}` } }]);
  });
});

test('a table_insert node writing a code node output with NUL and lone surrogates: the run succeeds, the row stored with U+FFFD', async () => {
  await kit.survives(async () => {
    const form = new FormData();
    form.append('databaseName', `raw_${uniq()}`);
    form.append('file', new Blob(['name,meta\nseed,"{""a"":1}"\n'], { type: 'text/csv' }), 'nodes.csv');
    const imported = await fetch(`${kit.app.url}/api/v1/databases/import`, {
      method: 'POST',
      headers: { authorization: `Bearer ${kit.a.token}` },
      body: form,
    });
    expect(imported.status).toBe(201);
    const tableId = ((await imported.json()) as { table: { id: string } }).table.id;
    const run = await kit.runLive(kit.a, [
      codeNode(
        'const k = {}; k["k\\u0000" + String.fromCharCode(0xdc00)] = "v" + String.fromCharCode(0xd800); return { name: "x\\u0000y", meta: k };',
      ),
      { id: 'ins', type: 'table_insert', config: { tableId, values: { name: '=name', meta: '=meta' } } },
    ]);
    expect([run.status, run.error ?? null]).toEqual(['succeeded', null]);
    const rows = await asA('GET', `/api/v1/databases/${tableId}/rows`);
    expect(rows.body.rows.map((r: any) => r.values)).toEqual([
      { name: 'seed', meta: { a: 1 } },
      { name: `x${FFFD}y`, meta: { [`k${FFFD}${FFFD}`]: `v${FFFD}` } },
    ]);
  });
});

test('an RSS item with raw NUL bytes in its id and title: polled, one outbox entry with U+FFFD, a repeat poll starts nothing new', async () => {
  let body = '';
  const server = createServer((_req, res) => void res.writeHead(200, { 'content-type': 'application/rss+xml' }).end(body));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  try {
    await kit.survives(async () => {
      const rss = (items: Array<{ guid: string; title: string }>) =>
        `<?xml version="1.0"?><rss version="2.0"><channel><title>News</title>${items.map((i) => `<item><guid>${i.guid}</guid><title>${i.title}</title><link>https://news.example.test/x</link></item>`).join('')}</channel></rss>`;
      const workflowId = await kit.createWorkflow(kit.a, chain([]));
      await kit.deploy(kit.a, workflowId);
      const prod = await production(kit.app, kit.a.token, workflowId);
      const feedUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/feed.xml`;
      const configured = await changed(kit.app, kit.a.token, workflowId, {
        action: 'configure-source',
        expectedRevision: prod.revision,
        source: { kind: 'rss', targetId: prod.targetId, feedUrl },
      });
      const poll = () => pollRssSource(kit.app.orm.em.fork(), { allowPrivateNetworks: true }, configured.receipt.sourceId!);
      body = rss([{ guid: 'old', title: 'Old' }]);
      expect(await poll()).toEqual({ outcome: 'baseline', started: 0 });
      body = rss([
        { guid: 'n\u0000ew', title: 'Ti\u0000tle' },
        { guid: 'old', title: 'Old' },
      ]);
      expect(await poll()).toEqual({ outcome: 'polled', started: 1 });
      await poll();
      const conn = kit.app.orm.em.fork().getConnection();
      const entries = await conn.execute('select payload, dedupe_key from webhook_outbox where workflow_id = ?', [workflowId]);
      expect(entries).toHaveLength(1);
      expectWellFormed(entries);
      expect(JSON.stringify(entries[0].payload)).toContain(`Ti${FFFD}tle`);
      const [state] = await conn.execute('select state from workflow_target_sources where id = ?', [configured.receipt.sourceId]);
      expectWellFormed(state);
    });
  } finally {
    await new Promise((r) => server.close(r));
  }
});
