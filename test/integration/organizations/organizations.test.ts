/**
 * Organizations and their keys over real HTTP and PostgreSQL: an Owner of two workspaces brings
 * one into the other's organization; organization keys select workspaces of their organization
 * only; a key is listed, renamed and revoked by any Admin or Owner of a workspace in the
 * organization (not by one outside it); only the name changes; the `organization` selection
 * reaches workspaces that join later, `selected` only its own; a revoked key loses the workflow
 * MCP endpoint at once.
 */
import { AuditLogSchema, MembershipSchema } from '../../../db/entities';
import { grantMembership } from '../../../services/accounts/workspaces';
import {
  client,
  createWorkspace,
  http,
  signInCookie,
  useTestStack,
  type ApiError,
  type ApiKeyList,
  type CreatedApiKey,
  type OrganizationAnswer,
  type RenamedApiKey,
  type WorkspaceFixture,
} from '../../kit';

const stack = useTestStack({ worker: false, workspaceName: 'Org A' });
let a: WorkspaceFixture;
let b: WorkspaceFixture;
let c: WorkspaceFixture;
let creatorCookie: string;
let ownerACookie: string;
let ownerCCookie: string;

beforeAll(async () => {
  a = stack.ws;
  b = await stack.workspace('Org B');
  c = await stack.workspace('Org C');
  // B's owner is also an Admin of A: their organization key may select both.
  const ownerOfA = {
    kind: 'session' as const,
    sessionId: 'fixture',
    principalId: `user:${a.ownerId}`,
    userId: a.ownerId,
    workspaceId: a.workspaceId,
    role: 'owner' as const,
  };
  await grantMembership(stack.app.orm.em.fork(), ownerOfA, { email: b.ownerEmail, role: 'admin' });
  creatorCookie = await signInCookie(stack.app, b.ownerEmail, b.ownerPassword, b.workspaceId);
  ownerACookie = await signInCookie(stack.app, a.ownerEmail, a.ownerPassword, a.workspaceId);
  ownerCCookie = await signInCookie(stack.app, c.ownerEmail, c.ownerPassword, c.workspaceId);
});

test('an Owner of both brings a workspace into the organization; keys may only select workspaces of their organization', async () => {
  // Before A joins B's organization, a key of B's organization cannot select A.
  const early = await http<CreatedApiKey & Partial<ApiError>>(stack.app, 'POST', '/api/api-keys', {
    cookie: creatorCookie,
    body: {
      name: 'Too early',
      scope: 'organization',
      organization: { workspaceSelection: 'selected', workspaceIds: [a.workspaceId, b.workspaceId], permission: 'read' },
    },
  });
  expect(early.status).toBe(400);
  expect(early.body.error).toBe(`organization.workspaceIds includes workspaces you cannot access in this organization: ${a.workspaceId}`);

  const own = await http<OrganizationAnswer>(stack.app, 'GET', '/api/organization', { cookie: creatorCookie });
  expect(own.status).toBe(200);
  expect(own.body.organization.workspaces).toEqual([{ id: b.workspaceId, name: 'Org B' }]);
  // Admin of A only: not enough to move A.
  const notOwner = await http<OrganizationAnswer>(stack.app, 'POST', '/api/organization/workspaces', {
    cookie: creatorCookie,
    body: { workspaceId: a.workspaceId },
  });
  expect(notOwner.status).toBe(403);
  expect(
    (
      await http<OrganizationAnswer>(stack.app, 'POST', '/api/organization/workspaces', {
        cookie: creatorCookie,
        body: { workspaceId: c.workspaceId },
      })
    ).status,
  ).toBe(404);
  await stack.app.orm.em.fork().nativeUpdate(MembershipSchema, { workspaceId: a.workspaceId, userId: b.ownerId }, { role: 'owner' });
  const joined = await http<OrganizationAnswer>(stack.app, 'POST', '/api/organization/workspaces', {
    cookie: creatorCookie,
    body: { workspaceId: a.workspaceId },
  });
  expect(joined.status).toBe(200);
  expect(joined.body.organization.id).toBe(own.body.organization.id);
  expect(joined.body.organization.workspaces.map((w) => w.id).sort()).toEqual([a.workspaceId, b.workspaceId].sort());
  expect((await http<OrganizationAnswer>(stack.app, 'GET', '/api/organization', { cookie: ownerACookie })).body.organization.id).toBe(
    own.body.organization.id,
  );
  const cOrg = await http<OrganizationAnswer>(stack.app, 'GET', '/api/organization', { cookie: ownerCCookie });
  expect(cOrg.body.organization.workspaces).toEqual([{ id: c.workspaceId, name: 'Org C' }]);
  const renamed = await http<OrganizationAnswer>(stack.app, 'PATCH', '/api/organization', {
    cookie: ownerACookie,
    body: { name: ' Acme ' },
  });
  expect(renamed.body.organization.name).toBe('Acme');
  expect(
    (await http<OrganizationAnswer>(stack.app, 'PATCH', '/api/organization', { cookie: ownerACookie, body: { name: ' ' } })).status,
  ).toBe(400);
  expect((await http<OrganizationAnswer>(stack.app, 'GET', '/api/organization', { cookie: ownerCCookie })).body.organization.name).toBe(
    'Org C',
  );
});

