/**
 * Temporal payload encryption (issue 10) over real HTTP, PostgreSQL and Temporal:
 * - node inputs and outputs, approval comments and resume payloads are ciphertext in Temporal's
 *   history (read with a client that has no codec); the same history read through the
 *   deployment's codec shows them, so the search would find them if they were there;
 * - the codec endpoint (Temporal's codec server protocol) decrypts for operators only:
 *   OPERATOR_TOKEN or a session of an OPERATOR_EMAILS user; workspace keys, other sessions and
 *   anonymous callers get 401; without operator configuration 503; CORS for the Web UI's
 *   origins (TEMPORAL_UI_ORIGINS: localhost and 127.0.0.1 on the UI port), on refusals too.
 */
import { Client } from '@temporalio/client';
import type { Payload } from '@temporalio/common';
import { provisionWorkspace } from '../../../services/accounts/bootstrap';
import { randomToken } from '../../../services/kernel/ids';
import { ENCRYPTED_ENCODING, payloadToJson } from '../../../services/kernel/payloadCodec';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { ensureTemporalCli } from '../../../scripts/lib/temporalCli';
import { startTestApp, testPayloadCodec, waitForRun } from '../../support/harness';
import { testEnv } from '../../support/env';
import { http, signInCookie, useTestStack, type CreatedWorkflow, type QueuedReceipt, type TestApp } from '../../kit';

const execFileAsync = promisify(execFile);

/** The codec's answer: the payloads, or on a refusal its `error`. */
type CodecAnswer = { payloads: Array<{ data: string; metadata: Record<string, string> }>; error?: string };

const OPERATOR_TOKEN = `op-${'t'.repeat(40)}`;
const OPERATOR_EMAIL = `operator-${randomToken(6).toLowerCase()}@example.test`;
const PASSWORD = 'correct horse battery staple';
const INPUT_MARKER = 'INPUT-MARKER-7f3c9a';
const OUTPUT_MARKER = 'OUTPUT-MARKER-2b81de';
const COMMENT_MARKER = 'COMMENT-MARKER-91c0aa';
const RESUME_MARKER = 'RESUME-MARKER-4d2e11';
const UI_URL = 'http://127.0.0.1:8233';

let runId: string;
let operatorCookie: string;

/**
 * Every payload in a history (or any proto message tree). Search attributes are stored as
 * indexable plain values by design, and a marker's details other than `result` are the SDK's own
 * bookkeeping (local activity sequence, attempt, type and times; patch ids), written without the codec; both
 * are left out of the encoding check but not of the plaintext search.
 */
function payloadsIn(node: unknown, out: Payload[] = [], path = ''): Payload[] {
  if (!node || typeof node !== 'object' || node instanceof Uint8Array) return out;
  for (const [key, value] of Object.entries(node)) {
    const at = `${path}.${key}`;
    if (key === 'searchAttributes' || key === 'upsertWorkflowSearchAttributesEventAttributes') continue;
    if (key === 'payloads' && Array.isArray(value)) out.push(...(value as Payload[]));
    else if (value && typeof value === 'object' && 'data' in value && 'metadata' in value && (value as Payload).data instanceof Uint8Array)
      out.push(value as Payload);
    else if (!isSdkBookkeeping(value, at)) payloadsIn(value, out, at);
  }
  return out;
}

const isSdkBookkeeping = (node: unknown, path: string) =>
  /markerRecordedEventAttributes\.details\.(?!result$)[\w-]+$/.test(path) && node !== null;

/** All payloads, SDK bookkeeping included, for the plaintext search. */
function everyPayload(node: unknown, out: Payload[] = []): Payload[] {
  if (!node || typeof node !== 'object' || node instanceof Uint8Array) return out;
  for (const [key, value] of Object.entries(node)) {
    if (key === 'payloads' && Array.isArray(value)) out.push(...(value as Payload[]));
    else everyPayload(value, out);
  }
  return out;
}

const payloadText = (payloads: Payload[]) => payloads.map((p) => Buffer.from(p.data ?? new Uint8Array()).toString('latin1')).join('\n');
const encodingOf = (p: Payload) => Buffer.from(p.metadata?.encoding ?? new Uint8Array()).toString('utf8');

