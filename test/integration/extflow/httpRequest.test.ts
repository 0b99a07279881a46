/**
 * The external tool's HTTP Request node at every version found in public exports (v1, v2, v3,
 * v4.x): each export is imported over HTTP, run live through Temporal against a loopback
 * service, and its output compared with the item the external tool documents for that version
 * and those options (the body; `{ data }` for text; `{ body, headers, statusCode,
 * statusMessage }` with "full response"; error answers as data with "never error"). Credentials
 * of the generic types come from our store, bound to the service's host.
 */
import { BEARER_TOKEN, CUSTOM_KEY, QUERY_KEY, useExtflowService } from '../../fakes/extflowService';
import { useTestStack, waitRun, type CreatedWorkflow } from '../../kit';

const fake = useExtflowService();
const stack = useTestStack();

let seq = 0;
/** A one-node export: a manual trigger, then the HTTP Request node of `version` with `parameters`. */
function exportOf(version: number, parameters: Record<string, unknown>, credentials?: Record<string, { id: string; name: string }>) {
  seq += 1;
  return JSON.stringify({
    id: `http-v${version}-${seq}`,
    name: `HTTP v${version} #${seq}`,
    nodes: [
      { name: 'Start', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1, parameters: {}, position: [0, 0] },
      {
        name: 'Call',
        type: 'n8n-nodes-base.httpRequest',
        typeVersion: version,
        parameters,
        position: [200, 0],
        ...(credentials ? { credentials } : {}),
      },
    ],
    connections: { Start: { main: [[{ node: 'Call', type: 'main', index: 0 }]] } },
  });
}

async function importExport(text: string): Promise<CreatedWorkflow> {
  const res = await stack.api.workflows.create({ importJson: text });
  expect({ status: res.status, body: res.status === 201 ? null : res.body }).toEqual({ status: 201, body: null });
  return res.body;
}

async function runDraft(created: CreatedWorkflow, input: unknown = {}) {
  const res = await stack.api.workflows.execute(created.workflow.id, input, {
    target: 'candidate',
    dryRun: false,
    confirm: true,
    expectedVersionId: created.workflow.candidateVersionId,
  });
  expect(res.status).toBe(202);
  return waitRun(stack, res.body.run.id, { until: (r) => ['succeeded', 'failed', 'canceled'].includes(r.status), timeoutMs: 60_000 });
}

/** Imports, expects it ready, runs it, expects success; returns the run's output. */
async function readyAndRun(text: string, input: unknown = {}) {
  const created = await importExport(text);
  const conversion = created.importReadiness?.conversion;
  expect({ ready: conversion?.ready, unsupported: conversion?.unsupported, issues: conversion?.readinessIssues }).toEqual({
    ready: true,
    unsupported: [],
    issues: [],
  });
  const run = await runDraft(created, input);
  expect({ status: run.status, error: run.error ?? null }).toEqual({ status: 'succeeded', error: null });
  return run.output as Record<string, unknown>;
}

async function credential(name: string, type: string, value: unknown) {
  const res = await stack.api.post('/api/v1/credentials', { name, type, value, allowedHosts: [new URL(fake.url).host] });
  expect([200, 201]).toContain(res.status);
}