test('another Admin or Owner in the selection lists, renames and revokes an organization key; outsiders cannot', async () => {
  const created = await http<CreatedApiKey & Partial<ApiError>>(stack.app, 'POST', '/api/api-keys', {
    cookie: creatorCookie,
    body: {
      name: 'Agents',
      scope: 'organization',
      organization: { workspaceSelection: 'selected', workspaceIds: [a.workspaceId, b.workspaceId], permission: 'write' },
    },
  });
  expect(created.status).toBe(201);
  const id = created.body.apiKey.id;
  const token = created.body.token;

  const listedInA = await http<ApiKeyList>(stack.app, 'GET', '/api/api-keys', { cookie: ownerACookie });
  expect(listedInA.body.apiKeys.map((k) => k.id)).toContain(id);
  expect((await http<ApiKeyList>(stack.app, 'GET', '/api/api-keys', { cookie: ownerCCookie })).body.apiKeys.map((k) => k.id)).not.toContain(
    id,
  );

  const outsider = await http<RenamedApiKey>(stack.app, 'PATCH', `/api/api-keys/${id}`, { cookie: ownerCCookie, body: { name: 'Stolen' } });
  expect(outsider.status).toBe(404);
  const scopeChange = await http<RenamedApiKey>(stack.app, 'PATCH', `/api/api-keys/${id}`, {
    cookie: ownerACookie,
    body: { name: 'x', scope: 'workspace' },
  });
  expect(scopeChange.status).toBe(400);
  const blank = await http<RenamedApiKey>(stack.app, 'PATCH', `/api/api-keys/${id}`, { cookie: ownerACookie, body: { name: '   ' } });
  expect(blank.status).toBe(400);

  const renamed = await http<RenamedApiKey>(stack.app, 'PATCH', `/api/api-keys/${id}`, {
    cookie: ownerACookie,
    body: { name: ' Agent fleet ' },
  });
  expect(renamed.status).toBe(200);
  expect(renamed.body.apiKey).toMatchObject({ id, name: 'Agent fleet', scope: 'organization' });
  const fromCreator = (await http<ApiKeyList>(stack.app, 'GET', '/api/api-keys', { cookie: creatorCookie })).body.apiKeys.find(
    (k) => k.id === id,
  );
  expect(fromCreator?.name).toBe('Agent fleet');

  // Names stay unique per creator among organization keys.
  await http<CreatedApiKey & Partial<ApiError>>(stack.app, 'POST', '/api/api-keys', {
    cookie: creatorCookie,
    body: {
      name: 'Other',
      scope: 'organization',
      organization: { workspaceSelection: 'selected', workspaceIds: [b.workspaceId], permission: 'read' },
    },
  });
  const clash = await http<RenamedApiKey>(stack.app, 'PATCH', `/api/api-keys/${id}`, { cookie: ownerACookie, body: { name: 'other' } });
  expect(clash.status).toBe(400);

  const before = await http(stack.app, 'GET', `/api/v1/workflows/mcp/${a.workspaceId}/none`, { token });
  expect(before.status).toBe(404);
  const revoked = await http(stack.app, 'DELETE', `/api/api-keys/${id}`, { cookie: ownerACookie });
  expect(revoked.status).toBe(200);
  const after = await http(stack.app, 'GET', `/api/v1/workflows/mcp/${a.workspaceId}/none`, { token });
  expect(after.status).toBe(401);
});

