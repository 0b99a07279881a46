/** Mailer routes, signed and generic inbound, threading, lists, and runs started with trigger `email` through the outbox. */
import { createHmac } from 'node:crypto';
import { addUserWithKey, http, type WorkspaceFixture } from '../../support/harness';
import { deployWorkflow, useTestStack } from '../../kit';
import { runsOfWorkflow } from '../../support/runs';

const stack = useTestStack({ temporal: { dispatcher: true } });
let other: WorkspaceFixture;
let n = 0;
const uniq = () => `${Date.now().toString(36)}${n++}`;

beforeAll(async () => {
  other = await stack.workspace('Other');
});

const app = () => stack.app;
const key = () => `key-${uniq()}`;

const deployedWorkflow = async (token = stack.ws.token) => (await deployWorkflow(stack, {}, { token })).workflowId;

async function createRoute(body: Record<string, unknown>, token = stack.ws.token) {
  return http(app(), 'POST', '/api/v1/mailer/routes', { token, body, headers: { 'idempotency-key': key() } });
}

const sign = (secret: string, ts: string, raw: string | Buffer) =>
  `v1=${createHmac('sha256', secret).update(`${ts}.`).update(raw).digest('hex')}`;
const now = () => String(Math.floor(Date.now() / 1000));
function deliver(routeId: string, raw: string, headers: Record<string, string>) {
  return http(app(), 'POST', `/api/v1/mailer/inbound/${routeId}`, { rawBody: raw, headers });
}
function signed(routeId: string, secret: string, body: Record<string, unknown>, ts = now()) {
  const raw = JSON.stringify(body);
  return deliver(routeId, raw, { 'x-svc-timestamp': ts, 'x-svc-signature': sign(secret, ts, raw) });
}

const runsOf = (workflowId: string, count: number) => runsOfWorkflow(app(), workflowId, count);

test('routes: Idempotency-Key required, address trimmed and lowercased, duplicate 409, secret shown once, links', async () => {
  const workflowId = await deployedWorkflow();
  const address = `  Support-${uniq()}@Example.TEST `;
  const noKey = await http(app(), 'POST', '/api/v1/mailer/routes', { token: stack.ws.token, body: { address, workflowId } });
  expect(noKey.status).toBe(400);

  const created = await createRoute({ address, workflowId, description: 'help desk' });
  expect(created.status).toBe(201);
  expect(created.body.route).toMatchObject({
    address: address.trim().toLowerCase(),
    workflowId,
    executionTargetId: null,
    enabled: true,
    targetEnabled: true,
  });
  expect(created.body.signingSecret).toMatch(/^msk_/);
  expect(created.body.links).toEqual({
    self: `${app().url}/api/v1/mailer/routes/${created.body.route.id}`,
    inbound: `${app().url}/api/v1/mailer/inbound`,
    signedInbound: `${app().url}/api/v1/mailer/inbound/${created.body.route.id}`,
  });
  const dup = await createRoute({ address: address.toUpperCase(), workflowId });
  expect(dup.status).toBe(409);

  const got = await http(app(), 'GET', `/api/v1/mailer/routes/${created.body.route.id}`, { token: stack.ws.token });
  expect(got.status).toBe(200);
  expect(got.text).not.toContain(created.body.signingSecret);
  const list = await http(app(), 'GET', '/api/v1/mailer/routes', { token: stack.ws.token });
  expect(list.body.routes.map((r: { id: string }) => r.id)).toContain(created.body.route.id);
  const rows = await app().orm.em.fork().getConnection().execute('select * from mailer_routes where id = ?', [created.body.route.id]);
  expect(JSON.stringify(rows)).not.toContain(created.body.signingSecret);

  // Another workspace's key: 404 everywhere, nothing changed; a non-workspace key: 403.
  expect((await http(app(), 'GET', `/api/v1/mailer/routes/${created.body.route.id}`, { token: other.token })).status).toBe(404);
  const foreignPatch = await http(app(), 'PATCH', `/api/v1/mailer/routes/${created.body.route.id}`, {
    token: other.token,
    body: { enabled: false },
  });
  expect(foreignPatch.status).toBe(404);
  expect((await http(app(), 'GET', '/api/v1/mailer/routes', { token: other.token })).body.routes).toEqual([]);
  const org = await addUserWithKey(app(), stack.ws, 'admin', 'organization');
  expect((await http(app(), 'GET', '/api/v1/mailer/routes', { token: org.token })).status).toBe(403);
  expect((await http(app(), 'GET', `/api/v1/mailer/routes/${created.body.route.id}`, { token: stack.ws.token })).body.route.enabled).toBe(
    true,
  );
});

