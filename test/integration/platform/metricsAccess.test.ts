/**
 * Who may scrape /metrics (api/metrics.ts): by default loopback callers of the API port only
 * (a request relayed by a proxy is not one); with METRICS_TOKEN a bearer token; with
 * METRICS_PORT its own port, the API port answering 404.
 */
import { startApi, type StartedApi } from '../../../main/api';
import { loadConfig } from '../../../services/kernel/config';
import { createLogger } from '../../../services/kernel/logger';
import { testEnv } from '../../support/env';
import { TEST_SECRET_KEY } from '../../support/harness';
import { useTestStack } from '../../kit';

const TOKEN = 'metrics-token-0123456789abcdef';

const scrape = (base: string, headers: Record<string, string> = {}) => fetch(`${base}/metrics`, { headers });

describe('default: no token, no metrics port', () => {
  const stack = useTestStack({ worker: false });

  test('a loopback caller gets the metrics', async () => {
    const res = await scrape(stack.app.url);
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('svc_http_requests_total');
  });

  test.each([
    ['x-forwarded-for', '203.0.113.9'],
    ['forwarded', 'for=203.0.113.9'],
    ['x-real-ip', '203.0.113.9'],
  ])('a request relayed by a proxy (%s) gets 404', async (header, value) => {
    const res = await scrape(stack.app.url, { [header]: value });
    expect(res.status).toBe(404);
    expect(await res.text()).not.toContain('svc_');
  });
});

describe('METRICS_TOKEN', () => {
  const stack = useTestStack({ config: { metrics: loadConfig({ METRICS_TOKEN: TOKEN, HOST: '127.0.0.1' }).metrics }, worker: false });

  test('without the token, or with another, a scrape is 401; with it, 200 (even relayed by a proxy)', async () => {
    for (const headers of [
      {} as Record<string, string>,
      { authorization: 'Bearer wrong-token-0123456789abcdef' },
      { authorization: `Basic ${TOKEN}` },
      { authorization: `Bearer ${TOKEN}x` },
    ]) {
      const res = await scrape(stack.app.url, headers);
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe('Bearer realm="metrics"');
      expect(await res.text()).not.toContain('svc_');
    }
    const ok = await scrape(stack.app.url, { authorization: `Bearer ${TOKEN}`, 'x-forwarded-for': '203.0.113.9' });
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain('svc_http_requests_total');
  });

  test('a short token is refused at start', () => {
    expect(() => loadConfig({ METRICS_TOKEN: 'short' })).toThrow(/METRICS_TOKEN/);
  });
});

describe('METRICS_PORT', () => {
  let api: StartedApi;
  beforeAll(async () => {
    const base = loadConfig({
      LOG_LEVEL: 'silent',
      HOST: '127.0.0.1',
      PORT: '0',
      SECRET_KEY: TEST_SECRET_KEY,
      METRICS_PORT: '9',
      METRICS_HOST: '127.0.0.1',
    });
    // Port 0 (a free port) is not a valid METRICS_PORT value, only a test's choice.
    const config = { ...base, metrics: { ...base.metrics, port: 0 } };
    api = await startApi({
      config,
      databaseUrl: testEnv('databaseUrl'),
      temporalAddress: testEnv('temporalAddress'),
      logger: createLogger('silent'),
    });
  });
  afterAll(() => api?.stop());

  test('the metrics are on their own port only; the API port answers 404', async () => {
    expect(api.metricsUrl).toBeDefined();
    expect(api.metricsUrl).not.toBe(api.url);
    await fetch(`${api.url}/healthz`);
    const res = await scrape(api.metricsUrl!);
    expect(res.status).toBe(200);
    expect(await res.text()).toMatch(/svc_http_requests_total\{route="\/healthz",method="GET",status="200"\} [1-9]/);
    expect((await scrape(api.url)).status).toBe(404);
    expect((await fetch(`${api.metricsUrl}/healthz`)).status).toBe(404);
  });
});
