/**
 * The workflow MCP server over real HTTP, PostgreSQL and Temporal, driven by the official MCP
 * SDK client (Streamable HTTP): stored servers (create, list, delete; v1 and session routes),
 * initialize and tools/list (input schemas derived from the start node or declared),
 * tools/call (success, failing workflow, waiting workflow, runs recorded with trigger `api`),
 * and every refusal: missing or unknown token, personal / copilot / gateway keys, another
 * workspace's key, organization keys outside their selection or with read permission, viewers,
 * a revoked key and a downgraded member losing authority at the next call.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ApiKeySchema, MembershipSchema, RunSchema, WorkflowMcpServerSchema } from '../../../db/entities';
import { issueApiKey } from '../../../services/accounts/apiKeys';
import { addUserWithKey, http, signInCookie, type WorkspaceFixture } from '../../support/harness';
import { authCacheSettled, deployWorkflow, useTestStack, type GraphEdge, type NodeInput } from '../../kit';

const stack = useTestStack({ workspaceName: 'MCP A' });
let a: WorkspaceFixture;
let b: WorkspaceFixture;
const wf: Record<string, string> = {};

const SERVERS = '/api/v1/workflow-mcp-servers';

const deployed = async (token: string, name: string, nodes: NodeInput[], edges: GraphEdge[]) =>
  (await deployWorkflow(stack, { name, nodes, edges }, { token })).workflowId;

const start = (inputSchema?: Record<string, unknown>) => ({
  id: 'start',
  type: 'start',
  name: 'Start',
  config: inputSchema ? { inputSchema } : {},
  position: { x: 0, y: 0 },
});
const node = (id: string, type: string, config: Record<string, unknown>) => ({ id, type, name: id, config, position: { x: 200, y: 0 } });
const edge = (target: string) => [{ id: `start-${target}`, source: 'start', target }];

const GREET_SCHEMA = { type: 'object', properties: { who: { type: 'string' } }, required: ['who'] };

async function connect(token: string | null, workspaceId = a.workspaceId, slug = 'ops'): Promise<Client> {
  const headers: Record<string, string> = token ? { Authorization: `Bearer ${token}` } : {};
  const transport = new StreamableHTTPClientTransport(new URL(`${stack.app.url}/api/v1/workflows/mcp/${workspaceId}/${slug}`), {
    requestInit: { headers },
  });
  const client = new Client({ name: 'jest', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

async function orgKey(ws: WorkspaceFixture, permission: 'read' | 'write', workspaceIds: string[]): Promise<string> {
  const { token } = await issueApiKey(stack.app.orm.em.fork(), null, {
    name: `org ${permission} ${Math.random()}`,
    scope: 'organization',
    workspaceId: null,
    auditWorkspaceId: ws.workspaceId,
    createdById: ws.ownerId,
    organization: { workspaceSelection: 'selected', workspaceIds, permission },
    allowedWorkflowIds: null,
  });
  return token;
}

beforeAll(async () => {
  a = stack.ws;
  b = await stack.workspace('MCP B');
  wf.greet = await deployed(
    a.token,
    'Greet someone',
    [start(GREET_SCHEMA), node('shape', 'transform', { expression: '{ "greeting": "hello " & who }' })],
    edge('shape'),
  );
  wf.boom = await deployed(a.token, 'Boom', [start(), node('fail', 'fail', { message: 'it broke' })], edge('fail'));
  wf.gate = await deployed(a.token, 'Gate', [start(), node('gate', 'approval', { prompt: 'Ship?' })], edge('gate'));
  const res = await http(stack.app, 'POST', SERVERS, {
    token: a.token,
    body: {
      name: 'Ops tools',
      slug: 'ops',
      tools: [
        { workflowId: wf.greet },
        { workflowId: wf.boom, name: 'boom' },
        { workflowId: wf.gate, name: 'gate', inputSchema: { type: 'object', properties: { ticket: { type: 'number' } } } },
      ],
    },
  });
  expect(res.status).toBe(201);
}, 120_000);

describe('stored servers', () => {
  test('create answers the endpoint URL; list shows it; slugs are unique; bad input is a 400', async () => {
    const list = await http(stack.app, 'GET', SERVERS, { token: a.token });
    expect(list.status).toBe(200);
    expect(list.body.servers).toHaveLength(1);
    expect(list.body.servers[0].url).toBe(`${stack.app.url}/api/v1/workflows/mcp/${a.workspaceId}/ops`);
    expect(list.body.servers[0].server.tools.map((t: any) => t.name)).toEqual(['greet_someone', 'boom', 'gate']);

    const dup = await http(stack.app, 'POST', SERVERS, {
      token: a.token,
      body: { name: 'Again', slug: 'ops', tools: [{ workflowId: wf.greet }] },
    });
    expect(dup.status).toBe(409);
    const foreign = await http(stack.app, 'POST', SERVERS, {
      token: b.token,
      body: { name: 'Steal', slug: 'steal', tools: [{ workflowId: wf.greet }] },
    });
    expect(foreign.status).toBe(400);
    expect(foreign.body.error).toBe(`Workflow ${wf.greet} is not a workflow of this workspace.`);
    const badSlug = await http(stack.app, 'POST', SERVERS, {
      token: a.token,
      body: { name: 'x', slug: 'Bad Slug', tools: [{ workflowId: wf.greet }] },
    });
    expect(badSlug.status).toBe(400);
    expect((await http(stack.app, 'GET', SERVERS, { token: b.token })).body.servers).toEqual([]);
  });

  test('members cannot create; another workspace cannot delete (404); the session route creates and deletes', async () => {
    const member = await addUserWithKey(stack.app, a, 'member');
    const refused = await http(stack.app, 'POST', SERVERS, {
      token: member.token,
      body: { name: 'M', slug: 'm', tools: [{ workflowId: wf.greet }] },
    });
    expect(refused.status).toBe(403);

    const cookie = await signInCookie(stack.app, a.ownerEmail, a.ownerPassword, a.workspaceId);
    const created = await http(stack.app, 'POST', '/api/workflow-mcp-servers', {
      cookie,
      body: { name: 'Temp', slug: 'temp', tools: [{ workflowId: wf.greet, name: 'hi' }] },
    });
    expect(created.status).toBe(201);
    const id = created.body.server.id;
    const cross = await http(stack.app, 'DELETE', `${SERVERS}/${id}`, { token: b.token });
    expect(cross.status).toBe(404);
    expect(await stack.app.orm.em.fork().count(WorkflowMcpServerSchema, { id })).toBe(1);
    const client = await connect(a.token, a.workspaceId, 'temp');
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['hi']);
    await client.close();
    const del = await http(stack.app, 'DELETE', `/api/workflow-mcp-servers/${id}`, { cookie });
    expect(del.status).toBe(200);
    await expect(connect(a.token, a.workspaceId, 'temp')).rejects.toMatchObject({ code: 404 });
  });
});

describe('MCP protocol', () => {
  test('initialize and tools/list with the workspace key: schemas from the start node or declared', async () => {
    const client = await connect(a.token);
    expect(client.getServerVersion()?.name).toBe('workflows-ops');
    const { tools } = await client.listTools();
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    expect(Object.keys(byName)).toEqual(['greet_someone', 'boom', 'gate']);
    expect(byName.greet_someone.inputSchema).toEqual(GREET_SCHEMA);
    expect(byName.boom.inputSchema).toEqual({ type: 'object', additionalProperties: true });
    expect(byName.gate.inputSchema).toEqual({ type: 'object', properties: { ticket: { type: 'number' } } });
    await client.close();
  });

  test('tools/call returns the output; the run is recorded with trigger api', async () => {
    const client = await connect(a.token);
    const result: any = await client.callTool({ name: 'greet_someone', arguments: { who: 'Ada' } });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ status: 'succeeded', output: { greeting: 'hello Ada' } });
    expect(JSON.parse(result.content[0].text)).toEqual({ greeting: 'hello Ada' });
    const runId = result.structuredContent.runId;
    const run = await http(stack.app, 'GET', `/api/v1/runs/${runId}`, { token: a.token });
    expect(run.status).toBe(200);
    expect(run.body.run).toMatchObject({ workflowId: wf.greet, trigger: 'api', status: 'succeeded' });
    await client.close();
  });

  test('a failing workflow answers isError with the run reference', async () => {
    const client = await connect(a.token);
    const result: any = await client.callTool({ name: 'boom', arguments: {} });
    expect(result.isError).toBe(true);
    expect(result.content[0].text).toContain('it broke');
    const row = await stack.app.orm.em.fork().findOneOrFail(RunSchema, { id: result.structuredContent.runId });
    expect(row.status).toBe('failed');
    await client.close();
  });

  test('a waiting workflow answers a run reference', async () => {
    const client = await connect(a.token);
    const result: any = await client.callTool({ name: 'gate', arguments: { ticket: 7 } });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ status: 'waiting' });
    expect(result.structuredContent.links.run).toBe(`${stack.app.url}/api/v1/runs/${result.structuredContent.runId}`);
    const row = await stack.app.orm.em.fork().findOneOrFail(RunSchema, { id: result.structuredContent.runId });
    expect(row.status).toBe('waiting');
    expect(row.trigger).toBe('api');
    await client.close();
  });

  test('unknown tools are a protocol error', async () => {
    const client = await connect(a.token);
    await expect(client.callTool({ name: 'nope', arguments: {} })).rejects.toThrow(/Unknown tool|nope/);
    await client.close();
  });
});

describe('authority', () => {
  test('missing or unknown tokens are 401; personal, copilot and gateway keys 403', async () => {
    await expect(connect(null)).rejects.toMatchObject({ code: 401 });
    await expect(connect('hise_not_a_real_token')).rejects.toMatchObject({ code: 401 });
    for (const scope of ['personal', 'copilot', 'end_user_gateway'] as const) {
      const k = await addUserWithKey(stack.app, a, 'member', scope);
      await expect(connect(k.token)).rejects.toMatchObject({ code: 403 });
    }
  });

  test("another workspace's key and an organization key outside its selection get 404; GET is 405 after auth", async () => {
    await expect(connect(b.token)).rejects.toMatchObject({ code: 404 });
    const outside = await orgKey(b, 'write', [b.workspaceId]);
    await expect(connect(outside)).rejects.toMatchObject({ code: 404 });
    await expect(connect(a.token, a.workspaceId, 'missing')).rejects.toMatchObject({ code: 404 });
    const get = await http(stack.app, 'GET', `/api/v1/workflows/mcp/${a.workspaceId}/ops`, { token: a.token });
    expect(get.status).toBe(405);
    expect((await http(stack.app, 'GET', `/api/v1/workflows/mcp/${a.workspaceId}/ops`, {})).status).toBe(401);
  });

  test('organization keys: read lists but cannot call; write calls; REST v1 refuses them', async () => {
    const read = await orgKey(a, 'read', [a.workspaceId]);
    const client = await connect(read);
    expect((await client.listTools()).tools).toHaveLength(3);
    const before = await stack.app.orm.em.fork().count(RunSchema, { workspaceId: a.workspaceId });
    await expect(client.callTool({ name: 'greet_someone', arguments: { who: 'x' } })).rejects.toMatchObject({ code: 403 });
    expect(await stack.app.orm.em.fork().count(RunSchema, { workspaceId: a.workspaceId })).toBe(before);
    await client.close();

    const write = await orgKey(a, 'write', [a.workspaceId, b.workspaceId]);
    const writer = await connect(write);
    const result: any = await writer.callTool({ name: 'greet_someone', arguments: { who: 'Org' } });
    expect(result.structuredContent.output).toEqual({ greeting: 'hello Org' });
    await writer.close();
    expect((await http(stack.app, 'GET', '/api/v1/workflows', { token: write })).status).toBe(403);
  });

  test('viewers list but cannot call; a downgraded member loses execute at the next call; a revoked key loses everything', async () => {
    const viewer = await addUserWithKey(stack.app, a, 'viewer');
    const vc = await connect(viewer.token);
    expect((await vc.listTools()).tools).toHaveLength(3);
    await expect(vc.callTool({ name: 'greet_someone', arguments: { who: 'v' } })).rejects.toMatchObject({ code: 403 });
    await vc.close();

    const member = await addUserWithKey(stack.app, a, 'member');
    const mc = await connect(member.token);
    expect((await mc.callTool({ name: 'greet_someone', arguments: { who: 'm' } })).isError).toBeFalsy();
    await stack.app.orm.em.fork().nativeUpdate(MembershipSchema, { workspaceId: a.workspaceId, userId: member.userId }, { role: 'viewer' });
    // SQL changes reach the key cache by notification: wait for it rather than race it.
    await authCacheSettled(stack.app);
    await expect(mc.callTool({ name: 'greet_someone', arguments: { who: 'm' } })).rejects.toMatchObject({ code: 403 });
    expect((await mc.listTools()).tools).toHaveLength(3);
    await stack.app.orm.em.fork().nativeUpdate(ApiKeySchema, { id: member.keyId }, { revokedAt: new Date() });
    await authCacheSettled(stack.app);
    await expect(mc.listTools()).rejects.toMatchObject({ code: 401 });
    await mc.close();
  });
});

describe('MCP by the book', () => {
  const endpoint = () => `${stack.app.url}/api/v1/workflows/mcp/${a.workspaceId}/ops`;
  /** Runs of the workspace as the REST API lists them (the count a client can see). */
  const runCount = async (workflowId: string) => {
    const list = await stack.api.runs.list(`?workflowId=${workflowId}&limit=200`);
    expect(list.status).toBe(200);
    return list.body.runs.length;
  };
  const post = (body: string, headers: Record<string, string> = {}) =>
    fetch(endpoint(), {
      method: 'POST',
      headers: {
        authorization: `Bearer ${a.token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...headers,
      },
      body,
    });

  test("a stock client's bad arguments are -32602 with the failing path, and never create a run", async () => {
    const client = await connect(a.token);
    const before = await runCount(wf.greet);
    const missing = await client.callTool({ name: 'greet_someone', arguments: {} }).catch((err: unknown) => err);
    expect(missing).toMatchObject({ code: -32602, data: { tool: 'greet_someone' } });
    expect((missing as Error).message).toContain("arguments must have required property 'who'");
    const wrongType = await client.callTool({ name: 'greet_someone', arguments: { who: 42 } }).catch((err: unknown) => err);
    expect(wrongType).toMatchObject({ code: -32602, data: { errors: 'arguments/who must be string' } });
    const declared = await client.callTool({ name: 'gate', arguments: { ticket: 'seven' } }).catch((err: unknown) => err);
    expect(declared).toMatchObject({ code: -32602, data: { errors: 'arguments/ticket must be number' } });
    expect(await runCount(wf.greet)).toBe(before);
    // The same client's good call still runs.
    const ok: any = await client.callTool({ name: 'greet_someone', arguments: { who: 'Ada' } });
    expect(ok.structuredContent.status).toBe('succeeded');
    expect(await runCount(wf.greet)).toBe(before + 1);
    await client.close();
  });

  test('unknown tools are -32602 and unknown methods -32601 (JSON-RPC and MCP error handling); neither runs anything', async () => {
    const client = await connect(a.token);
    const before = await runCount(wf.greet);
    await expect(client.callTool({ name: 'nope', arguments: {} })).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining('Unknown tool "nope"'),
    });
    const unknownMethod = await post(JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'resources/list', params: {} }));
    expect(unknownMethod.status).toBe(200);
    expect(await unknownMethod.json()).toMatchObject({ jsonrpc: '2.0', id: 7, error: { code: -32601 } });
    expect(await runCount(wf.greet)).toBe(before);
    await client.close();
  });

  test('malformed JSON is -32700 Parse error, not a REST 400; a declared schema that cannot compile is refused at creation', async () => {
    const res = await post('{"jsonrpc": "2.0", "id": 1, "method": "tools/list"');
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error: Invalid JSON' } });
    const notRpc = await post(JSON.stringify({ hello: 'world' }));
    expect(notRpc.status).toBe(400);
    expect(await notRpc.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32700 } });
    const broken = await http(stack.app, 'POST', SERVERS, {
      token: a.token,
      body: {
        name: 'Broken',
        slug: 'broken',
        tools: [{ workflowId: wf.greet, inputSchema: { type: 'object', properties: { a: { type: 'nope' } } } }],
      },
    });
    expect(broken.status).toBe(400);
    expect(broken.body.error).toContain('tools[0].inputSchema is not a valid JSON Schema');
  });

  test('hostile bodies are refused in JSON-RPC terms and run nothing: over BODY_LIMIT, 5,000 levels deep, a NUL', async () => {
    const before = await runCount(wf.greet);
    const call = (args: string) =>
      post(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"greet_someone","arguments":${args}}}`, {
        'mcp-protocol-version': '2025-11-25',
      });
    const huge = await call(`{"who":"${'x'.repeat(1_100_000)}"}`);
    expect(huge.status).toBe(413);
    expect(await huge.json()).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600 } });
    const deep = await call(`{"who":"a","n":${'['.repeat(5_000)}${']'.repeat(5_000)}}`);
    expect(deep.status).toBe(400);
    expect(await deep.json()).toMatchObject({
      id: 3,
      error: { code: -32602, message: expect.stringContaining('nested more than 100 levels') },
    });
    const nul = await call('{"who":"a\\u0000b"}');
    expect(nul.status).toBe(400);
    expect(await nul.json()).toMatchObject({ id: 3, error: { code: -32602, message: expect.stringContaining('params.arguments.who') } });
    expect(await runCount(wf.greet)).toBe(before);
  });

  test('GET, DELETE and every other method answer 405 with the same Allow, after the same authority check', async () => {
    for (const method of ['GET', 'DELETE', 'PUT', 'PATCH']) {
      const res = await fetch(endpoint(), { method, headers: { authorization: `Bearer ${a.token}`, accept: 'text/event-stream' } });
      expect({ method, status: res.status, allow: res.headers.get('allow') }).toEqual({ method, status: 405, allow: 'POST' });
      const anonymous = await fetch(endpoint(), { method });
      expect({ method, status: anonymous.status }).toEqual({ method, status: 401 });
    }
  });

  test('session resumption with a stock client: nothing to lose on a stateless server, the run is found again over REST', async () => {
    const first = new StreamableHTTPClientTransport(new URL(endpoint()), {
      requestInit: { headers: { Authorization: `Bearer ${a.token}` } },
    });
    const client = new Client({ name: 'jest-resume', version: '1.0.0' });
    await client.connect(first);
    // Stateless: no Mcp-Session-Id is issued, and no SSE event id either (JSON responses), so no
    // resumption token; a resume with Last-Event-ID is a GET, answered 405, which the SDK reads
    // as "no stream to resume" rather than as an error.
    expect(first.sessionId).toBeUndefined();
    let tokens = 0;
    const called: any = await client.callTool({ name: 'greet_someone', arguments: { who: 'Resumed' } }, undefined, {
      onresumptiontoken: () => tokens++,
    });
    expect(tokens).toBe(0);
    await expect(first.resumeStream('evt-0')).resolves.toBeUndefined();
    const resume = await fetch(endpoint(), {
      headers: { authorization: `Bearer ${a.token}`, accept: 'text/event-stream', 'last-event-id': 'evt-0' },
    });
    expect([resume.status, resume.headers.get('allow')]).toEqual([405, 'POST']);
    await client.close();

    // A client resuming its session (after a dropped connection, or on another API process)
    // skips initialize and goes on where it was: the server kept nothing that could be lost.
    const resumed = new StreamableHTTPClientTransport(new URL(endpoint()), {
      sessionId: 'session-before-the-drop',
      requestInit: { headers: { Authorization: `Bearer ${a.token}` } },
    });
    const again = new Client({ name: 'jest-resume', version: '1.0.0' });
    await again.connect(resumed);
    const result: any = await again.callTool({ name: 'greet_someone', arguments: { who: 'Again' } });
    expect(result.structuredContent).toMatchObject({ status: 'succeeded', output: { greeting: 'hello Again' } });
    await again.close();
    // The work itself is what resumes: each call's run is readable by its link.
    for (const runId of [called.structuredContent.runId, result.structuredContent.runId]) {
      const run = await http(stack.app, 'GET', `/api/v1/runs/${runId}`, { token: a.token });
      expect(run.body.run).toMatchObject({ workflowId: wf.greet, trigger: 'api', status: 'succeeded' });
    }
  });
});