describe('v1 (requestMethod, parameters as pairs or JSON, responseFormat json/string)', () => {
  test('GET with query and header pairs: the JSON body is the item; header names go lower case', async () => {
    const out = await readyAndRun(
      exportOf(1, {
        url: `${fake.url}/echo`,
        queryParametersUi: { parameter: [{ name: 'q', value: '={{ $json.term }}' }] },
        headerParametersUi: { parameter: [{ name: 'X-Trace', value: 'abc' }] },
        options: {},
      }),
      { term: 'ada' },
    );
    expect(out).toMatchObject({
      method: 'GET',
      query: { q: 'ada' },
      headers: { 'x-trace': 'abc', accept: 'application/json,text/*;q=0.99' },
    });
  }, 90_000);

  test('POST form-urlencoded pairs, and "string" wraps the answer in { data }', async () => {
    const out = await readyAndRun(
      exportOf(1, {
        url: `${fake.url}/inspect`,
        requestMethod: 'POST',
        responseFormat: 'string',
        bodyParametersUi: {
          parameter: [
            { name: 'name', value: '={{ $json.name }}' },
            { name: 'lang', value: 'en gb' },
          ],
        },
        options: { bodyContentType: 'form-urlencoded' },
      }),
      { name: 'Ada L' },
    );
    // Its HTTP client parsed JSON answers before wrapping them.
    expect(out).toMatchObject({ data: { method: 'POST', raw: 'name=Ada%20L&lang=en%20gb' } });
    expect((out.data as { headers: Record<string, string> }).headers['content-type']).toBe('application/x-www-form-urlencoded');
  }, 90_000);

  test('JSON parameters with {{ }} holes become the JSON body', async () => {
    const out = await readyAndRun(
      exportOf(1, {
        url: `${fake.url}/inspect`,
        requestMethod: 'POST',
        jsonParameters: true,
        bodyParametersJson: '={ "user": "{{ $json.name }}", "n": {{ $json.n }} }',
        options: {},
      }),
      { name: 'Ada', n: 3 },
    );
    expect(JSON.parse(String(out.raw))).toEqual({ user: 'Ada', n: 3 });
  }, 90_000);

  test('query auth sends the credential as a query parameter, from the store', async () => {
    await credential('Query key v1', 'http_query', { paramName: 'api_key', paramValue: QUERY_KEY });
    const text = exportOf(
      1,
      {
        url: `${fake.url}/query-key`,
        authentication: 'queryAuth',
        queryParametersUi: { parameter: [{ name: 'q', value: 'x' }] },
      },
      { httpQueryAuth: { id: '9', name: 'Query key v1' } },
    );
    const created = await importExport(text);
    expect(created.importReadiness?.conversion?.credentials).toEqual([
      { alias: 'Query key v1', extflowType: 'httpQueryAuth', type: 'http_query', nodes: ['Call'] },
    ]);
    const out = await readyAndRun(text);
    expect(out).toEqual({ ok: true, others: 'x' });
  }, 90_000);

  test('full response with "ignore response code": a 404 is the item, with its status', async () => {
    const out = await readyAndRun(exportOf(1, { url: `${fake.url}/missing`, options: { fullResponse: true, ignoreResponseCode: true } }));
    expect(out).toMatchObject({ body: { error: 'nope' }, statusCode: 404, statusMessage: 'Not Found' });
    expect((out.headers as Record<string, string>)['content-type']).toBe('application/json');
  }, 90_000);

  test('without "ignore response code" a 404 fails the node', async () => {
    const created = await importExport(exportOf(1, { url: `${fake.url}/missing` }));
    const run = await runDraft(created);
    expect(run.status).toBe('failed');
    expect(JSON.stringify(run.error)).toContain('HTTP 404');
  }, 90_000);
});

describe('v2 (generic and service credential types)', () => {
  test('basic auth from a generic credential type', async () => {
    await credential('Basic v2', 'basic', { username: 'ada', password: 'pw' });
    const out = await readyAndRun(
      exportOf(
        2,
        { url: `${fake.url}/basic`, authentication: 'genericCredentialType', genericAuthType: 'httpBasicAuth', options: {} },
        { httpBasicAuth: { id: '3', name: 'Basic v2' } },
      ),
    );
    expect(out).toEqual({ ok: true });
  }, 90_000);
});

