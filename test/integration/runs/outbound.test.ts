// Not on the kit: it calls the outbound guard and the http node's activity directly against loopback servers (no app, worker or workspace).
import dns from 'node:dns';
import http from 'node:http';
import net from 'node:net';
import { startFakeDnsServer } from '../../fakes/dnsServer';
import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createNodeActivities } from '../../../activities/nodes';
import type { AddressInfo } from 'node:net';
import {
  assertOutboundUrlAllowed,
  blockedAddressReason,
  checkUrlWithoutDns,
  httpRequest,
  OutboundError,
} from '../../../services/kernel/outbound';

/**
 * Only loopback traffic: every server here listens on 127.0.0.1 and every request targets it.
 * Public addresses appear only as IP literals given to the guard, which never contacts them.
 */

interface SeenRequest {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

let server: http.Server;
let base: string;
let seen: SeenRequest[] = [];

function sendJson(res: http.ServerResponse, status: number, value: unknown) {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify(value));
}

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, body });
      const url = new URL(req.url!, 'http://127.0.0.1');
      const hop = url.pathname.match(/^\/hop\/(\d+)$/);
      if (url.pathname === '/echo') {
        return sendJson(res, 200, {
          method: req.method,
          query: Object.fromEntries(url.searchParams),
          headers: req.headers,
          body: body ? JSON.parse(body) : null,
        });
      }
      if (url.pathname === '/text') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        return res.end('plain text');
      }
      if (url.pathname === '/status') return sendJson(res, Number(url.searchParams.get('code')), { error: 'nope' });
      if (url.pathname === '/slow') return void setTimeout(() => sendJson(res, 200, { late: true }), 5000).unref();
      if (url.pathname === '/big') {
        res.writeHead(200, { 'content-type': 'text/plain', 'content-length': String(2 * 1024 * 1024) });
        return res.end('x'.repeat(2 * 1024 * 1024));
      }
      if (url.pathname === '/big-chunked') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        for (let i = 0; i < 64; i++) res.write('y'.repeat(32 * 1024));
        return res.end();
      }
      if (hop) {
        const n = Number(hop[1]);
        if (n === 0) return sendJson(res, 200, { arrived: true, method: req.method, body, auth: req.headers.authorization ?? null });
        res.writeHead(url.searchParams.get('status') ? Number(url.searchParams.get('status')) : 302, {
          location: `/hop/${n - 1}${url.search}`,
        });
        return res.end();
      }
      if (url.pathname === '/cross') {
        res.writeHead(307, { location: `${url.searchParams.get('to')}/hop/0` });
        return res.end();
      }
      if (url.pathname === '/to-secret') {
        res.writeHead(302, { location: '/secret' });
        return res.end();
      }
      if (url.pathname === '/secret') return sendJson(res, 200, { secret: 'internal' });
      res.writeHead(404);
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

beforeEach(() => {
  seen = [];
});

const allow = { allowPrivateNetworks: true };
const deny = { allowPrivateNetworks: false };

async function expectOutboundError(p: Promise<unknown>, code: string, message?: RegExp): Promise<OutboundError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(OutboundError);
  expect((err as OutboundError).code).toBe(code);
  if (message) expect((err as OutboundError).message).toMatch(message);
  return err as OutboundError;
}