const stack = useTestStack(async () => ({
  config: {
    operatorToken: OPERATOR_TOKEN,
    operatorEmails: [OPERATOR_EMAIL],
    temporal: { ...(await baseTemporalConfig()), uiUrl: UI_URL },
  },
}));
beforeAll(async () => {
  await provisionWorkspace(stack.app.orm.em.fork(), { name: 'Operators', ownerEmail: OPERATOR_EMAIL, ownerPassword: PASSWORD });
  operatorCookie = await signInCookie(stack.app, OPERATOR_EMAIL, PASSWORD);

  const graph = {
    nodes: [
      { id: 'start', type: 'start', config: {} },
      { id: 'shape', type: 'transform', config: { expression: `{ "echo": secret, "made": "${OUTPUT_MARKER}" }` } },
      { id: 'approve', type: 'approval', config: {} },
      { id: 'wait', type: 'event', config: {} },
    ],
    edges: [
      { id: 'e1', source: 'start', target: 'shape' },
      { id: 'e2', source: 'shape', target: 'approve' },
      { id: 'e3', source: 'approve', target: 'wait', sourceHandle: 'approved' },
    ],
  };
  const created = await http<CreatedWorkflow>(stack.app, 'POST', '/api/v1/workflows', {
    token: stack.ws.token,
    body: { name: 'Secret handling', ...graph },
  });
  expect(created.status).toBe(201);
  const wf = created.body.workflow.id;
  expect((await http(stack.app, 'POST', `/api/v1/workflows/${wf}/deploy`, { token: stack.ws.token })).status).toBe(200);
  const started = await http<QueuedReceipt>(stack.app, 'POST', `/api/v1/workflows/${wf}/execute`, {
    token: stack.ws.token,
    body: { input: { secret: INPUT_MARKER } },
  });
  expect(started.status).toBe(202);
  runId = started.body.run.id;

  const waitingOn = (kind: string) => (r: { waits?: Array<{ kind: string }> }) => (r.waits ?? []).some((w) => w.kind === kind);
  await waitForRun(stack.app, stack.ws.token, runId, waitingOn('approval'));
  const decided = await http(stack.app, 'POST', `/api/runs/${runId}/approval`, {
    token: stack.ws.token,
    body: { decision: 'approved', comment: COMMENT_MARKER },
  });
  expect(decided.status).toBe(200);
  const event = (await waitForRun(stack.app, stack.ws.token, runId, waitingOn('event'))).waits.find(
    (w: { kind: string }) => w.kind === 'event',
  );
  const resumed = await http(stack.app, 'POST', new URL(event.resumeUrl).pathname, { body: { note: RESUME_MARKER } });
  expect(resumed.status).toBeLessThan(300);
  expect((await waitForRun(stack.app, stack.ws.token, runId)).status).toBe('succeeded');
});

async function baseTemporalConfig() {
  const { loadConfig } = await import('../../../services/kernel/config');
  return loadConfig({}).temporal;
}

describe('Temporal history', () => {
  test('holds only ciphertext: no input, output, approval comment or resume payload in plain text', async () => {
    const plainClient = new Client({ connection: stack.app.deps.temporal.connection });
    const history = await plainClient.workflow.getHandle(runId).fetchHistory();
    const payloads = payloadsIn(history);
    expect(payloads.length).toBeGreaterThan(5);
    expect(payloads.filter((p) => encodingOf(p) !== ENCRYPTED_ENCODING)).toEqual([]);
    const raw = payloadText(everyPayload(history));
    for (const marker of [INPUT_MARKER, OUTPUT_MARKER, COMMENT_MARKER, RESUME_MARKER]) expect(raw).not.toContain(marker);

    // The same payloads through the deployment's codec: the search above would have found them.
    const decoded = payloadText(await testPayloadCodec.decode(payloads));
    for (const marker of [INPUT_MARKER, OUTPUT_MARKER, COMMENT_MARKER, RESUME_MARKER]) expect(decoded).toContain(marker);
  });
});

