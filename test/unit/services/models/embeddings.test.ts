import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createEmbeddingsClient, type EmbeddingsClient } from '../../../../services/models/embeddings';

/** Answers every embeddings request with `data` as given: an endpoint that drops or misnumbers vectors. */
let data: Array<{ index: number; embedding: number[] }> = [];
let server: http.Server;
let client: EmbeddingsClient;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.setHeader('content-type', 'application/json');
      const body = { object: 'list', model: 'm', usage: { prompt_tokens: 1, total_tokens: 1 } };
      res.end(JSON.stringify({ ...body, data: data.map((d) => ({ object: 'embedding', ...d })) }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const config = { baseUrl: `http://127.0.0.1:${port}/v1`, model: 'm', apiKey: 'k', timeoutMs: 5_000, maxRetries: 0 };
  client = createEmbeddingsClient(config, { allowPrivateNetworks: true })!;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));

test('vectors are placed by their index, normalised', async () => {
  data = [
    { index: 1, embedding: [0, 2] },
    { index: 0, embedding: [3, 4] },
  ];
  expect(await client.embed(['a', 'b'])).toEqual([
    [0.6, 0.8],
    [0, 1],
  ]);
});

test('fewer vectors than inputs is refused, not answered with a hole', async () => {
  data = [{ index: 0, embedding: [1, 0] }];
  await expect(client.embed(['a', 'b'])).rejects.toThrow('The embeddings endpoint returned 1 vectors for 2 inputs.');
});

test('a vector numbered past the inputs is refused', async () => {
  data = [
    { index: 0, embedding: [1, 0] },
    { index: 5, embedding: [0, 1] },
  ];
  await expect(client.embed(['a', 'b'])).rejects.toThrow('returned 2 vectors for 2 inputs');
});
