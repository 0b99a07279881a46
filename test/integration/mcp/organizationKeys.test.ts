/**
 * Organization keys managed across the organization over real HTTP and PostgreSQL: a key
 * created by one Admin is listed, renamed and revoked by another Admin or Owner of a workspace
 * in its selection (not by one outside it); only the name changes; a revoked key loses the
 * workflow MCP endpoint at once.
 */
import { grantMembership } from '../../../services/workspaces';
import { createWorkspace, http, signInCookie, startTestApp, type TestApp, type WorkspaceFixture } from '../../support/harness';

let app: TestApp;
let a: WorkspaceFixture;
let b: WorkspaceFixture;
let c: WorkspaceFixture;
let creatorCookie: string;
let ownerACookie: string;
let ownerCCookie: string;

beforeAll(async () => {
  app = await startTestApp();
  a = await createWorkspace(app, 'Org A');
  b = await createWorkspace(app, 'Org B');
  c = await createWorkspace(app, 'Org C');
  // B's owner is also an Admin of A: their organization key may select both.
  const ownerOfA = { kind: 'session' as const, sessionId: 'fixture', principalId: `user:${a.ownerId}`, userId: a.ownerId, workspaceId: a.workspaceId, role: 'owner' as const };
  await grantMembership(app.orm.em.fork(), ownerOfA, { email: b.ownerEmail, role: 'admin' });
  creatorCookie = await signInCookie(app, b.ownerEmail, b.ownerPassword, b.workspaceId);
  ownerACookie = await signInCookie(app, a.ownerEmail, a.ownerPassword, a.workspaceId);
  ownerCCookie = await signInCookie(app, c.ownerEmail, c.ownerPassword, c.workspaceId);
});
afterAll(() => app.close());

test('another Admin or Owner in the selection lists, renames and revokes an organization key; outsiders cannot', async () => {
  const created = await http(app, 'POST', '/api/api-keys', {
    cookie: creatorCookie,
    body: { name: 'Agents', scope: 'organization', organization: { workspaceSelection: 'selected', workspaceIds: [a.workspaceId, b.workspaceId], permission: 'write' } },
  });
  expect(created.status).toBe(201);
  const id = created.body.apiKey.id;
  const token = created.body.token;

  const listedInA = await http(app, 'GET', '/api/api-keys', { cookie: ownerACookie });
  expect(listedInA.body.apiKeys.map((k: any) => k.id)).toContain(id);
  expect((await http(app, 'GET', '/api/api-keys', { cookie: ownerCCookie })).body.apiKeys.map((k: any) => k.id)).not.toContain(id);

  const outsider = await http(app, 'PATCH', `/api/api-keys/${id}`, { cookie: ownerCCookie, body: { name: 'Stolen' } });
  expect(outsider.status).toBe(404);
  const scopeChange = await http(app, 'PATCH', `/api/api-keys/${id}`, { cookie: ownerACookie, body: { name: 'x', scope: 'workspace' } });
  expect(scopeChange.status).toBe(400);
  const blank = await http(app, 'PATCH', `/api/api-keys/${id}`, { cookie: ownerACookie, body: { name: '   ' } });
  expect(blank.status).toBe(400);

  const renamed = await http(app, 'PATCH', `/api/api-keys/${id}`, { cookie: ownerACookie, body: { name: ' Agent fleet ' } });
  expect(renamed.status).toBe(200);
  expect(renamed.body.apiKey).toMatchObject({ id, name: 'Agent fleet', scope: 'organization' });
  const fromCreator = (await http(app, 'GET', '/api/api-keys', { cookie: creatorCookie })).body.apiKeys.find((k: any) => k.id === id);
  expect(fromCreator.name).toBe('Agent fleet');

  // Names stay unique per creator among organization keys.
  await http(app, 'POST', '/api/api-keys', { cookie: creatorCookie, body: { name: 'Other', scope: 'organization', organization: { workspaceSelection: 'selected', workspaceIds: [b.workspaceId], permission: 'read' } } });
  const clash = await http(app, 'PATCH', `/api/api-keys/${id}`, { cookie: ownerACookie, body: { name: 'other' } });
  expect(clash.status).toBe(400);

  const before = await http(app, 'GET', `/api/v1/workflows/mcp/${a.workspaceId}/none`, { token });
  expect(before.status).toBe(404);
  const revoked = await http(app, 'DELETE', `/api/api-keys/${id}`, { cookie: ownerACookie });
  expect(revoked.status).toBe(200);
  const after = await http(app, 'GET', `/api/v1/workflows/mcp/${a.workspaceId}/none`, { token });
  expect(after.status).toBe(401);
});