test('patch: rotation needs Idempotency-Key and returns a new secret once; the old secret stops verifying', async () => {
  const workflowId = await deployedWorkflow();
  const created = await createRoute({ address: `rot-${uniq()}@example.test`, workflowId });
  const id = created.body.route.id;
  const noKey = await http(app(), 'PATCH', `/api/v1/mailer/routes/${id}`, { token: stack.ws.token, body: { rotateSigningSecret: true } });
  expect(noKey.status).toBe(400);
  const rotated = await http(app(), 'PATCH', `/api/v1/mailer/routes/${id}`, {
    token: stack.ws.token,
    body: { rotateSigningSecret: true, description: 'rotated' },
    headers: { 'idempotency-key': key() },
  });
  expect(rotated.status).toBe(200);
  expect(rotated.body.signingSecret).toMatch(/^msk_/);
  expect(rotated.body.signingSecret).not.toBe(created.body.signingSecret);
  expect(rotated.body.route.description).toBe('rotated');
  const plain = await http(app(), 'PATCH', `/api/v1/mailer/routes/${id}`, { token: stack.ws.token, body: { enabled: true } });
  expect(plain.status).toBe(200);
  expect(plain.body.signingSecret).toBeUndefined();

  const msg = { externalMessageId: `m-${uniq()}`, from: 'a@example.test', subject: 'hi' };
  expect((await signed(id, created.body.signingSecret, msg)).status).toBe(401);
  expect((await signed(id, rotated.body.signingSecret, msg)).status).toBe(202);
});

test('target-bound routes cannot change workflow', async () => {
  const workflowId = await deployedWorkflow();
  const targets = await http(app(), 'GET', `/api/v1/workflows/${workflowId}/targets`, { token: stack.ws.token });
  expect(targets.status).toBe(200);
  const production = targets.body.targets.find((t: { kind: string }) => t.kind === 'production');
  const bound = await createRoute({ address: `bound-${uniq()}@example.test`, workflowId, executionTargetId: production.targetId });
  expect(bound.status).toBe(201);
  expect(bound.body.route.executionTargetId).toBe(production.targetId);
  const otherWf = await deployedWorkflow();
  const refused = await http(app(), 'PATCH', `/api/v1/mailer/routes/${bound.body.route.id}`, {
    token: stack.ws.token,
    body: { workflowId: otherWf },
  });
  expect(refused.status).toBe(409);
});