test('any Admin or Owner of a workspace in the organization manages its keys; the organization selection reaches workspaces that join later, selected does not', async () => {
  const whole = await http<CreatedApiKey & Partial<ApiError>>(stack.app, 'POST', '/api/api-keys', {
    cookie: creatorCookie,
    body: { name: 'Whole org', scope: 'organization', organization: { workspaceSelection: 'organization', permission: 'read' } },
  });
  expect(whole.status).toBe(201);
  expect(whole.body.apiKey.organization).toMatchObject({
    workspaceSelection: 'organization',
    permission: 'read',
    organizationId: expect.stringMatching(/^org_/),
  });
  const some = await http<CreatedApiKey & Partial<ApiError>>(stack.app, 'POST', '/api/api-keys', {
    cookie: creatorCookie,
    body: {
      name: 'Only B',
      scope: 'organization',
      organization: { workspaceSelection: 'selected', workspaceIds: [b.workspaceId], permission: 'read' },
    },
  });
  expect(some.status).toBe(201);

  // D: a workspace with a workflow MCP server, outside the organization for now.
  const d = await createWorkspace(stack.app, 'Org D');
  const wf = await client(stack.app, d.token).workflows.create({
    name: 'D flow',
    nodes: [{ id: 'start', type: 'start', name: 'Start', config: {}, position: { x: 0, y: 0 } }],
    edges: [],
  });
  expect(
    (
      await http(stack.app, 'POST', '/api/v1/workflow-mcp-servers', {
        token: d.token,
        body: { name: 'D tools', slug: 'dtools', tools: [{ workflowId: wf.body.workflow.id }] },
      })
    ).status,
  ).toBe(201);
  const ownerOfD = {
    kind: 'session' as const,
    sessionId: 'fixture',
    principalId: `user:${d.ownerId}`,
    userId: d.ownerId,
    workspaceId: d.workspaceId,
    role: 'owner' as const,
  };
  await grantMembership(stack.app.orm.em.fork(), ownerOfD, { email: b.ownerEmail, role: 'admin' });
  await stack.app.orm.em.fork().nativeUpdate(MembershipSchema, { workspaceId: d.workspaceId, userId: b.ownerId }, { role: 'owner' });
  const ownerDCookie = await signInCookie(stack.app, d.ownerEmail, d.ownerPassword, d.workspaceId);
  const mcpD = (token: string) => http(stack.app, 'GET', `/api/v1/workflows/mcp/${d.workspaceId}/dtools`, { token });

  expect((await http<ApiKeyList>(stack.app, 'GET', '/api/api-keys', { cookie: ownerDCookie })).body.apiKeys.map((k) => k.id)).not.toContain(
    whole.body.apiKey.id,
  );
  expect(
    (
      await http<RenamedApiKey>(stack.app, 'PATCH', `/api/api-keys/${whole.body.apiKey.id}`, {
        cookie: ownerDCookie,
        body: { name: 'Mine' },
      })
    ).status,
  ).toBe(404);
  expect((await mcpD(whole.body.token)).status).toBe(404);

  expect(
    (
      await http<OrganizationAnswer>(stack.app, 'POST', '/api/organization/workspaces', {
        cookie: creatorCookie,
        body: { workspaceId: d.workspaceId },
      })
    ).status,
  ).toBe(200);
  // D's own Owner (not the creator, not in any key's selection) now manages the organization's keys.
  const listed = (await http<ApiKeyList>(stack.app, 'GET', '/api/api-keys', { cookie: ownerDCookie })).body.apiKeys.map((k) => k.id);
  expect(listed).toEqual(expect.arrayContaining([whole.body.apiKey.id, some.body.apiKey.id]));
  const renamed = await http<RenamedApiKey>(stack.app, 'PATCH', `/api/api-keys/${some.body.apiKey.id}`, {
    cookie: ownerDCookie,
    body: { name: 'Only B (renamed by D)' },
  });
  expect(renamed.status).toBe(200);
  expect(renamed.body.apiKey.organization?.workspaceIds).toEqual([b.workspaceId]);
  // The organization selection reaches D now (GET after authorization is 405); the B-only key does not (404).
  expect((await mcpD(whole.body.token)).status).toBe(405);
  expect((await mcpD(some.body.token)).status).toBe(404);
  // C is still outside: its Owner sees none of these keys.
  expect((await http<ApiKeyList>(stack.app, 'GET', '/api/api-keys', { cookie: ownerCCookie })).body.apiKeys.map((k) => k.id)).not.toContain(
    whole.body.apiKey.id,
  );
  expect((await http(stack.app, 'DELETE', `/api/api-keys/${whole.body.apiKey.id}`, { cookie: ownerCCookie })).status).toBe(404);
  const revoked = await http(stack.app, 'DELETE', `/api/api-keys/${whole.body.apiKey.id}`, { cookie: ownerDCookie });
  expect(revoked.status).toBe(200);
  expect((await mcpD(whole.body.token)).status).toBe(401);
  const audits = (action: string, keyId: string) =>
    stack.app.orm.em.fork().find(AuditLogSchema, { action, targetId: keyId }, { orderBy: { workspaceId: 'asc' } });
  // A whole-organization key reaches D: not a cross-workspace change, one entry in D.
  expect(await audits('api_key.revoke', whole.body.apiKey.id)).toEqual([
    expect.objectContaining({
      workspaceId: d.workspaceId,
      severity: 'critical',
      actorUserId: d.ownerId,
      metadata: expect.objectContaining({ crossWorkspace: false, actorWorkspaceId: d.workspaceId }),
    }),
  ]);

  // D's Owner renamed and now revokes a key selecting only B: allowed (the contract), and B's audit trail shows who did it from D.
  expect((await http(stack.app, 'DELETE', `/api/api-keys/${some.body.apiKey.id}`, { cookie: ownerDCookie })).status).toBe(200);
  const orgId = whole.body.apiKey.organization?.organizationId;
  const cross = (severity: string, extra: Record<string, unknown>) =>
    [b.workspaceId, d.workspaceId].sort().map((workspaceId) =>
      expect.objectContaining({
        workspaceId,
        severity,
        actorUserId: d.ownerId,
        actorApiKeyId: null,
        targetType: 'api_key',
        targetId: some.body.apiKey.id,
        metadata: {
          ...extra,
          scope: 'organization',
          organizationId: orgId,
          workspaceSelection: 'selected',
          keyWorkspaceIds: [b.workspaceId],
          actorWorkspaceId: d.workspaceId,
          crossWorkspace: true,
        },
      }),
    );
  expect(await audits('api_key.rename', some.body.apiKey.id)).toEqual(cross('warning', { from: 'Only B', to: 'Only B (renamed by D)' }));
  expect(await audits('api_key.revoke', some.body.apiKey.id)).toEqual(cross('critical', { name: 'Only B (renamed by D)' }));
});