describe('custom auth (httpCustomAuth → an http_custom credential)', () => {
  test("its headers and query parameters are sent together, beside the node's own query; the secrets are masked", async () => {
    const bad = await stack.api.post('/api/v1/credentials', { name: 'Custom empty', type: 'http_custom', value: {} });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toContain('give at least one header or query parameter');

    const res = await stack.api.post('/api/v1/credentials', {
      name: 'Custom v4',
      type: 'http_custom',
      value: { headers: { 'X-Custom-Key': CUSTOM_KEY }, query: { tenant: 'acme' } },
      allowedHosts: [new URL(fake.url).host],
    });
    expect([200, 201]).toContain(res.status);
    expect(JSON.stringify(res.body)).not.toContain(CUSTOM_KEY);
    const out = await readyAndRun(
      exportOf(
        4.2,
        {
          url: `${fake.url}/custom`,
          authentication: 'genericCredentialType',
          genericAuthType: 'httpCustomAuth',
          sendQuery: true,
          queryParameters: { parameters: [{ name: 'q', value: 'x' }] },
          options: {},
        },
        { httpCustomAuth: { id: '9', name: 'Custom v4' } },
      ),
    );
    expect(out).toEqual({ ok: true, q: 'x' });
  }, 90_000);
});

describe('v3 and v4 (send switches, options.response, options.redirect)', () => {
  test('a service credential type with a bearer token maps to our bearer credential', async () => {
    await credential('Notion v4', 'bearer', { token: BEARER_TOKEN });
    const text = exportOf(
      4.2,
      { url: `${fake.url}/bearer`, authentication: 'predefinedCredentialType', nodeCredentialType: 'notionApi', options: {} },
      { notionApi: { id: '4', name: 'Notion v4' } },
    );
    const created = await importExport(text);
    expect(created.importReadiness?.conversion?.credentials).toEqual([
      { alias: 'Notion v4', extflowType: 'notionApi', type: 'bearer', nodes: ['Call'] },
    ]);
    expect(await readyAndRun(text)).toEqual({ ok: true });
  }, 90_000);

  test('template collections: a `{{ $credentials.… }}` placeholder and a "YOUR_CREDENTIAL_HERE" type still map', async () => {
    const generic = await importExport(
      exportOf(
        4.2,
        { url: `${fake.url}/echo`, authentication: '{{ $credentials.genericCredentialType }}', genericAuthType: 'httpQueryAuth' },
        { httpQueryAuth: { id: '5', name: 'Template query key' } },
      ),
    );
    expect(generic.importReadiness?.conversion).toMatchObject({
      unsupported: [],
      credentials: [{ alias: 'Template query key', extflowType: 'httpQueryAuth', type: 'http_query', nodes: ['Call'] }],
    });
    const predefined = await importExport(
      exportOf(
        4.2,
        {
          url: `${fake.url}/echo`,
          authentication: '{{ $credentials.predefinedCredentialType }}',
          nodeCredentialType: 'YOUR_CREDENTIAL_HERE',
        },
        { openAiApi: { id: '6', name: 'Template OpenAI' } },
      ),
    );
    expect(predefined.importReadiness?.conversion).toMatchObject({
      unsupported: [],
      credentials: [{ alias: 'Template OpenAI', extflowType: 'openAiApi', type: 'bearer', nodes: ['Call'] }],
    });
  }, 90_000);

  test('autodetect: a text answer becomes { data }, an empty one {}', async () => {
    expect(await readyAndRun(exportOf(4.2, { url: `${fake.url}/text`, options: {} }))).toEqual({ data: 'hello text' });
    expect(await readyAndRun(exportOf(4.1, { url: `${fake.url}/empty`, options: {} }))).toEqual({});
  }, 90_000);

  test('response format text keeps JSON as text under the output field; json parses text answers', async () => {
    const asText = await readyAndRun(
      exportOf(4.2, {
        url: `${fake.url}/inspect`,
        options: { response: { response: { responseFormat: 'text', outputPropertyName: 'page' } } },
      }),
    );
    expect(typeof asText.page).toBe('string');
    expect(JSON.parse(String(asText.page))).toMatchObject({ method: 'GET' });
    expect(
      await readyAndRun(
        exportOf(4.2, { url: `${fake.url}/json-as-text`, options: { response: { response: { responseFormat: 'json' } } } }),
      ),
    ).toEqual({ n: 1 });
  }, 90_000);

  test('v4 follows redirects by default; with "follow redirects" off, never error and full response show the 302', async () => {
    expect(await readyAndRun(exportOf(4.2, { url: `${fake.url}/redirect`, options: {} }))).toMatchObject({
      query: { redirected: 'yes' },
    });
    const out = await readyAndRun(
      exportOf(4.2, {
        url: `${fake.url}/redirect`,
        options: {
          redirect: { redirect: { followRedirects: false } },
          response: { response: { fullResponse: true, neverError: true, responseFormat: 'text' } },
        },
      }),
    );
    expect(out).toMatchObject({ statusCode: 302, statusMessage: 'Found', data: '' });
    expect((out.headers as Record<string, string>).location).toBe('/echo?redirected=yes');
  }, 90_000);

  test('v3 multipart text fields and a JSON body sent through the send switches', async () => {
    const multipart = await readyAndRun(
      exportOf(3, {
        method: 'POST',
        url: `${fake.url}/inspect`,
        sendBody: true,
        contentType: 'multipart-form-data',
        bodyParameters: {
          parameters: [
            { name: 'title', value: '={{ $json.title }}' },
            { name: 'n', value: '2' },
          ],
        },
        options: {},
      }),
      { title: 'Hi' },
    );
    const raw = String(multipart.raw);
    expect(raw).toContain('Content-Disposition: form-data; name="title"\r\n\r\nHi\r\n');
    expect(raw).toContain('Content-Disposition: form-data; name="n"\r\n\r\n2\r\n');
    expect((multipart.headers as Record<string, string>)['content-type']).toMatch(/^multipart\/form-data; boundary=/);

    const json = await readyAndRun(
      exportOf(4.2, {
        method: 'POST',
        url: `${fake.url}/inspect`,
        sendQuery: true,
        specifyQuery: 'json',
        jsonQuery: '={ "page": "{{ $json.page }}" }',
        sendBody: true,
        specifyBody: 'json',
        jsonBody: '={ "tags": {{ $json.tags }} }',
        options: {},
      }),
      { page: 2, tags: ['a', 'b'] },
    );
    expect(json).toMatchObject({ query: { page: '2' } });
    expect(JSON.parse(String(json.raw))).toEqual({ tags: ['a', 'b'] });
  }, 90_000);
});