describe('assertOutboundUrlAllowed', () => {
  test.each([
    ['http://127.0.0.1/', /loopback/],
    ['http://127.1.2.3:8080/x', /loopback/],
    ['http://localhost:3000/', /loopback/],
    ['http://api.localhost/', /loopback/],
    ['http://[::1]/', /loopback/],
    ['http://10.0.0.1/', /private/],
    ['http://172.16.5.4/', /private/],
    ['http://192.168.1.1/', /private/],
    ['http://169.254.169.254/latest/meta-data/', /link-local/],
    ['http://[::ffff:127.0.0.1]/', /loopback/],
    ['http://[::ffff:a9fe:a9fe]/', /link-local/],
    ['http://[64:ff9b::10.0.0.1]/', /private/],
    ['http://[2002:7f00:1::]/', /loopback/],
    ['http://0.0.0.0/', /unspecified/],
    ['http://[::]/', /unspecified/],
    ['http://100.64.0.1/', /carrier-grade NAT/],
    ['http://224.0.0.1/', /multicast/],
    ['http://[ff02::1]/', /multicast/],
    ['http://[fe80::1]/', /link-local/],
    ['http://[fd00::1]/', /unique-local/],
    ['http://2130706433/', /loopback/], // decimal spelling of 127.0.0.1
    ['http://0x7f.1/', /loopback/],
  ])('refuses %s', async (url, reason) => {
    await expectOutboundError(assertOutboundUrlAllowed(url, deny), 'refused', reason);
  });

  test.each([
    'file:///etc/passwd',
    'ftp://127.0.0.1/x',
    'ftp://93.184.216.34/x',
    'gopher://127.0.0.1:70/',
    'javascript:alert(1)',
    'data:text/plain,hi',
    'not a url',
  ])('refuses non-http(s) or invalid %s, even with private networks allowed', async (url) => {
    await expectOutboundError(assertOutboundUrlAllowed(url, allow), 'refused');
    await expectOutboundError(assertOutboundUrlAllowed(url, deny), 'refused');
  });

  test('refuses credentials embedded in the URL', async () => {
    await expectOutboundError(assertOutboundUrlAllowed('http://user:pass@127.0.0.1/', allow), 'refused', /credentials/);
  });

  test('accepts public IP literals (without contacting them) and anything when private networks are allowed', async () => {
    expect((await assertOutboundUrlAllowed('https://93.184.216.34/path?q=1', deny)).href).toBe('https://93.184.216.34/path?q=1');
    expect((await assertOutboundUrlAllowed('http://[2606:4700::1111]/', deny)).hostname).toBe('[2606:4700::1111]');
    expect((await assertOutboundUrlAllowed('http://[::ffff:8.8.8.8]/', deny)).protocol).toBe('http:');
    expect((await assertOutboundUrlAllowed('http://127.0.0.1:1/', allow)).port).toBe('1');
  });

  test('address classification', () => {
    expect(blockedAddressReason('8.8.8.8')).toBeUndefined();
    expect(blockedAddressReason('172.32.0.1')).toBeUndefined();
    expect(blockedAddressReason('172.31.255.255')).toBe('private');
    expect(blockedAddressReason('100.128.0.1')).toBeUndefined();
    expect(blockedAddressReason('::ffff:0:7f00:1')).toMatch(/loopback/);
    expect(blockedAddressReason('fe80::1%eth0')).toBe('link-local');
    expect(blockedAddressReason('garbage')).toBeDefined();
  });
});