test('a workflow without a Start or plain Webhook trigger gets no mail route: 400 event_source_trigger_not_found', async () => {
  const scheduleOnly = {
    nodes: [
      { id: 'cron', type: 'schedule', config: { cron: '0 3 * * *' } },
      { id: 'echo', type: 'transform', config: { expression: '$' } },
    ],
    edges: [{ id: 'e', source: 'cron', target: 'echo' }],
  };
  const deployed = (await deployWorkflow(stack, scheduleOnly, { name: 'Nightly' })).workflowId;
  const refused = await createRoute({ address: `nightly-${uniq()}@example.test`, workflowId: deployed });
  expect(refused.status).toBe(400);
  expect(refused.body).toEqual({
    error: 'A mail route needs a Start or plain Webhook trigger in the saved version of destination "Production".',
    code: 'event_source_trigger_not_found',
  });
  // Never deployed: the draft is what a route would run once it is, so the draft is checked.
  const draft = await stack.api.workflows.create({ name: 'Nightly draft', ...scheduleOnly });
  expect(draft.status).toBe(201);
  const draftRefused = await createRoute({ address: `draft-${uniq()}@example.test`, workflowId: draft.body.workflow.id });
  expect([draftRefused.status, draftRefused.body.code]).toEqual([400, 'event_source_trigger_not_found']);

  // Moving an existing route onto such a workflow is refused the same way, and changes nothing.
  const good = await createRoute({ address: `moving-${uniq()}@example.test`, workflowId: await deployedWorkflow() });
  expect(good.status).toBe(201);
  const moved = await http(app(), 'PATCH', `/api/v1/mailer/routes/${good.body.route.id}`, {
    token: stack.ws.token,
    body: { workflowId: deployed },
  });
  expect([moved.status, moved.body.code]).toEqual([400, 'event_source_trigger_not_found']);
  const after = await http(app(), 'GET', `/api/v1/mailer/routes/${good.body.route.id}`, { token: stack.ws.token });
  expect(after.body.route.workflowId).toBe(good.body.route.workflowId);
  const listed = await http(app(), 'GET', '/api/v1/mailer/routes', { token: stack.ws.token });
  expect(listed.body.routes.filter((r: { workflowId: string }) => r.workflowId === deployed)).toEqual([]);
});

test('signed inbound: forged, tampered, missing, stale and replayed signatures; 1 MiB + 1 byte is 413; success starts one email run', async () => {
  const workflowId = await deployedWorkflow();
  const created = await createRoute({ address: `signed-${uniq()}@example.test`, workflowId });
  const { route, signingSecret } = created.body;
  const body = {
    externalMessageId: `ext-${uniq()}`,
    from: 'Alice <alice@example.test>',
    subject: 'Order 42',
    text: 'hello',
    html: '<p onclick="x()">hi<script>alert(1)</script><img src="https://tracker.example/p.gif"></p>',
    to: route.address,
  };
  const raw = JSON.stringify(body);
  const ts = now();

  expect((await deliver(route.id, raw, { 'x-svc-timestamp': ts, 'x-svc-signature': sign('not-the-secret', ts, raw) })).status).toBe(401);
  expect(
    (
      await deliver(route.id, raw.replace('Order 42', 'Order 43'), {
        'x-svc-timestamp': ts,
        'x-svc-signature': sign(signingSecret, ts, raw),
      })
    ).status,
  ).toBe(401);
  expect((await deliver(route.id, raw, { 'x-svc-timestamp': ts })).status).toBe(401);
  expect((await deliver(route.id, raw, {})).status).toBe(401);
  // A minute beyond the five-minute window each way, so the request's own latency cannot decide
  // the case (+301 s was accepted once the server's clock had passed the next second); the exact
  // edges are tested on an injected clock (test/unit/services/mailer/inboundSignature.test.ts).
  const staleTs = String(Math.floor(Date.now() / 1000) - 360);
  expect((await deliver(route.id, raw, { 'x-svc-timestamp': staleTs, 'x-svc-signature': sign(signingSecret, staleTs, raw) })).status).toBe(
    401,
  );
  const futureTs = String(Math.floor(Date.now() / 1000) + 360);
  expect(
    (await deliver(route.id, raw, { 'x-svc-timestamp': futureTs, 'x-svc-signature': sign(signingSecret, futureTs, raw) })).status,
  ).toBe(401);

  const ok = await deliver(route.id, raw, { 'x-svc-timestamp': ts, 'x-svc-signature': sign(signingSecret, ts, raw) });
  expect(ok.status).toBe(202);
  expect(ok.body).toMatchObject({ route: { id: route.id }, run: null, deduplicated: false, outbox: { status: 'pending' } });
  expect(ok.body.message.html).not.toContain('script');
  expect(ok.body.message.html).not.toContain('onclick');
  expect(ok.body.message.html).not.toContain('tracker.example');
  expect(ok.body.message.html).toContain('hi');

  const replay = await deliver(route.id, raw, { 'x-svc-timestamp': ts, 'x-svc-signature': sign(signingSecret, ts, raw) });
  expect(replay.status).toBe(409);

  const wrongTo = await signed(route.id, signingSecret, { ...body, externalMessageId: `x-${uniq()}`, to: 'someone-else@example.test' });
  expect(wrongTo.status).toBe(400);
  const missing = await signed(route.id, signingSecret, { from: 'a@example.test', subject: 's' });
  expect(missing.status).toBe(400);

  // 1 MiB is accepted by the size check, 1 MiB + 1 byte is refused; a declared length over the limit is refused unread.
  const pad = (size: number) => {
    const base = JSON.stringify({ ...body, externalMessageId: `big-${uniq()}`, text: '' });
    return base.replace('"text":""', `"text":"${'a'.repeat(size - base.length)}"`);
  };
  const exact = pad(1024 * 1024);
  expect(Buffer.byteLength(exact)).toBe(1024 * 1024);
  const tsBig = now();
  expect((await deliver(route.id, exact, { 'x-svc-timestamp': tsBig, 'x-svc-signature': sign(signingSecret, tsBig, exact) })).status).toBe(
    202,
  );
  const over = pad(1024 * 1024 + 1);
  expect(Buffer.byteLength(over)).toBe(1024 * 1024 + 1);
  expect((await deliver(route.id, over, { 'x-svc-timestamp': tsBig, 'x-svc-signature': sign(signingSecret, tsBig, over) })).status).toBe(
    413,
  );

  const runs = await runsOf(workflowId, 2);
  expect(runs).toHaveLength(2);
  expect(runs.every((r) => r.trigger === 'email')).toBe(true);
  const inputs = runs.map((r) => (r.input as { email: { subject: string; from: string } }).email);
  expect(inputs.map((e) => e.subject)).toEqual(['Order 42', 'Order 42']);
});