describe('what does not carry over is named, never dropped', () => {
  test('pagination, file answers and digest auth are placeholders; a proxy is a readiness issue', async () => {
    const paged = await importExport(
      exportOf(4.2, {
        url: `${fake.url}/echo`,
        options: { pagination: { pagination: { paginationMode: 'responseContainsNextURL', nextURL: '={{ $response.body.next }}' } } },
      }),
    );
    expect(paged.importReadiness?.conversion?.unsupported).toEqual([
      expect.objectContaining({ node: 'Call', reason: expect.stringContaining('pagination') }),
    ]);
    const file = await importExport(exportOf(1, { url: `${fake.url}/echo`, responseFormat: 'file' }));
    expect(file.importReadiness?.conversion?.unsupported).toEqual([
      expect.objectContaining({ node: 'Call', reason: expect.stringContaining('file') }),
    ]);
    const digest = await importExport(exportOf(1, { url: `${fake.url}/echo`, authentication: 'digestAuth' }));
    expect(digest.importReadiness?.conversion?.unsupported).toEqual([
      expect.objectContaining({ node: 'Call', reason: expect.stringContaining('httpDigestAuth') }),
    ]);
    const proxied = await importExport(exportOf(4.2, { url: `${fake.url}/echo`, options: { proxy: 'http://proxy:3128' } }));
    expect(proxied.importReadiness?.conversion).toMatchObject({
      ready: false,
      unsupported: [],
      readinessIssues: [expect.objectContaining({ node: 'Call', kind: 'unsupportedOption', message: expect.stringContaining('proxy') })],
    });
  }, 90_000);
});