describe('codec endpoint', () => {
  let encrypted: Payload[];
  beforeAll(async () => {
    const history = await new Client({ connection: stack.app.deps.temporal.connection }).workflow.getHandle(runId).fetchHistory();
    encrypted = payloadsIn(history).slice(0, 3);
  });
  const body = () => ({ payloads: encrypted.map(payloadToJson) });

  test('decodes for the operator token and for an operator session', async () => {
    for (const auth of [{ token: OPERATOR_TOKEN }, { cookie: operatorCookie }]) {
      const res = await http<CodecAnswer>(stack.app, 'POST', '/api/temporal-codec/decode', {
        ...auth,
        body: body(),
        headers: { 'x-namespace': 'default', origin: UI_URL },
      });
      expect(res.status).toBe(200);
      expect(res.body.payloads).toHaveLength(encrypted.length);
      const texts = res.body.payloads.map((p: { data: string; metadata: Record<string, string> }) =>
        Buffer.from(p.metadata.encoding, 'base64').toString(),
      );
      expect(texts.filter((t: string) => t === ENCRYPTED_ENCODING)).toEqual([]);
      expect(res.body.payloads.map((p: { data: string }) => Buffer.from(p.data, 'base64').toString()).join('')).toContain(INPUT_MARKER);
      expect(res.headers.get('access-control-allow-origin')).toBe(UI_URL);
    }
  });

  test('refuses workspace keys, non-operator sessions, a wrong token and anonymous callers', async () => {
    const ownerCookie = await signInCookie(stack.app, stack.ws.ownerEmail, stack.ws.ownerPassword);
    for (const auth of [{ token: stack.ws.token }, { cookie: ownerCookie }, { token: `${OPERATOR_TOKEN}x` }, {}]) {
      const res = await http<CodecAnswer>(stack.app, 'POST', '/api/temporal-codec/decode', {
        ...auth,
        body: body(),
        headers: { origin: UI_URL },
      });
      expect(res.status).toBe(401);
      // A clear JSON refusal the UI may read (CORS on errors too), not an opaque network error.
      expect(res.body.error).toBe('Operator credentials are required.');
      expect(res.headers.get('access-control-allow-origin')).toBe(UI_URL);
      expect(res.text).not.toContain(Buffer.from(INPUT_MARKER).toString('base64').slice(0, 12));
    }
  });

  test('encode then decode round-trips; a tampered payload comes back as stored, not decrypted', async () => {
    const plain = {
      metadata: { encoding: Buffer.from('json/plain').toString('base64') },
      data: Buffer.from('{"hello":"operator"}').toString('base64'),
    };
    const enc = await http<CodecAnswer>(stack.app, 'POST', '/api/temporal-codec/encode', {
      token: OPERATOR_TOKEN,
      body: { payloads: [plain] },
    });
    expect(enc.status).toBe(200);
    expect(Buffer.from(enc.body.payloads[0].metadata.encoding, 'base64').toString()).toBe(ENCRYPTED_ENCODING);
    const dec = await http<CodecAnswer>(stack.app, 'POST', '/api/temporal-codec/decode', { token: OPERATOR_TOKEN, body: enc.body });
    expect(dec.body.payloads[0]).toEqual(plain);

    const data = Buffer.from(enc.body.payloads[0].data, 'base64');
    data[data.length - 20] ^= 1;
    const tampered = { ...enc.body.payloads[0], data: data.toString('base64') };
    const res = await http<CodecAnswer>(stack.app, 'POST', '/api/temporal-codec/decode', {
      token: OPERATOR_TOKEN,
      body: { payloads: [tampered] },
    });
    expect(res.status).toBe(200);
    expect(res.body.payloads[0]).toEqual(tampered);
  });

  test('answers the Web UI preflight for its origin', async () => {
    const res = await fetch(`${stack.app.url}/api/temporal-codec/decode`, {
      method: 'OPTIONS',
      headers: { origin: UI_URL, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type,x-namespace' },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe(UI_URL);
    expect(res.headers.get('access-control-allow-credentials')).toBe('true');
    expect(res.headers.get('access-control-allow-headers')).toContain('x-namespace');
  });

  test("Temporal's CLI decodes with the operator token, and prints why when refused (not a deadline)", async () => {
    const binary = await ensureTemporalCli();
    const show = async (...extra: string[]) => {
      const args = [
        'workflow',
        'show',
        '-w',
        runId,
        '--address',
        testEnv('temporalAddress'),
        '--codec-endpoint',
        `${stack.app.url}/api/temporal-codec`,
      ];
      const { stdout, stderr } = await execFileAsync(binary, [...args, ...extra], { timeout: 60_000 }).catch(
        (err: { stdout?: string; stderr?: string }) => ({ stdout: err.stdout ?? '', stderr: err.stderr ?? '' }),
      );
      return stdout + stderr;
    };
    expect(await show('--codec-auth', `Bearer ${OPERATOR_TOKEN}`)).toContain(RESUME_MARKER);
    const refused = await show('--codec-auth', `Bearer ${stack.ws.token}`);
    expect(refused).toContain('codecRefused');
    expect(refused).toContain('Operator credentials are required.');
    expect(refused).not.toContain('deadline');
    expect(refused).not.toContain(RESUME_MARKER);
  });

  test("answers the UI's origins, localhost and 127.0.0.1 alike, and no other page", async () => {
    const preflight = (origin: string) =>
      fetch(`${stack.app.url}/api/temporal-codec/decode`, {
        method: 'OPTIONS',
        headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type,x-namespace' },
      });
    for (const origin of ['http://localhost:8233', 'http://127.0.0.1:8233']) {
      expect((await preflight(origin)).headers.get('access-control-allow-origin')).toBe(origin);
    }
    for (const origin of ['http://evil.example', 'http://localhost:9999']) {
      const res = await preflight(origin);
      expect(res.headers.get('access-control-allow-origin')).toBeNull();
      expect(res.headers.get('vary')).toMatch(/origin/i);
    }
    // A malformed body is refused with CORS headers as well.
    const malformed = await http<CodecAnswer>(stack.app, 'POST', '/api/temporal-codec/decode', {
      token: OPERATOR_TOKEN,
      body: { nope: true },
      headers: { origin: 'http://localhost:8233' },
    });
    expect(malformed.status).toBe(400);
    expect(malformed.headers.get('access-control-allow-origin')).toBe('http://localhost:8233');
  });

  test('is unavailable (503) on a deployment without operator access configured', async () => {
    let bare: TestApp | undefined;
    try {
      bare = await startTestApp({ operatorToken: undefined, operatorEmails: [] });
      const res = await http<CodecAnswer>(bare, 'POST', '/api/temporal-codec/decode', {
        token: OPERATOR_TOKEN,
        body: body(),
        headers: { origin: UI_URL },
      });
      expect(res.status).toBe(503);
      expect(res.body.error).toMatch(/OPERATOR_TOKEN/);
      expect(res.headers.get('access-control-allow-origin')).toBe(UI_URL);
    } finally {
      await bare?.close();
    }
  });
});
