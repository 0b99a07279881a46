/**
 * Imported HTTP Request nodes of the external tool (issue 29) pointed at the cloud metadata
 * endpoint and at private, loopback and IPv4-in-IPv6 addresses, on a worker whose outbound guard
 * is on as in production: every run fails at the node saying the request was refused, nothing
 * reaches the loopback listener, and workspace B's probe keeps succeeding.
 */
import http from 'node:http';
import { listenOnLoopback } from '../support/fakeServer';
import { abuseStackPerFile, expectFailedNode, httpRequestExport, runImportedLive } from './kit';

const kit = abuseStackPerFile({ allowPrivateNetworks: false });

let hits = 0;
let listener: { url: string; close(): Promise<void> };
beforeAll(async () => {
  listener = await listenOnLoopback(
    http.createServer((_req, res) => {
      hits += 1;
      res.end('{"secret":"instance credentials"}');
    }),
  );
});
afterAll(() => listener?.close());

const targets = (): Array<[string, number, Record<string, unknown>]> => {
  const port = new URL(listener.url).port;
  return [
    ['the metadata endpoint (v1)', 1, { url: 'http://169.254.169.254/latest/meta-data/iam/security-credentials/' }],
    [
      'the metadata endpoint by a JSON-parameter POST (v1)',
      1,
      { url: 'http://169.254.169.254/computeMetadata/v1/', requestMethod: 'POST', jsonParameters: true, bodyParametersJson: '{"a":1}' },
    ],
    ['a private address (v2)', 2, { url: 'http://10.0.0.1/admin', options: {} }],
    ['the loopback listener (v4)', 4.2, { url: `http://127.0.0.1:${port}/`, options: {} }],
    ['localhost by an expression (v4)', 4.2, { url: `={{ "http://localhost:" + "${port}" + "/" }}`, options: {} }],
    [
      'loopback as IPv4 in IPv6 with never error and full response (v4)',
      4.2,
      { url: `http://[::ffff:127.0.0.1]:${port}/`, options: { response: { response: { neverError: true, fullResponse: true } } } },
    ],
    ['a decimal loopback address (v3)', 3, { url: `http://2130706433:${port}/`, options: {} }],
  ];
};

test('every imported request to an internal address is refused at the node; nothing is contacted; B keeps running', async () => {
  await kit.survives(async () => {
    for (const [label, version, parameters] of targets()) {
      const run = await runImportedLive(kit, kit.a, httpRequestExport(version, parameters, `guard-${label.replace(/\W+/g, '-')}`));
      expectFailedNode(run, /Outbound request refused|internal networks/);
    }
  });
  expect(hits).toBe(0);
});
