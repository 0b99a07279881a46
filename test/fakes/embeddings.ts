/**
 * A loopback OpenAI-compatible embeddings server (`POST /v1/embeddings`, the real request and
 * response shapes, `Authorization: Bearer`, error bodies `{ error: { message, type, code } }`)
 * with deterministic vectors: hashed features of each word's concept (synonyms share one, so
 * paraphrases land near each other as with a real model) plus character trigrams (so word forms
 * do too). Tests can delay, hold or fail requests.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHash } from 'node:crypto';
import { requestGate } from './providerServer';

/** Words that mean the same thing to the fake model; the retrieval benchmark writes paraphrases with them. */
export const SYNONYM_GROUPS: string[][] = [
  ['car', 'automobile', 'vehicle', 'motorcar'],
  ['fix', 'repair', 'mend', 'troubleshoot'],
  ['error', 'fault', 'failure', 'malfunction'],
  ['buy', 'purchase', 'acquire', 'procure'],
  ['begin', 'start', 'commence', 'launch'],
  ['end', 'finish', 'terminate', 'conclude'],
  ['quick', 'fast', 'rapid', 'speedy'],
  ['doctor', 'physician', 'clinician', 'medic'],
  ['house', 'home', 'dwelling', 'residence'],
  ['money', 'cash', 'funds', 'currency'],
  ['big', 'large', 'huge', 'enormous'],
  ['small', 'tiny', 'little', 'compact'],
  ['help', 'assist', 'support', 'aid'],
  ['password', 'passphrase', 'credentials', 'passcode'],
  ['delete', 'remove', 'erase', 'purge'],
  ['invoice', 'bill', 'statement', 'receipt'],
  ['employee', 'staff', 'worker', 'personnel'],
  ['travel', 'trip', 'journey', 'voyage'],
  ['refund', 'reimbursement', 'repayment', 'chargeback'],
  ['server', 'host', 'machine', 'node'],
  ['backup', 'snapshot', 'copy', 'archive'],
  ['schedule', 'calendar', 'timetable', 'agenda'],
  ['customer', 'client', 'buyer', 'patron'],
  ['salary', 'pay', 'wage', 'compensation'],
  ['holiday', 'vacation', 'leave', 'break'],
  ['shipping', 'delivery', 'dispatch', 'shipment'],
  ['discount', 'rebate', 'markdown', 'reduction'],
  ['contract', 'agreement', 'deal', 'covenant'],
  ['meeting', 'conference', 'gathering', 'session'],
  ['secure', 'protect', 'safeguard', 'shield'],
];

const STOPWORDS = new Set(
  'a an and are as at be by can do does for from how i in is it my of on or the to what when where which who why with you your we our this that'.split(
    ' ',
  ),
);

const concept = new Map<string, string>();
for (const group of SYNONYM_GROUPS) for (const word of group) concept.set(word, group[0]);

const stem = (w: string) => w.replace(/(ing|ed|es|s)$/, '');
const bucket = (feature: string, dims: number) => createHash('sha256').update(feature).digest().readUInt32BE(0) % dims;

export function fakeEmbedding(text: string, dims = 256): number[] {
  const v = new Array<number>(dims).fill(0);
  const words = (text.toLowerCase().match(/[a-z0-9]+/g) ?? []).filter((w) => !STOPWORDS.has(w));
  for (const w of words) {
    const c = concept.get(w) ?? concept.get(stem(w)) ?? stem(w);
    v[bucket(`c:${c}`, dims)] += 1;
    const padded = `#${w}#`;
    for (let i = 0; i + 3 <= padded.length; i++) v[bucket(`t:${padded.slice(i, i + 3)}`, dims)] += 0.25;
  }
  const norm = Math.sqrt(v.reduce((s, x) => s + x * x, 0)) || 1;
  return v.map((x) => x / norm);
}

export interface FakeEmbeddingsServer {
  /** Base URL to configure as EMBEDDINGS_BASE_URL (ends in /v1). */
  url: string;
  apiKey: string;
  /** Inputs embedded per request, in order. */
  requests: Array<{ model: string; inputs: string[] }>;
  /** Answers the next `n` requests with this status (429 carries Retry-After: 0). */
  failNext(n: number, status: number): void;
  /** Holds every request until `release()`; resolves `held` when one arrives. */
  hold(): { held: Promise<void>; release(): void };
  close(): Promise<void>;
}

export async function startFakeEmbeddings(opts: { dims?: number; apiKey?: string } = {}): Promise<FakeEmbeddingsServer> {
  const dims = opts.dims ?? 256;
  const apiKey = opts.apiKey ?? 'sk-fake-embeddings';
  const requests: FakeEmbeddingsServer['requests'] = [];
  let failures: { left: number; status: number } = { left: 0, status: 500 };
  const gate = requestGate();

  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', async () => {
      const send = (status: number, payload: unknown, headers: Record<string, string> = {}) => {
        res.writeHead(status, { 'content-type': 'application/json', ...headers });
        res.end(JSON.stringify(payload));
      };
      if (req.method !== 'POST' || req.url !== '/v1/embeddings')
        return send(404, { error: { message: `Unknown route ${req.method} ${req.url}`, type: 'invalid_request_error', code: null } });
      if (req.headers.authorization !== `Bearer ${apiKey}`)
        return send(401, { error: { message: 'Incorrect API key provided.', type: 'invalid_request_error', code: 'invalid_api_key' } });
      await gate.pass();
      if (failures.left > 0) {
        failures.left--;
        return send(
          failures.status,
          {
            error: {
              message: failures.status === 429 ? 'Rate limit reached' : 'The server had an error',
              type: failures.status === 429 ? 'requests' : 'server_error',
              code: null,
            },
          },
          failures.status === 429 ? { 'retry-after': '0' } : {},
        );
      }
      let parsed: { model?: string; input?: string | string[] };
      try {
        parsed = JSON.parse(body);
      } catch {
        return send(400, {
          error: { message: 'We could not parse the JSON body of your request.', type: 'invalid_request_error', code: null },
        });
      }
      const inputs = typeof parsed.input === 'string' ? [parsed.input] : Array.isArray(parsed.input) ? parsed.input : null;
      if (!parsed.model || !inputs || inputs.length === 0)
        return send(400, { error: { message: "'input' and 'model' are required", type: 'invalid_request_error', code: null } });
      requests.push({ model: parsed.model, inputs });
      send(200, {
        object: 'list',
        data: inputs.map((text, index) => ({ object: 'embedding', index, embedding: fakeEmbedding(text, dims) })),
        model: parsed.model,
        usage: { prompt_tokens: inputs.join(' ').split(/\s+/).length, total_tokens: inputs.join(' ').split(/\s+/).length },
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    apiKey,
    requests,
    failNext: (n, status) => (failures = { left: n, status }),
    hold: () => gate.hold(),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