describe('several items in: one request per item (issue 29)', () => {
  /** Manual trigger → Split Out of `people` → HTTP Request v4.2 GET /repeat for each person, with `settings` on the node. */
  function perItemExport(settings: Record<string, unknown> = {}, path = '/repeat', name = '={{ $json.name }}') {
    seq += 1;
    const nodes = [
      { name: 'Start', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1, parameters: {} },
      { name: 'Split Out', type: 'n8n-nodes-base.splitOut', typeVersion: 1, parameters: { fieldToSplitOut: 'people' } },
      {
        name: 'Call',
        type: 'n8n-nodes-base.httpRequest',
        typeVersion: 4.2,
        parameters: {
          url: `${fake.url}${path}`,
          sendQuery: true,
          queryParameters: {
            parameters: [
              { name: 'name', value: name },
              { name: 'n', value: '={{ $json.n }}' },
            ],
          },
          options: {},
        },
        ...settings,
      },
    ];
    return JSON.stringify({
      id: `http-per-item-${seq}`,
      name: `HTTP per item #${seq}`,
      nodes: nodes.map((n, i) => ({ ...n, position: [i * 200, 0] })),
      connections: {
        Start: { main: [[{ node: 'Split Out', type: 'main', index: 0 }]] },
        'Split Out': { main: [[{ node: 'Call', type: 'main', index: 0 }]] },
      },
    });
  }
  /** The steps of `nodeId` that ran (a node a run passes by is recorded `skipped`). */
  const stepsOf = (run: { steps: Array<{ nodeId: string; status: string; output?: unknown }> }, nodeId: string) =>
    run.steps.filter((s) => s.nodeId === nodeId && s.status !== 'skipped');

  test('each item is one request; a JSON array answer is that many items, paired with the item it answers; [] is none', async () => {
    const created = await importExport(perItemExport());
    expect(created.importReadiness?.conversion).toMatchObject({ ready: true, unsupported: [], readinessIssues: [] });
    const run = await runDraft(created, {
      people: [
        { name: 'ada', n: 2 },
        { name: 'bob', n: 0 },
        { name: 'cy', n: 1 },
      ],
    });
    expect({ status: run.status, error: run.error ?? null }).toEqual({ status: 'succeeded', error: null });
    // Three requests (one step of the http node per item), in order.
    expect(stepsOf(run, 'call__run__request')).toHaveLength(3);
    expect(stepsOf(run, 'call').at(-1)?.output).toEqual([
      { json: { i: 0, name: 'ada' }, pairedItem: { item: 0 } },
      { json: { i: 1, name: 'ada' }, pairedItem: { item: 0 } },
      { json: { i: 0, name: 'cy' }, pairedItem: { item: 2 } },
    ]);
  });

  test("$('Split Out').item in the request reads the item paired with the current one, not the first", async () => {
    const created = await importExport(perItemExport({}, '/repeat', "={{ $('Split Out').item.json.name }}"));
    expect(created.importReadiness?.conversion).toMatchObject({ ready: true, unsupported: [], readinessIssues: [] });
    const run = await runDraft(created, {
      people: [
        { name: 'ada', n: 1 },
        { name: 'bob', n: 1 },
      ],
    });
    expect({ status: run.status, error: run.error ?? null }).toEqual({ status: 'succeeded', error: null });
    expect(stepsOf(run, 'call').at(-1)?.output).toEqual([
      { json: { i: 0, name: 'ada' }, pairedItem: { item: 0 } },
      { json: { i: 0, name: 'bob' }, pairedItem: { item: 1 } },
    ]);
  });

  test('no item in: no request; continue on fail: a failing item answers an error item and the others go on', async () => {
    const empty = await runDraft(await importExport(perItemExport()), { people: [] });
    expect(empty.status).toBe('succeeded');
    expect(stepsOf(empty, 'call__run__request')).toEqual([]);

    const created = await importExport(perItemExport({ onError: 'continueRegularOutput' }, '/missing'));
    const run = await runDraft(created, {
      people: [
        { name: 'ada', n: 1 },
        { name: 'bob', n: 1 },
      ],
    });
    expect({ status: run.status, error: run.error ?? null }).toEqual({ status: 'succeeded', error: null });
    const items = stepsOf(run, 'call').at(-1)?.output as Array<{ json: { error?: unknown }; pairedItem: unknown }>;
    expect(items.map((i) => [typeof i.json.error, i.pairedItem])).toEqual([
      ['string', { item: 0 }],
      ['string', { item: 1 }],
    ]);
  });
});
