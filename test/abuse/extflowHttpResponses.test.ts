/**
 * Imported HTTP Request nodes of the external tool (issue 29) against hostile answers from a
 * loopback service: a huge body (declared, and streamed without a length), an answer that never
 * comes, one that trickles for ever, and text with NUL bytes and lone surrogates. Each run ends
 * with a clear node failure or well-formed output, A's runs are not left running, and
 * workspace B's probe keeps succeeding meanwhile.
 */
import http from 'node:http';
import { listenOnLoopback } from '../support/fakeServer';
import { abuseStackPerFile, expectFailedNode, expectFailedOrSucceeded, expectWellFormed, httpRequestExport, runImportedLive } from './kit';

const kit = abuseStackPerFile();

const MB = 1024 * 1024;
let service: { url: string; close(): Promise<void> };
const open = new Set<http.ServerResponse>();
beforeAll(async () => {
  service = await listenOnLoopback(
    http.createServer((req, res) => {
      open.add(res);
      res.on('close', () => open.delete(res));
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      if (path === '/huge') {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(50 * MB) });
        return res.end(Buffer.alloc(50 * MB, 0x20));
      }
      if (path === '/huge-stream') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        const chunk = Buffer.alloc(MB, 0x61);
        let sent = 0;
        const more = () => {
          while (sent < 64 && !res.destroyed) {
            sent += 1;
            if (!res.write(chunk)) return void res.once('drain', more);
          }
          res.end();
        };
        return more();
      }
      if (path === '/never') return undefined; // the answer never comes
      if (path === '/trickle') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        const timer = setInterval(() => res.write('.'), 100);
        res.on('close', () => clearInterval(timer));
        return undefined;
      }
      if (path === '/unstorable') {
        res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
        return res.end('a\u0000b \ud800 c');
      }
      return res.writeHead(404).end();
    }),
  );
});
afterAll(async () => {
  for (const res of open) res.destroy();
  await service?.close();
});

test('a 50 MB answer, declared or streamed, fails the node on the size limit', async () => {
  await kit.survives(async () => {
    const declared = await runImportedLive(kit, kit.a, httpRequestExport(1, { url: `${service.url}/huge` }, 'huge-declared'));
    expectFailedNode(declared, /larger than the limit/);
    const streamed = await runImportedLive(
      kit,
      kit.a,
      httpRequestExport(
        4.2,
        { url: `${service.url}/huge-stream`, options: { response: { response: { responseFormat: 'text' } } } },
        'huge-stream',
      ),
    );
    expectFailedNode(streamed, /larger than the limit/);
  });
});

test('an answer that never comes and one that trickles fail on the node timeout', async () => {
  await kit.survives(async () => {
    const never = await runImportedLive(
      kit,
      kit.a,
      httpRequestExport(1, { url: `${service.url}/never`, options: { timeout: 1500 } }, 'never'),
    );
    expectFailedNode(never, /timed out/);
    const trickle = await runImportedLive(
      kit,
      kit.a,
      httpRequestExport(
        4.2,
        { url: `${service.url}/trickle`, options: { timeout: 1500, response: { response: { neverError: true } } } },
        'trickle',
      ),
    );
    expectFailedNode(trickle, /timed out/);
  });
});

test('text with NUL bytes and lone surrogates ends the run with well-formed output or a clear failure', async () => {
  await kit.survives(async () => {
    const ended = await runImportedLive(
      kit,
      kit.a,
      httpRequestExport(
        4.2,
        { url: `${service.url}/unstorable`, options: { response: { response: { responseFormat: 'text' } } } },
        'unstorable',
      ),
    );
    expectFailedOrSucceeded(ended, /./, () => true);
    expectWellFormed(ended);
  });
});