test('signed inbound on an unknown or disabled route is 404; a route without signing material is 409', async () => {
  const workflowId = await deployedWorkflow();
  const created = await createRoute({ address: `off-${uniq()}@example.test`, workflowId, enabled: false });
  const { route, signingSecret } = created.body;
  expect((await signed(route.id, signingSecret, { externalMessageId: 'a', from: 'a@example.test', subject: 's' })).status).toBe(404);
  expect((await signed('mrt_unknown', signingSecret, { externalMessageId: 'a', from: 'a@example.test', subject: 's' })).status).toBe(404);
  await http(app(), 'PATCH', `/api/v1/mailer/routes/${route.id}`, { token: stack.ws.token, body: { enabled: true } });
  await app().orm.em.fork().getConnection().execute('update mailer_routes set signing_secret_encrypted = null where id = ?', [route.id]);
  expect((await signed(route.id, signingSecret, { externalMessageId: 'a', from: 'a@example.test', subject: 's' })).status).toBe(409);
});

test('generic inbound (v1 and session path): Production route by address, deduplicated by Idempotency-Key, unknown address 404', async () => {
  const workflowId = await deployedWorkflow();
  const address = `generic-${uniq()}@example.test`;
  const created = await createRoute({ address, workflowId });
  const body = { to: ` ${address.toUpperCase()} `, from: 'bob@example.test', subject: 'Question', text: 'How?' };
  const delivery = key();
  const first = await http(app(), 'POST', '/api/v1/mailer/inbound', {
    token: stack.ws.token,
    body,
    headers: { 'idempotency-key': delivery },
  });
  expect(first.status).toBe(202);
  expect(first.body).toMatchObject({
    route: { id: created.body.route.id },
    run: null,
    deduplicated: false,
    message: { subject: 'Question', text: 'How?' },
  });
  const again = await http(app(), 'POST', '/api/v1/mailer/inbound', {
    token: stack.ws.token,
    body,
    headers: { 'idempotency-key': delivery },
  });
  expect(again.status).toBe(202);
  expect(again.body.deduplicated).toBe(true);
  expect(again.body.message.id).toBe(first.body.message.id);

  expect(
    (await http(app(), 'POST', '/api/v1/mailer/inbound', { token: stack.ws.token, body: { ...body, to: 'nobody@example.test' } })).status,
  ).toBe(404);
  expect((await http(app(), 'POST', '/api/v1/mailer/inbound', { token: other.token, body })).status).toBe(404);
  expect((await http(app(), 'POST', '/api/v1/mailer/inbound', { token: stack.ws.token, body: { to: address } })).status).toBe(400);

  const cookieRes = await http(app(), 'POST', '/api/auth/sign-in', {
    body: { email: stack.ws.ownerEmail, password: stack.ws.ownerPassword },
  });
  const cookie = cookieRes.headers.get('set-cookie')!.split(';')[0];
  const session = await http(app(), 'POST', '/api/mailer/inbound', {
    cookie,
    body: { ...body, subject: 'Via session' },
    headers: { origin: app().url },
  });
  expect(session.status).toBe(202);

  const runs = await runsOf(workflowId, 2);
  expect(runs).toHaveLength(2);
  expect(runs.every((r) => r.trigger === 'email')).toBe(true);
});