describe('httpRequest', () => {
  test('refuses loopback before any request reaches the server when private networks are not allowed', async () => {
    await expectOutboundError(httpRequest({ method: 'GET', url: `${base}/echo` }, deny), 'refused', /loopback/);
    await expectOutboundError(httpRequest({ method: 'GET', url: `${base.replace('127.0.0.1', 'localhost')}/echo` }, deny), 'refused');
    expect(seen).toHaveLength(0);
  });

  test('GET JSON round trip with query merged into the URL', async () => {
    const res = await httpRequest(
      {
        method: 'get',
        url: `${base}/echo?keep=1&page=1`,
        query: { page: 2, tag: ['a', 'b'], skip: null, on: true },
        headers: { 'x-trace': 't1' },
      },
      allow,
    );
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/application\/json/);
    expect(res.body).toMatchObject({ method: 'GET', query: { keep: '1', page: '2', tag: 'b', on: 'true' }, headers: { 'x-trace': 't1' } });
    expect(seen[0].url).toBe('/echo?keep=1&page=2&tag=a&tag=b&on=true');
    expect(res.durationMs).toBeGreaterThanOrEqual(0);
  });

  test('POST sends object bodies as JSON with a content type; strings are sent as-is', async () => {
    const res = await httpRequest({ method: 'POST', url: `${base}/echo`, body: { name: 'x', n: [1, 2] } }, allow);
    expect(res.body).toMatchObject({ method: 'POST', body: { name: 'x', n: [1, 2] } });
    expect(seen[0].headers['content-type']).toBe('application/json');
    await httpRequest({ method: 'PUT', url: `${base}/echo`, body: '"raw"', headers: { 'content-type': 'application/json' } }, allow);
    expect(seen[1].body).toBe('"raw"');
  });

  test('text responses are returned as text; non-2xx statuses are returned, not thrown', async () => {
    expect((await httpRequest({ method: 'GET', url: `${base}/text` }, allow)).body).toBe('plain text');
    const res = await httpRequest({ method: 'GET', url: `${base}/status`, query: { code: 503 } }, allow);
    expect(res.status).toBe(503);
    expect(res.body).toEqual({ error: 'nope' });
    expect((await httpRequest({ method: 'GET', url: `${base}/missing` }, allow)).status).toBe(404);
  });

  test('times out as a typed error', async () => {
    // /slow answers 200 after 5 s: only the request's own 200 ms timeout can end it as a `timeout` error
    // (no wall-clock bound here: how long that took depends on the machine's load).
    await expectOutboundError(httpRequest({ method: 'GET', url: `${base}/slow`, timeoutMs: 200 }, allow), 'timeout', /200 ms/);
  });

  test('refuses bodies over the size cap, declared or streamed', async () => {
    await expectOutboundError(httpRequest({ method: 'GET', url: `${base}/big` }, { ...allow, maxResponseBytes: 1024 * 1024 }), 'too_large');
    await expectOutboundError(
      httpRequest({ method: 'GET', url: `${base}/big-chunked` }, { ...allow, maxResponseBytes: 1024 * 1024 }),
      'too_large',
    );
    const ok = await httpRequest({ method: 'GET', url: `${base}/big-chunked` }, allow);
    expect((ok.body as string).length).toBe(2 * 1024 * 1024);
  });

  test('follows a redirect chain (up to 5 hops)', async () => {
    const res = await httpRequest({ method: 'GET', url: `${base}/hop/5`, headers: { authorization: 'Bearer same-origin' } }, allow);
    expect(res.body).toEqual({ arrived: true, method: 'GET', body: '', auth: 'Bearer same-origin' });
    expect(seen.map((r) => r.url)).toEqual(['/hop/5', '/hop/4', '/hop/3', '/hop/2', '/hop/1', '/hop/0']);
    await expectOutboundError(httpRequest({ method: 'GET', url: `${base}/hop/6` }, allow), 'too_many_redirects');
  });

  test('303 turns a POST into a GET without body; 307 keeps method and body', async () => {
    const r303 = await httpRequest({ method: 'POST', url: `${base}/hop/1?status=303`, body: { a: 1 } }, allow);
    expect(r303.body).toMatchObject({ method: 'GET', body: '' });
    const r307 = await httpRequest({ method: 'POST', url: `${base}/hop/1?status=307`, body: { a: 1 } }, allow);
    expect(r307.body).toMatchObject({ method: 'POST', body: '{"a":1}' });
  });

  test('credentials are dropped when a redirect changes origin', async () => {
    const other = http.createServer((req, res) =>
      sendJson(res, 200, { auth: req.headers.authorization ?? null, cookie: req.headers.cookie ?? null }),
    );
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    try {
      const otherBase = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
      const res = await httpRequest(
        {
          method: 'GET',
          url: `${base}/cross`,
          query: { to: otherBase },
          headers: { authorization: 'Bearer secret', cookie: 'a=b', 'x-keep': '1' },
        },
        allow,
      );
      expect(res.body).toEqual({ auth: null, cookie: null });
      expect(seen[0].headers.authorization).toBe('Bearer secret');
    } finally {
      other.closeAllConnections();
      await new Promise((resolve) => other.close(resolve));
    }
  });

  test('every redirect target goes through the guard: a redirect to loopback is refused', async () => {
    // Stand-in for "public first hop": the seam lets hop 0 through and applies the real guard
    // (private networks not allowed) to every redirect target, as production does for all hops.
    const guard = (url: string, hop: number) => assertOutboundUrlAllowed(url, { allowPrivateNetworks: hop === 0 });
    await expectOutboundError(httpRequest({ method: 'GET', url: `${base}/to-secret` }, { ...deny, guard }), 'refused', /loopback/);
    expect(seen.map((r) => r.url)).toEqual(['/to-secret']);
  });

  test('a hostname is resolved once, at connect time, and a private answer is refused there', async () => {
    const port = new URL(base).port;
    const lookups: string[] = [];
    // A made-up name whose (injected) DNS answer is loopback: the production lookup and checks run.
    const resolveHost = async (hostname: string) => {
      lookups.push(hostname);
      return [{ address: '127.0.0.1', family: 4 }];
    };
    await expectOutboundError(
      httpRequest({ method: 'GET', url: `http://internal.example.test:${port}/secret` }, { ...deny, resolveHost }),
      'refused',
      /internal\.example\.test" resolves to 127\.0\.0\.1, which is a loopback address/,
    );
    expect(seen).toHaveLength(0);
    expect(lookups).toEqual(['internal.example.test']);
    // With private networks allowed, the socket connects to exactly the address the lookup returned.
    lookups.length = 0;
    const res = await httpRequest({ method: 'GET', url: `http://internal.example.test:${port}/echo` }, { ...allow, resolveHost });
    expect(res.status).toBe(200);
    expect(lookups).toEqual(['internal.example.test']);
  });

  test('DNS rebinding: a local resolver answering public first and loopback second never gets the loopback address used', async () => {
    const port = new URL(base).port;
    // Real DNS over UDP on loopback, TTL 0: the first answer is public, every later one loopback.
    const dnsServer = await startFakeDnsServer((name, n) =>
      name === 'rebind.example.test' ? (n === 0 ? '93.184.216.34' : '127.0.0.1') : undefined,
    );
    // The socket layer records where it would connect and stops any non-loopback connection
    // before a packet leaves the machine (tests talk to loopback only).
    const attempted: string[] = [];
    const realConnect = net.Socket.prototype.connect;
    const spy = jest.spyOn(net.Socket.prototype, 'connect').mockImplementation(function (this: net.Socket, ...args: unknown[]) {
      const holder = Array.isArray(args[0]) ? (args[0] as unknown[]) : args;
      const options = holder[0] as net.TcpSocketConnectOpts | undefined;
      if (options && typeof options === 'object' && typeof options.lookup === 'function') {
        const inner = options.lookup;
        holder[0] = {
          ...options,
          lookup: (
            host: string,
            opts: dns.LookupOptions,
            cb: (err: Error | null, address: string | dns.LookupAddress[], family?: number) => void,
          ) =>
            inner(host, opts, (err: Error | null, address: string | dns.LookupAddress[], family?: number) => {
              const list = err ? [] : Array.isArray(address) ? address.map((a) => a.address) : [address];
              attempted.push(...list);
              if (list.some((a) => a !== '127.0.0.1'))
                return cb(Object.assign(new Error(`test stopped a connection to ${list.join(', ')}`), { code: 'ENETUNREACH' }), []);
              cb(err, address, family);
            }),
        };
      }
      return realConnect.apply(this, args as Parameters<typeof realConnect>);
    });
    try {
      const url = `http://rebind.example.test:${port}/secret`;
      // First request: checked public, connected to exactly that (stopped here); one DNS query.
      await expectOutboundError(
        httpRequest({ method: 'GET', url, timeoutMs: 5000 }, { ...deny, resolveHost: dnsServer.resolve }),
        'network',
      );
      expect(dnsServer.queries).toEqual(['A rebind.example.test']);
      expect(attempted).toEqual(['93.184.216.34']);
      // Second request: the rebound answer is checked at connect time and refused.
      await expectOutboundError(
        httpRequest({ method: 'GET', url, timeoutMs: 5000 }, { ...deny, resolveHost: dnsServer.resolve }),
        'refused',
        /resolves to 127\.0\.0\.1, which is a loopback address/,
      );
      expect(dnsServer.queries).toEqual(['A rebind.example.test', 'A rebind.example.test']);
      expect(attempted).toEqual(['93.184.216.34']);
      expect(seen).toHaveLength(0);
    } finally {
      spy.mockRestore();
      await dnsServer.close();
    }
  });

  test('a redirect to a hostname that resolves to a private address is refused at connect time', async () => {
    const port = new URL(base).port;
    const resolveHost = async () => [{ address: '127.0.0.1', family: 4 }];
    // Stand-in for "public first hop" as above; later hops get production's pre-connect check,
    // which leaves the name to the connect-time lookup.
    const guard = async (url: string, hop: number) => checkUrlWithoutDns(url, hop === 0).parsed;
    await expectOutboundError(
      httpRequest(
        { method: 'GET', url: `${base}/cross?to=${encodeURIComponent(`http://rebound.example.test:${port}`)}` },
        { ...deny, guard, resolveHost },
      ),
      'refused',
      /rebound\.example\.test" resolves to 127\.0\.0\.1/,
    );
    expect(seen.map((r) => r.url)).toEqual([`/cross?to=${encodeURIComponent(`http://rebound.example.test:${port}`)}`]);
  });

  test('network failures and bad requests are typed', async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    await expectOutboundError(httpRequest({ method: 'GET', url: `http://127.0.0.1:${port}/` }, allow), 'network', /ECONNREFUSED/);
    await expectOutboundError(httpRequest({ method: 'GET', url: `${base}/echo`, body: { a: 1 } }, allow), 'invalid_request');
    await expectOutboundError(httpRequest({ method: 'GE T', url: `${base}/echo` }, allow), 'invalid_request');
    await expectOutboundError(
      httpRequest({ method: 'GET', url: `${base}/echo`, headers: { 'bad header': 'x' } }, allow),
      'invalid_request',
    );
    expect(seen).toHaveLength(0);
  });
});

describe('httpNode activity', () => {
  const env = new MockActivityEnvironment();
  const activities = (allowPrivateNetworks: boolean) => createNodeActivities({ orm: undefined as never, allowPrivateNetworks });

  async function failure(p: Promise<unknown>): Promise<ApplicationFailure> {
    const err = await p.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ApplicationFailure);
    return err as ApplicationFailure;
  }

  test('refusals are non-retryable OutboundRefused and never reach the server', async () => {
    const { httpNode } = activities(false);
    const err = await failure(env.run(httpNode, { method: 'GET', url: `${base}/echo` }));
    expect([err.type, err.nonRetryable]).toEqual(['OutboundRefused', true]);
    expect(seen).toHaveLength(0);
  });

  test('2xx is the output; 5xx and 429 are retryable failures, other 4xx final; timeouts and network errors retryable', async () => {
    const { httpNode } = activities(true);
    await expect(env.run(httpNode, { method: 'GET', url: `${base}/status`, query: { code: '200' } })).resolves.toMatchObject({
      output: { status: 200 },
      attempt: 1,
    });
    const server = await failure(env.run(httpNode, { method: 'GET', url: `${base}/status`, query: { code: '500' } }));
    expect([server.type, server.nonRetryable]).toEqual(['HttpStatus', false]);
    expect(server.details?.[0]).toMatchObject({ status: 500, body: { error: 'nope' } });
    const client = await failure(env.run(httpNode, { method: 'GET', url: `${base}/status`, query: { code: '404' } }));
    expect([client.type, client.nonRetryable]).toEqual(['HttpStatus', true]);
    const timeout = await failure(env.run(httpNode, { method: 'GET', url: `${base}/slow`, timeoutMs: 100 }));
    expect([timeout.type, timeout.nonRetryable]).toEqual(['HttpTimeout', false]);
    const network = await failure(env.run(httpNode, { method: 'GET', url: 'http://127.0.0.1:1/' }));
    expect([network.type, network.nonRetryable]).toEqual(['HttpNetworkError', false]);
  });
});