test('threading by externalThreadId, by In-Reply-To (raw MIME), by subject and participants; lists with cursors', async () => {
  const workflowId = await deployedWorkflow();
  const { route, signingSecret } = (await createRoute({ address: `threads-${uniq()}@example.test`, workflowId })).body;
  const send = (b: Record<string, unknown>) =>
    signed(route.id, signingSecret, { externalMessageId: `t-${uniq()}`, from: 'carol@example.test', ...b });

  const a1 = await send({ subject: 'Provider thread', externalThreadId: 'thr-1' });
  const a2 = await send({ subject: 'Different subject', externalThreadId: 'thr-1' });
  expect(a2.body.message.threadId).toBe(a1.body.message.threadId);

  const mime = (id: string, extra: string) =>
    `From: dave@example.test\r\nTo: ${route.address}\r\nSubject: MIME thread\r\nMessage-ID: <${id}@example.test>\r\n${extra}Content-Type: text/plain\r\n\r\nbody ${id}\r\n`;
  const m1 = await send({ subject: '', from: 'dave@example.test', raw: mime('root', '') });
  expect(m1.status).toBe(202);
  expect(m1.body.message.text).toContain('body root');
  const m2 = await send({
    subject: 'Totally unrelated',
    from: 'eve@example.test',
    raw: mime('child', 'In-Reply-To: <root@example.test>\r\n'),
  });
  expect(m2.text).toContain('"message"');
  expect(m2.body.message.threadId).toBe(m1.body.message.threadId);

  const s1 = await send({ subject: 'Invoice   March' });
  const s2 = await send({ subject: 'RE: Fwd: invoice march' });
  expect(s2.body.message.threadId).toBe(s1.body.message.threadId);
  const s3 = await send({ subject: 'Re: Invoice March', from: 'mallory@example.test' });
  expect(s3.body.message.threadId).not.toBe(s1.body.message.threadId);

  const thread = await http(app(), 'GET', `/api/v1/mailer/threads/${s1.body.message.threadId}`, { token: stack.ws.token });
  expect(thread.status).toBe(200);
  expect(thread.body.messages.map((m: { id: string }) => m.id)).toEqual([s1.body.message.id, s2.body.message.id]);
  expect((await http(app(), 'GET', `/api/v1/mailer/threads/${s1.body.message.threadId}`, { token: other.token })).status).toBe(404);

  const seen: string[] = [];
  let cursor: string | null = null;
  do {
    const page: any = await http(app(), 'GET', `/api/v1/mailer/threads?limit=2${cursor ? `&cursor=${cursor}` : ''}`, {
      token: stack.ws.token,
    });
    expect(page.status).toBe(200);
    expect(page.body.threads.length).toBeLessThanOrEqual(2);
    seen.push(...page.body.threads.map((t: { id: string }) => t.id));
    cursor = page.body.nextCursor;
  } while (cursor);
  expect(new Set(seen).size).toBe(seen.length);
  for (const id of [a1, m1, s1, s3].map((r) => r.body.message.threadId)) expect(seen).toContain(id);

  const msgs = await http(app(), 'GET', `/api/v1/mailer/messages?threadId=${m1.body.message.threadId}&limit=1`, { token: stack.ws.token });
  expect(msgs.body.messages).toHaveLength(1);
  expect(msgs.body.nextCursor).toEqual(expect.any(String));
  const next = await http(
    app(),
    'GET',
    `/api/v1/mailer/messages?threadId=${m1.body.message.threadId}&limit=1&cursor=${msgs.body.nextCursor}`,
    { token: stack.ws.token },
  );
  expect(next.body.messages).toHaveLength(1);
  expect(next.body.nextCursor).toBeNull();
  expect(new Set([msgs.body.messages[0].id, next.body.messages[0].id])).toEqual(new Set([m1.body.message.id, m2.body.message.id]));
  expect((await http(app(), 'GET', '/api/v1/mailer/messages?cursor=garbage!', { token: stack.ws.token })).status).toBe(400);
  expect(
    (await http(app(), 'GET', `/api/v1/mailer/messages?threadId=${m1.body.message.threadId}`, { token: other.token })).body.messages,
  ).toEqual([]);
});

test('signed inbound raw MIME: attachments become scanned Files of the workspace, referenced by attachmentFileIds; a replay stores none again', async () => {
  const workflowId = await deployedWorkflow();
  const { route, signingSecret } = (await createRoute({ address: `files-${uniq()}@example.test`, workflowId })).body;
  const boundary = 'b-0123';
  const raw =
    `From: frank@example.test\r\nTo: ${route.address}\r\nSubject: with a file\r\nMessage-ID: <f-${uniq()}@example.test>\r\nMIME-Version: 1.0\r\n` +
    `Content-Type: multipart/mixed; boundary="${boundary}"\r\n\r\n--${boundary}\r\nContent-Type: text/plain\r\n\r\nsee attached\r\n` +
    `--${boundary}\r\nContent-Type: text/csv; name="data.csv"\r\nContent-Disposition: attachment; filename="data.csv"\r\nContent-Transfer-Encoding: base64\r\n\r\n` +
    `${Buffer.from('a,b\n1,2\n').toString('base64')}\r\n--${boundary}--\r\n`;
  const body = { externalMessageId: `files-${uniq()}`, from: 'frank@example.test', subject: '', raw };
  const res = await signed(route.id, signingSecret, body);
  expect(res.status).toBe(202);
  expect(res.body.message.attachmentFileIds).toHaveLength(1);
  expect(res.body.message.providerMetadata.mime.attachments).toEqual([{ filename: 'data.csv', contentType: 'text/csv', size: 8 }]);
  const fileId = res.body.message.attachmentFileIds[0];
  const file = await http(app(), 'GET', `/api/v1/files/${fileId}`, { token: stack.ws.token });
  expect(file.body.data.file).toMatchObject({ id: fileId, name: 'data.csv', mimeType: 'text/csv', sizeBytes: 8, status: 'ready' });
  expect((await http(app(), 'GET', `/api/v1/files/${fileId}`, { token: other.token })).status).toBe(404);
  const before = (await http(app(), 'GET', '/api/v1/files?limit=100', { token: stack.ws.token })).body.data.files.length;
  expect((await signed(route.id, signingSecret, body)).status).toBe(409);
  expect((await http(app(), 'GET', '/api/v1/files?limit=100', { token: stack.ws.token })).body.data.files.length).toBe(before);
});
