/**
 * The workflows API over real HTTP, PostgreSQL and Temporal: create (blank, template,
 * duplicate, import, placeholder), read, portable export, update, trash, deploy/undeploy,
 * delete, import preview, versions, validation, workspace isolation and key scopes.
 */
import { RunSchema, WorkflowSchema, WorkflowVersionSchema } from '../../../db/entities';
import { TEMPLATES } from '../../../engine/templates';
import type { z } from 'zod';
import type {
  importPreviewSchema,
  portableWorkflowSchema,
  restoredWorkflowSchema,
  validationResultSchema,
  workflowLinksSchema,
  workflowVersionSchema,
} from '../../../api/schemas/workflows';
import {
  addUserWithKey,
  createWorkspace,
  useTestStack,
  nodesOf,
  type CreatedWorkflow,
  type DeployResult,
  type QueuedReceipt,
  type Refusable,
  type UpdatedWorkflow,
  type Workflow,
  type WorkflowList,
  type WorkflowWithLinks,
  type WorkspaceFixture,
} from '../../kit';

type WorkflowLinks = z.infer<typeof workflowLinksSchema>;
type Portable = z.infer<typeof portableWorkflowSchema>;
type ImportPreview = Refusable<z.infer<typeof importPreviewSchema>>;
type Validation = Refusable<z.infer<typeof validationResultSchema>>;
type Versions = Refusable<{ versions: Array<z.infer<typeof workflowVersionSchema>> }>;
type Restored = Refusable<z.infer<typeof restoredWorkflowSchema>>;
/** A 400 of body validation lists the zod issues. */
type Invalid = { issues?: Array<{ message: string }> };
/** A refused deploy carries the readiness payload. */
type NotReady = Partial<z.infer<typeof validationResultSchema>>;

const stack = useTestStack({ worker: false, workspaceName: 'Workflows A' });
let a: WorkspaceFixture;
let b: WorkspaceFixture;

beforeAll(async () => {
  a = stack.ws;
  b = await createWorkspace(stack.app, 'Workflows B');
});

const WF = '/api/v1/workflows';
const FORBIDDEN_WORKFLOW = { error: 'API key cannot access this workflow' };
const WORKSPACE_KEY_REQUIRED = { error: 'A workspace API key is required.' };
const WRITE_REQUIRED = { error: 'Write permission is required.' };

/** Calls as `token` (default: workspace A's owner), the answer typed as `T` (see the call). */
const get = <T = Refusable<object>>(path: string, token = a.token) => stack.as(token).get<T>(path);
const post = <T = Refusable<object>>(path: string, body?: unknown, token = a.token) => stack.as(token).post<T>(path, body);
const patch = <T = Refusable<UpdatedWorkflow>>(path: string, body: unknown, token = a.token) => stack.as(token).patch<T>(path, body);
const del = <T = Refusable<{ deleted: true }>>(path: string, token = a.token) => stack.as(token).delete<T>(path);

/** A valid two-node graph; `tag` makes graphs differ so deploys pin new versions. */
function validGraph(tag = 'one') {
  return {
    nodes: [
      { id: 'start', type: 'start', name: 'Start', config: {}, position: { x: 0, y: 0 } },
      { id: 'shape', type: 'transform', name: 'Shape', config: { expression: `{ "tag": "${tag}", "in": $ }` }, position: { x: 250, y: 0 } },
    ],
    edges: [{ id: 'start-shape', source: 'start', target: 'shape' }],
  };
}

async function createWorkflow(body: Record<string, unknown> = {}, token = a.token): Promise<{ id: string; workflow: Workflow }> {
  const res = await post<Refusable<CreatedWorkflow>>(WF, body, token);
  expect(res.status).toBe(201);
  return { id: res.body.workflow.id, workflow: res.body.workflow };
}

async function readWorkflow(id: string, token = a.token): Promise<Workflow> {
  const res = await get<Refusable<WorkflowWithLinks>>(`${WF}/${id}`, token);
  expect(res.status).toBe(200);
  return res.body.workflow;
}

const countWorkflows = (workspaceId: string) => stack.app.orm.em.fork().count(WorkflowSchema, { workspaceId });

function expectLinks(links: WorkflowLinks, id: string) {
  const base = `${stack.app.url}${WF}/${id}`;
  expect(links).toEqual({
    self: base,
    version: `${base}/versions`,
    validate: `${base}/validate`,
    execute: `${base}/execute`,
    status: `${base}/status`,
    portable: `${base}?format=portable`,
    deploy: `${base}/deploy`,
  });
  for (const url of Object.values(links as Record<string, string>)) expect(new URL(url).origin).toBe(stack.app.url);
}

describe('POST /api/v1/workflows', () => {
  test('an empty body creates a blank draft with a single start trigger, with absolute links', async () => {
    const res = await post<Refusable<CreatedWorkflow>>(WF, {});
    expect(res.status).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual(['links', 'workflow']);
    const wf = res.body.workflow;
    expect(wf).toMatchObject({ workspaceId: a.workspaceId, status: 'draft', trashed: false, activeVersionId: null, edges: [] });
    expect(typeof wf.name).toBe('string');
    expect(wf.name.length).toBeGreaterThan(0);
    expect(wf.nodes).toHaveLength(1);
    expect(wf.nodes[0].type).toBe('start');
    expectLinks(res.body.links, wf.id);
    const validation = await get<Validation>(`${WF}/${wf.id}/validate`);
    expect(validation.body.report.valid).toBe(true);
    expect(validation.body.deploymentReadiness.ready).toBe(true);
  });

  test('a request without any body also creates a blank draft', async () => {
    const res = await post<Refusable<CreatedWorkflow>>(WF);
    expect(res.status).toBe(201);
    expect(res.body.workflow.nodes.map((n) => n.type)).toEqual(['start']);
  });

  test('name names the new workflow', async () => {
    const { id, workflow } = await createWorkflow({ name: 'Invoice intake' });
    expect(workflow.name).toBe('Invoice intake');
    expect((await readWorkflow(id)).name).toBe('Invoice intake');
  });

  test.each(TEMPLATES.map((t) => [t.key, t] as const))('templateKey %s creates a valid draft of that template', async (key, template) => {
    const res = await post<Refusable<CreatedWorkflow>>(WF, { templateKey: key });
    expect(res.status).toBe(201);
    const wf = res.body.workflow;
    expect(wf).toMatchObject({ status: 'draft', templateKey: key, name: template.name, description: template.description });
    expect(wf.nodes).toEqual(template.nodes);
    expect(wf.edges).toEqual(template.edges);
    expectLinks(res.body.links, wf.id);
    const validation = await get<Validation>(`${WF}/${wf.id}/validate`);
    expect(validation.status).toBe(200);
    expect(validation.body.report).toMatchObject({ valid: true, errors: [] });
    expect(validation.body.deploymentReadiness).toEqual({ ready: true, blockers: [] });
  });

  test('a template with a name keeps the template graph under the given name', async () => {
    const { workflow } = await createWorkflow({ templateKey: 'approval-flow', name: 'Expense approval' });
    expect(workflow.name).toBe('Expense approval');
    expect(workflow.nodes.map((n) => n.id)).toEqual(TEMPLATES.find((t) => t.key === 'approval-flow')!.nodes.map((n) => n.id));
  });

  test('an unknown templateKey is a 400 and creates nothing', async () => {
    const before = await countWorkflows(a.workspaceId);
    const res = await post<Refusable<CreatedWorkflow>>(WF, { templateKey: 'no-such-template' });
    expect(res.status).toBe(400);
    expect(res.body.error).toContain('no-such-template');
    expect(await countWorkflows(a.workspaceId)).toBe(before);
  });

  test('sourceWorkflowId duplicates a workflow of the workspace as a new draft', async () => {
    const source = await createWorkflow({ name: 'Original', description: 'the source', ...validGraph('dup') });
    expect((await post<Refusable<DeployResult>>(`${WF}/${source.id}/deploy`)).status).toBe(200);
    const res = await post<Refusable<CreatedWorkflow>>(WF, { sourceWorkflowId: source.id });
    expect(res.status).toBe(201);
    const copy = res.body.workflow;
    expect(copy.id).not.toBe(source.id);
    expect(copy).toMatchObject({ status: 'draft', activeVersionId: null, sourceWorkflowId: source.id, description: 'the source' });
    expect(copy.name).toContain('Original');
    expect(copy.nodes).toEqual(validGraph('dup').nodes);
    expect(copy.edges).toEqual(validGraph('dup').edges);
    expectLinks(res.body.links, copy.id);
    // The source is untouched.
    expect((await readWorkflow(source.id)).status).toBe('deployed');
  });

  test("sourceWorkflowId of another workspace's workflow is a 403 and copies nothing", async () => {
    const foreign = await createWorkflow({ name: 'Secret of B', ...validGraph('b') }, b.token);
    const before = await countWorkflows(a.workspaceId);
    const res = await post<Refusable<CreatedWorkflow>>(WF, { sourceWorkflowId: foreign.id });
    expect(res.status).toBe(403);
    expect(res.body).toEqual(FORBIDDEN_WORKFLOW);
    expect(await countWorkflows(a.workspaceId)).toBe(before);
  });

  test('sourceWorkflowId of an unknown workflow is a 404', async () => {
    const res = await post<Refusable<CreatedWorkflow>>(WF, { sourceWorkflowId: 'wf_does_not_exist' });
    expect(res.status).toBe(404);
  });

  test('importJson in the portable shape round-trips GET ?format=portable', async () => {
    const source = await createWorkflow({ name: 'Exported', description: 'exported then imported', ...validGraph('rt') });
    const exported = await get<Refusable<Portable>>(`${WF}/${source.id}?format=portable`);
    expect(exported.status).toBe(200);
    const res = await post<Refusable<CreatedWorkflow>>(WF, { importJson: JSON.stringify(exported.body) });
    expect(res.status).toBe(201);
    const imported = res.body.workflow;
    expect(imported.id).not.toBe(source.id);
    expect(imported).toMatchObject({ status: 'draft', name: 'Exported', description: 'exported then imported' });
    expect(imported.nodes).toEqual(exported.body.nodes);
    expect(imported.edges).toEqual(exported.body.edges);
    expect(res.body.importReadiness?.report.valid).toBe(true);
    expectLinks(res.body.links, imported.id);
    // And exporting the import gives the same document.
    expect((await get<Refusable<Portable>>(`${WF}/${imported.id}?format=portable`)).body).toEqual(exported.body);
  });

  test('importJson of an external-tool export is converted into a draft that lists what it could not map', async () => {
    const external = {
      name: 'From the other tool',
      nodes: [
        { id: '1', name: 'When clicking', type: 'extflow-nodes-base.manualTrigger', typeVersion: 1, position: [0, 0], parameters: {} },
        {
          id: '2',
          name: 'HTTP Request',
          type: 'extflow-nodes-base.httpRequest',
          typeVersion: 4.2,
          position: [200, 0],
          parameters: { url: 'https://example.com' },
        },
      ],
      connections: { 'When clicking': { main: [[{ node: 'HTTP Request', type: 'main', index: 0 }]] } },
    };
    const before = await countWorkflows(a.workspaceId);
    const res = await post<Refusable<CreatedWorkflow>>(WF, { importJson: JSON.stringify(external) });
    // Unknown node types (test/integration/extflow covers the real ones) stay as placeholders, listed, and block deploy.
    expect(res.status).toBe(201);
    expect(res.body.workflow.status).toBe('draft');
    expect(res.body.importReadiness?.deploymentReadiness.ready).toBe(false);
    expect(res.body.importReadiness?.conversion?.unsupported.map((u: { node: string }) => u.node)).toEqual([
      'When clicking',
      'HTTP Request',
    ]);
    expect(await countWorkflows(a.workspaceId)).toBe(before + 1);
  });

  test.each([
    ['invalid JSON', '{ "name": "broken", '],
    ['a JSON array', '[1, 2, 3]'],
    ['an object without nodes', '{ "name": "no nodes" }'],
  ])('importJson that is %s is a 400', async (_what, importJson) => {
    const before = await countWorkflows(a.workspaceId);
    const res = await post<Refusable<CreatedWorkflow>>(WF, { importJson });
    expect(res.status).toBe(400);
    expect(typeof res.body.error).toBe('string');
    expect(await countWorkflows(a.workspaceId)).toBe(before);
  });

  test('invalid JSON in importJson names the problem', async () => {
    const res = await post<Refusable<CreatedWorkflow>>(WF, { importJson: 'not json at all' });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('importJson is not valid JSON.');
  });

  test('importBundleJson is refused with a 400', async () => {
    const before = await countWorkflows(a.workspaceId);
    const res = await post<Refusable<CreatedWorkflow>>(WF, { importBundleJson: JSON.stringify({ workflows: [] }) });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/importBundleJson/);
    expect(await countWorkflows(a.workspaceId)).toBe(before);
  });

  test('subWorkflowPlaceholder creates a named draft with a start trigger', async () => {
    const res = await post<Refusable<CreatedWorkflow>>(WF, {
      subWorkflowPlaceholder: { name: 'Enrich lead', sourceNodeId: 'call', sourceNodeLabel: 'Call enrichment' },
    });
    expect(res.status).toBe(201);
    const wf = res.body.workflow;
    expect(wf).toMatchObject({ name: 'Enrich lead', status: 'draft' });
    expect(wf.description).toContain('Call enrichment');
    expect(wf.nodes.map((n) => n.type)).toEqual(['start']);
    expectLinks(res.body.links, wf.id);
  });

  test.each([
    ['templateKey and importJson', { templateKey: 'blank-start', importJson: JSON.stringify(validGraph()) }],
    ['templateKey and subWorkflowPlaceholder', { templateKey: 'blank-start', subWorkflowPlaceholder: { name: 'x' } }],
    ['sourceWorkflowId and templateKey', { sourceWorkflowId: 'wf_x', templateKey: 'blank-start' }],
  ])('two sources at once (%s) is a 400', async (_what, body) => {
    const before = await countWorkflows(a.workspaceId);
    const res = await post<Refusable<CreatedWorkflow>>(WF, body);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/at most one/i);
    expect(await countWorkflows(a.workspaceId)).toBe(before);
  });

  test('an unknown body field is a 400', async () => {
    const before = await countWorkflows(a.workspaceId);
    const res = await post<Refusable<CreatedWorkflow> & Invalid>(WF, { name: 'x', versionMode: 'live' });
    expect(res.status).toBe(400);
    expect(res.body.issues).toEqual(expect.arrayContaining([expect.objectContaining({ message: expect.stringContaining('versionMode') })]));
    expect(await countWorkflows(a.workspaceId)).toBe(before);
  });

  test('a body naming another workspace cannot create the workflow there', async () => {
    const beforeB = await countWorkflows(b.workspaceId);
    const res = await post<Refusable<CreatedWorkflow>>(WF, { name: 'sneaky', workspaceId: b.workspaceId });
    expect(res.status).toBe(400);
    expect(await countWorkflows(b.workspaceId)).toBe(beforeB);
  });
});

describe('GET /api/v1/workflows and /workflows/{id}', () => {
  test('the list holds non-trashed workflows of the workspace only, with links', async () => {
    const kept = await createWorkflow({ name: 'Listed' });
    const trashed = await createWorkflow({ name: 'Trashed' });
    expect((await patch(`${WF}/${trashed.id}`, { trashed: true })).status).toBe(200);
    const foreign = await createWorkflow({ name: 'Of B' }, b.token);

    const res = await get<Refusable<WorkflowList>>(WF);
    expect(res.status).toBe(200);
    const ids = res.body.workflows.map((w) => w.id);
    expect(ids).toContain(kept.id);
    expect(ids).not.toContain(trashed.id);
    expect(ids).not.toContain(foreign.id);
    for (const w of res.body.workflows) {
      expect(w.workspaceId).toBe(a.workspaceId);
      expect(w.trashed).toBe(false);
    }
    expect(res.body.links).toHaveLength(res.body.workflows.length);
    res.body.workflows.forEach((w, i) => expectLinks(res.body.links[i], w.id));
  });

  test('GET one returns { workflow, links }', async () => {
    const { id } = await createWorkflow({ name: 'Single', description: 'desc', ...validGraph('get') });
    const res = await get<Refusable<WorkflowWithLinks>>(`${WF}/${id}`);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['links', 'workflow']);
    expect(res.body.workflow).toMatchObject({
      id,
      name: 'Single',
      description: 'desc',
      nodes: validGraph('get').nodes,
      edges: validGraph('get').edges,
    });
    expect(res.body.workflow.redaction).toBeUndefined();
    expectLinks(res.body.links, id);
  });

  test('GET ?format=portable is exactly { name, description, nodes, edges }', async () => {
    const { id } = await createWorkflow({ name: 'Portable', description: 'to export', ...validGraph('p') });
    const res = await get<Refusable<Portable>>(`${WF}/${id}?format=portable`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ name: 'Portable', description: 'to export', nodes: validGraph('p').nodes, edges: validGraph('p').edges });
  });

  test('an unknown id is a 404', async () => {
    const res = await get<Refusable<WorkflowWithLinks>>(`${WF}/wf_unknown`);
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: 'Workflow not found' });
  });
});

describe('PATCH /api/v1/workflows/{id}', () => {
  test('name, description, nodes and edges are updated', async () => {
    const { id, workflow } = await createWorkflow({ name: 'Before', ...validGraph('before') });
    const next = validGraph('after');
    const res = await patch(`${WF}/${id}`, { name: 'After', description: 'changed', nodes: next.nodes, edges: next.edges });
    expect(res.status).toBe(200);
    expect(res.body.workflow).toMatchObject({ id, name: 'After', description: 'changed', nodes: next.nodes, edges: next.edges });
    expect(res.body.workflow.candidateVersionId).not.toBe(workflow.candidateVersionId);
    expectLinks(res.body.links, id);
    expect(await readWorkflow(id)).toMatchObject({ name: 'After', description: 'changed', nodes: next.nodes, edges: next.edges });
  });

  test('trashed: true hides the workflow from the list; trashed: false brings it back', async () => {
    const { id } = await createWorkflow({ name: 'Trash me' });
    const trashed = await patch(`${WF}/${id}`, { trashed: true });
    expect(trashed.status).toBe(200);
    expect(trashed.body.workflow.trashed).toBe(true);
    expect((await get<Refusable<WorkflowList>>(WF)).body.workflows.map((w) => w.id)).not.toContain(id);
    expect((await readWorkflow(id)).trashed).toBe(true);

    const restored = await patch(`${WF}/${id}`, { trashed: false });
    expect(restored.status).toBe(200);
    expect(restored.body.workflow.trashed).toBe(false);
    expect((await get<Refusable<WorkflowList>>(WF)).body.workflows.map((w) => w.id)).toContain(id);
  });

  test('an invalid status is a 400 and changes nothing', async () => {
    const { id } = await createWorkflow({ name: 'Status check' });
    const before = await readWorkflow(id);
    const res = await patch(`${WF}/${id}`, { status: 'published', name: 'Should not stick' });
    expect(res.status).toBe(400);
    expect(res.body.error).toEqual(expect.any(String));
    expect(await readWorkflow(id)).toEqual(before);
  });

  test.each([
    ['versionMode', { versionMode: 'live' }],
    ['collaborationSessionId', { collaborationSessionId: 'c1' }],
  ])('%s is not accepted', async (_field, body) => {
    const { id } = await createWorkflow({ name: 'Strict patch' });
    const res = await patch(`${WF}/${id}`, body);
    expect(res.status).toBe(400);
  });

  test('importJson replaces the graph, returns the workflow to draft and reports importReadiness', async () => {
    const { id } = await createWorkflow({ name: 'Deployed then replaced', ...validGraph('v1') });
    expect((await post<Refusable<DeployResult>>(`${WF}/${id}/deploy`)).status).toBe(200);
    expect((await readWorkflow(id)).status).toBe('deployed');

    const replacement = { name: 'Replaced', description: 'imported over', ...validGraph('imported') };
    const res = await patch<Refusable<CreatedWorkflow>>(`${WF}/${id}`, { importJson: JSON.stringify(replacement) });
    expect(res.status).toBe(200);
    expect(res.body.workflow).toMatchObject({
      status: 'draft',
      name: 'Replaced',
      description: 'imported over',
      nodes: replacement.nodes,
      edges: replacement.edges,
    });
    expect(res.body.importReadiness).toEqual({
      report: expect.objectContaining({ valid: true, errors: [] }),
      deploymentReadiness: { ready: true, blockers: [] },
    });
    expect((await readWorkflow(id)).status).toBe('draft');
  });

  test('status: deployed deploys, with the same response shape as POST /deploy', async () => {
    const viaPatch = await createWorkflow({ name: 'Deploy by patch', ...validGraph('patch-deploy') });
    const viaPost = await createWorkflow({ name: 'Deploy by post', ...validGraph('post-deploy') });
    const patched = await patch<Refusable<DeployResult>>(`${WF}/${viaPatch.id}`, { status: 'deployed' });
    const posted = await post<Refusable<DeployResult>>(`${WF}/${viaPost.id}/deploy`);
    expect(patched.status).toBe(200);
    expect(posted.status).toBe(200);
    expect(Object.keys(patched.body).sort()).toEqual(Object.keys(posted.body).sort());
    expect(Object.keys(patched.body.links).sort()).toEqual(Object.keys(posted.body.links).sort());
    expect(patched.body.workflow).toMatchObject({ status: 'deployed', activeVersion: 1 });
    expect(patched.body.version).toBe(1);
    expect(patched.body.synchronizedVersionId).toBe(patched.body.workflow.activeVersionId);
    const versions = await get<Versions>(`${WF}/${viaPatch.id}/versions`);
    expect(versions.body.versions).toHaveLength(1);
  });

  test('status: deployed of an invalid draft is a 400 with the readiness payload', async () => {
    const { id } = await createWorkflow({
      name: 'Broken patch deploy',
      nodes: [{ id: 'x', type: 'transform', config: { expression: '1' } }],
      edges: [],
    });
    const res = await patch<Refusable<DeployResult> & NotReady>(`${WF}/${id}`, { status: 'deployed' });
    expect(res.status).toBe(400);
    expect(res.body.deploymentReadiness?.ready).toBe(false);
    expect(res.body.report?.valid).toBe(false);
    expect((await get<Versions>(`${WF}/${id}/versions`)).body.versions).toEqual([]);
    expect((await readWorkflow(id)).status).toBe('draft');
  });

  test('POST /deploy of an invalid draft is a 400 { error, report, deploymentReadiness } and pins nothing', async () => {
    const { id } = await createWorkflow({
      name: 'Broken deploy',
      nodes: [{ id: 'x', type: 'transform', config: { expression: '1' } }],
      edges: [],
    });
    const res = await post<Refusable<DeployResult> & NotReady>(`${WF}/${id}/deploy`);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({
      error: 'Workflow is not ready to deploy.',
      report: { valid: false },
      deploymentReadiness: { ready: false },
    });
    expect(res.body.deploymentReadiness?.blockers.length).toBeGreaterThan(0);
    expect((await get<Versions>(`${WF}/${id}/versions`)).body.versions).toEqual([]);
    expect(await readWorkflow(id)).toMatchObject({ status: 'draft', activeVersionId: null, activeVersion: null });
  });

  test('status: draft undeploys: executing the active target is then a 400', async () => {
    const { id } = await createWorkflow({ name: 'Undeploy me', ...validGraph('undeploy') });
    expect((await post<Refusable<DeployResult>>(`${WF}/${id}/deploy`)).status).toBe(200);
    const res = await patch(`${WF}/${id}`, { status: 'draft' });
    expect(res.status).toBe(200);
    expect(res.body.workflow).toMatchObject({ status: 'draft', activeVersionId: null, activeVersion: null });
    const exec = await post<Refusable<QueuedReceipt>>(`${WF}/${id}/execute`, { target: 'active', input: {} });
    expect(exec.status).toBe(400);
    expect(exec.body.error).toMatch(/no deployed version/i);
    expect(await stack.app.orm.em.fork().count(RunSchema, { workflowId: id })).toBe(0);
  });

  test('a blank name is a 400', async () => {
    const { id } = await createWorkflow({ name: 'Named' });
    const res = await patch(`${WF}/${id}`, { name: '   ' });
    expect(res.status).toBe(400);
    expect((await readWorkflow(id)).name).toBe('Named');
  });
});

describe('DELETE /api/v1/workflows/{id}', () => {
  test('deletes the workflow (and its versions); GET is then a 404', async () => {
    const { id } = await createWorkflow({ name: 'Delete me', ...validGraph('del') });
    expect((await post<Refusable<DeployResult>>(`${WF}/${id}/deploy`)).status).toBe(200);
    const res = await del(`${WF}/${id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ deleted: true });
    expect((await get<Refusable<WorkflowWithLinks>>(`${WF}/${id}`)).status).toBe(404);
    expect((await get<Versions>(`${WF}/${id}/versions`)).status).toBe(404);
    expect((await get<Refusable<WorkflowList>>(WF)).body.workflows.map((w) => w.id)).not.toContain(id);
    expect(await stack.app.orm.em.fork().count(WorkflowVersionSchema, { workflowId: id })).toBe(0);
    expect((await del(`${WF}/${id}`)).status).toBe(404);
  });
});

describe('POST /api/v1/workflows/import-preview', () => {
  test('previews an import without persisting anything', async () => {
    const before = await countWorkflows(a.workspaceId);
    const doc = { name: 'Previewed', description: 'only a preview', ...validGraph('preview') };
    const res = await post<ImportPreview>(`${WF}/import-preview`, { importJson: JSON.stringify(doc) });
    expect(res.status).toBe(200);
    expect(res.body.preview).toEqual(doc);
    expect(res.body.persisted).toBe(false);
    expect(res.body.importReadiness.deploymentReadiness).toEqual({ ready: true, blockers: [] });
    expect(await countWorkflows(a.workspaceId)).toBe(before);
  });

  test('reports readiness problems of an invalid import, still persisting nothing', async () => {
    const before = await countWorkflows(a.workspaceId);
    const doc = { name: 'No trigger', nodes: [{ id: 't', type: 'transform', config: { expression: '1' } }], edges: [] };
    const res = await post<ImportPreview>(`${WF}/import-preview`, { importJson: JSON.stringify(doc) });
    expect(res.status).toBe(200);
    expect(res.body.importReadiness?.deploymentReadiness.ready).toBe(false);
    expect(res.body.importReadiness.report.errors.map((e) => e.code)).toContain('no_trigger');
    expect(await countWorkflows(a.workspaceId)).toBe(before);
  });

  test('without importJson or importBundleJson it is a 400', async () => {
    const res = await post<ImportPreview>(`${WF}/import-preview`, {});
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/importJson/);
  });

  test('an external-tool export and invalid JSON are 400s there too', async () => {
    const before = await countWorkflows(a.workspaceId);
    const external = { nodes: [{ id: '1', type: 'extflow.trigger', typeVersion: 1, parameters: {} }], connections: {} };
    expect((await post<ImportPreview>(`${WF}/import-preview`, { importJson: JSON.stringify(external) })).status).toBe(400);
    expect((await post<ImportPreview>(`${WF}/import-preview`, { importJson: '{oops' })).status).toBe(400);
    expect(await countWorkflows(a.workspaceId)).toBe(before);
  });
});

describe('versions', () => {
  test('deploy pins 1 then 2 after a change; an unchanged draft pins nothing; restore copies into the draft only', async () => {
    const { id } = await createWorkflow({ name: 'Versioned', ...validGraph('v1') });
    expect((await get<Versions>(`${WF}/${id}/versions`)).body).toEqual({ versions: [] });

    const first = await post<Refusable<DeployResult>>(`${WF}/${id}/deploy`);
    expect(first.status).toBe(200);
    expect(first.body.version).toBe(1);
    expect(first.body.workflow).toMatchObject({ status: 'deployed', activeVersion: 1 });

    const v2Graph = validGraph('v2');
    expect((await patch(`${WF}/${id}`, { nodes: v2Graph.nodes, edges: v2Graph.edges })).status).toBe(200);
    const second = await post<Refusable<DeployResult>>(`${WF}/${id}/deploy`);
    expect(second.status).toBe(200);
    expect(second.body.version).toBe(2);
    expect(second.body.synchronizedVersionId).not.toBe(first.body.synchronizedVersionId);

    const listed = await get<Versions>(`${WF}/${id}/versions`);
    expect(listed.status).toBe(200);
    expect(listed.body.versions.map((v) => [v.version, v.active])).toEqual([
      [2, true],
      [1, false],
    ]);
    expect(listed.body.versions[0].id).toBe(second.body.synchronizedVersionId);

    // Deploying the unchanged draft does not pin a new version.
    const again = await post<Refusable<DeployResult>>(`${WF}/${id}/deploy`);
    expect(again.status).toBe(200);
    expect(again.body.version).toBe(2);
    expect(again.body.synchronizedVersionId).toBe(second.body.synchronizedVersionId);
    expect((await get<Versions>(`${WF}/${id}/versions`)).body.versions).toHaveLength(2);

    // Restore v1: the draft becomes v1's graph, the active version stays 2.
    const restored = await post<Restored>(`${WF}/${id}/versions/1/restore`);
    expect(restored.status).toBe(200);
    expect(restored.body.restoredVersion).toBe(1);
    expect(restored.body.workflow).toMatchObject({
      nodes: validGraph('v1').nodes,
      edges: validGraph('v1').edges,
      activeVersion: 2,
      activeVersionId: second.body.synchronizedVersionId,
    });
    const after = await readWorkflow(id);
    expect(after.nodes).toEqual(validGraph('v1').nodes);
    expect(after.activeVersion).toBe(2);
    expect((await get<Versions>(`${WF}/${id}/versions`)).body.versions.map((v) => [v.version, v.active])).toEqual([
      [2, true],
      [1, false],
    ]);
  });

  test('deploys of one unchanged draft sent at the same time pin a single version', async () => {
    const { id } = await createWorkflow({ name: 'Double click', ...validGraph('concurrent') });
    const results = await Promise.all(Array.from({ length: 4 }, () => post<Refusable<DeployResult>>(`${WF}/${id}/deploy`)));
    for (const r of results) expect(r.status).toBe(200);
    const versions = (await get<Versions>(`${WF}/${id}/versions`)).body.versions;
    expect(versions.map((v) => v.version)).toEqual([1]);
    expect(new Set(results.map((r) => r.body.synchronizedVersionId))).toEqual(new Set([versions[0].id]));
  });

  test.each([['0'], ['abc'], ['-1'], ['1.5']])('restoring version %s is a 400', async (version) => {
    const { id } = await createWorkflow({ name: 'Restore bad', ...validGraph('rb') });
    expect((await post<Refusable<DeployResult>>(`${WF}/${id}/deploy`)).status).toBe(200);
    const before = await readWorkflow(id);
    const res = await post<Restored>(`${WF}/${id}/versions/${version}/restore`);
    expect(res.status).toBe(400);
    expect(await readWorkflow(id)).toEqual(before);
  });

  test('restoring a missing version is a 404', async () => {
    const { id } = await createWorkflow({ name: 'Restore missing', ...validGraph('rm') });
    expect((await post<Refusable<DeployResult>>(`${WF}/${id}/deploy`)).status).toBe(200);
    const res = await post<Restored>(`${WF}/${id}/versions/7/restore`);
    expect(res.status).toBe(404);
    expect(res.body.error).toMatch(/Version 7/);
  });
});

describe('validation', () => {
  /** One graph with every kind of problem the brief names, each on a known node or edge. */
  const brokenGraph = {
    nodes: [
      { id: 'start', type: 'start', config: {} },
      { id: 'mystery', type: 'teleport', config: {} },
      { id: 'badlog', type: 'log', config: { level: 'loud', message: 'x' } },
      { id: 'badexpr', type: 'transform', config: { expression: '$$$ (((' } },
      { id: 'island', type: 'log', config: { level: 'info', message: 'alone' } },
      { id: 'loopA', type: 'merge', config: {} },
      { id: 'loopB', type: 'transform', config: { expression: '$' } },
    ],
    edges: [
      { id: 'e-mystery', source: 'start', target: 'mystery' },
      { id: 'e-badlog', source: 'start', target: 'badlog' },
      { id: 'e-badexpr', source: 'start', target: 'badexpr' },
      { id: 'e-dangling', source: 'start', target: 'ghost' },
      { id: 'e-loop-in', source: 'start', target: 'loopA' },
      { id: 'e-loop-ab', source: 'loopA', target: 'loopB' },
      { id: 'e-loop-ba', source: 'loopB', target: 'loopA' },
    ],
  };
  const noTriggerGraph = { nodes: [{ id: 'lonely', type: 'transform', config: { expression: '1' } }], edges: [] };

  function expectEveryProblem(body: NotReady) {
    const errors = body.report?.errors ?? [];
    expect(body.report?.valid).toBe(false);
    expect(errors).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ code: 'unknown_type', nodeId: 'mystery', message: expect.stringContaining('teleport') }),
        expect.objectContaining({ code: 'invalid_config', nodeId: 'badlog', message: expect.stringContaining('level') }),
        expect.objectContaining({ code: 'invalid_expression', nodeId: 'badexpr', message: expect.any(String) }),
        expect.objectContaining({ code: 'dangling_edge', edgeId: 'e-dangling', message: expect.stringContaining('ghost') }),
        expect.objectContaining({ code: 'unreachable_node', nodeId: 'island', message: expect.stringContaining('island') }),
        expect.objectContaining({ code: 'cycle', nodeId: 'loopA', message: expect.stringContaining('loopB') }),
      ]),
    );
    for (const e of errors) {
      expect(typeof e.message).toBe('string');
      expect(e.message.length).toBeGreaterThan(0);
    }
    expect(body.deploymentReadiness?.ready).toBe(false);
    expect(body.deploymentReadiness?.blockers.length).toBe(errors.length);
    for (const node of ['mystery', 'badlog', 'badexpr', 'island', 'loopA']) {
      expect(body.deploymentReadiness?.blockers.some((b: string) => b.startsWith(`${node}: `))).toBe(true);
    }
  }

  test('GET /validate of a saved invalid draft lists every problem with its node and message', async () => {
    const { id } = await createWorkflow({ name: 'Broken', ...brokenGraph });
    const res = await get<Validation>(`${WF}/${id}/validate`);
    expect(res.status).toBe(200);
    expectEveryProblem(res.body);
  });

  test('GET /validate of a draft without a trigger reports no_trigger', async () => {
    const { id } = await createWorkflow({ name: 'No trigger', ...noTriggerGraph });
    const res = await get<Validation>(`${WF}/${id}/validate`);
    expect(res.status).toBe(200);
    expect(res.body.report.valid).toBe(false);
    expect(res.body.report.errors).toEqual(
      expect.arrayContaining([expect.objectContaining({ code: 'no_trigger', message: expect.stringMatching(/trigger/) })]),
    );
    expect(res.body.deploymentReadiness.ready).toBe(false);
  });

  test('POST /validate checks a body without saving it', async () => {
    const { id } = await createWorkflow({ name: 'Valid saved', ...validGraph('saved') });
    const before = await readWorkflow(id);

    const res = await post<Validation>(`${WF}/${id}/validate`, brokenGraph);
    expect(res.status).toBe(200);
    expectEveryProblem(res.body);

    const noTrigger = await post<Validation>(`${WF}/${id}/validate`, noTriggerGraph);
    expect(noTrigger.status).toBe(200);
    expect(noTrigger.body.report.errors.map((e) => e.code)).toContain('no_trigger');
    expect(noTrigger.body.deploymentReadiness.ready).toBe(false);

    expect(await readWorkflow(id)).toEqual(before);
    const saved = await get<Validation>(`${WF}/${id}/validate`);
    expect(saved.body.report.valid).toBe(true);
  });

  test('deploying an invalid draft is a 400 carrying the readiness payload, and pins no version', async () => {
    const { id } = await createWorkflow({ name: 'Broken deploy', ...brokenGraph });
    const res = await post<Refusable<DeployResult> & NotReady>(`${WF}/${id}/deploy`);
    expect(res.status).toBe(400);
    expect(res.body.error).toEqual(expect.any(String));
    expectEveryProblem(res.body);
    expect((await get<Versions>(`${WF}/${id}/versions`)).body.versions).toEqual([]);
    expect(await readWorkflow(id)).toMatchObject({ status: 'draft', activeVersionId: null });
  });
});

describe('workspace isolation', () => {
  test("with workspace B's key every workflow route on A's workflow is a 403 and changes nothing", async () => {
    const { id } = await createWorkflow({ name: 'A private', description: 'belongs to A', ...validGraph('a-v1') });
    expect((await post<Refusable<DeployResult>>(`${WF}/${id}/deploy`)).status).toBe(200);
    const draft = validGraph('a-draft');
    expect((await patch(`${WF}/${id}`, { nodes: draft.nodes, edges: draft.edges })).status).toBe(200);
    const snapshot = await readWorkflow(id);
    const versions = (await get<Versions>(`${WF}/${id}/versions`)).body.versions;
    const portable = (await get<Refusable<Portable>>(`${WF}/${id}?format=portable`)).body;
    expect(versions).toHaveLength(1);

    const attempts: Array<[string, string, unknown?]> = [
      ['GET', `${WF}/${id}`],
      ['GET', `${WF}/${id}?format=portable`],
      ['PATCH', `${WF}/${id}`, { name: 'hijacked' }],
      ['PATCH', `${WF}/${id}`, { trashed: true }],
      ['PATCH', `${WF}/${id}`, { status: 'deployed' }],
      ['PATCH', `${WF}/${id}`, { status: 'draft' }],
      ['PATCH', `${WF}/${id}`, { importJson: JSON.stringify({ name: 'hijacked', ...validGraph('hijack') }) }],
      ['DELETE', `${WF}/${id}`],
      ['POST', `${WF}/${id}/deploy`],
      ['GET', `${WF}/${id}/validate`],
      ['POST', `${WF}/${id}/validate`, validGraph('probe')],
      ['GET', `${WF}/${id}/versions`],
      ['POST', `${WF}/${id}/versions/1/restore`],
      ['POST', WF, { sourceWorkflowId: id }],
      ['POST', `${WF}/${id}/execute`, { input: {} }],
      ['POST', `${WF}/${id}/execute`, { target: 'candidate' }],
      ['GET', `${WF}/${id}/status`],
    ];
    const bCount = await countWorkflows(b.workspaceId);
    for (const [method, path, body] of attempts) {
      const res = await stack.as(b.token).request(method, path, { body });
      expect({ method, path, status: res.status, body: res.body }).toEqual({ method, path, status: 403, body: FORBIDDEN_WORKFLOW });
      expect(await readWorkflow(id)).toEqual(snapshot);
      expect((await get<Versions>(`${WF}/${id}/versions`)).body.versions).toEqual(versions);
      expect((await get<Refusable<Portable>>(`${WF}/${id}?format=portable`)).body).toEqual(portable);
    }
    expect(await countWorkflows(b.workspaceId)).toBe(bCount);
    expect(await stack.app.orm.em.fork().count(RunSchema, { workflowId: id })).toBe(0);

    const listB = await get<Refusable<WorkflowList>>(WF, b.token);
    expect(listB.status).toBe(200);
    expect(listB.body.workflows.map((w) => w.id)).not.toContain(id);
    expect(listB.text).not.toContain(a.workspaceId);
  });
});

describe('key scopes', () => {
  const SAFE_WORKFLOW_REDACTION = {
    applied: true,
    projection: 'safe-content',
    contractVersion: 'workspace-safe.v1',
    restrictedFields: ['nodes.config'],
  };

  async function expectMutationsRefused(token: string, expected: unknown) {
    const { id } = await createWorkflow({ name: 'Guarded', ...validGraph('guarded') });
    const before = await readWorkflow(id);
    const countBefore = await countWorkflows(a.workspaceId);
    const attempts: Array<[string, string, unknown?]> = [
      ['POST', WF, { name: 'not allowed' }],
      ['POST', WF, { sourceWorkflowId: id }],
      ['PATCH', `${WF}/${id}`, { name: 'not allowed' }],
      ['PATCH', `${WF}/${id}`, { status: 'deployed' }],
      ['DELETE', `${WF}/${id}`],
      ['POST', `${WF}/${id}/deploy`],
    ];
    for (const [method, path, body] of attempts) {
      const res = await stack.as(token).request(method, path, { body });
      expect({ method, path, status: res.status, body: res.body }).toEqual({ method, path, status: 403, body: expected });
    }
    expect(await readWorkflow(id)).toEqual(before);
    expect((await get<Versions>(`${WF}/${id}/versions`)).body.versions).toEqual([]);
    expect(await countWorkflows(a.workspaceId)).toBe(countBefore);
    return id;
  }

  function expectRedacted(workflow: Workflow) {
    expect(workflow.redaction).toEqual(SAFE_WORKFLOW_REDACTION);
    expect(workflow.nodes.length).toBeGreaterThan(0);
    for (const node of nodesOf(workflow)) {
      expect(node.config).toBeUndefined();
      expect(typeof node.id).toBe('string');
      expect(typeof node.type).toBe('string');
    }
  }

  test('a personal key lists and gets workflows with node configs redacted', async () => {
    const personal = await addUserWithKey(stack.app, a, 'member', 'personal');
    const { id } = await createWorkflow({
      name: 'Seen by personal key',
      nodes: [
        { id: 'start', type: 'start', config: {} },
        { id: 'call', type: 'http', config: { method: 'GET', url: 'https://internal.example/secret?token=abc' } },
      ],
      edges: [{ source: 'start', target: 'call' }],
    });

    const list = await get<Refusable<WorkflowList>>(WF, personal.token);
    expect(list.status).toBe(200);
    const listed = list.body.workflows.find((w) => w.id === id);
    expect(listed).toBeDefined();
    for (const w of list.body.workflows) expectRedacted(w);
    expect(list.text).not.toContain('token=abc');

    const one = await get<Refusable<WorkflowWithLinks>>(`${WF}/${id}`, personal.token);
    expect(one.status).toBe(200);
    expectRedacted(one.body.workflow);
    expect(one.body.workflow.nodes.map((n) => n.id)).toEqual(['start', 'call']);
    expect(one.text).not.toContain('token=abc');
  });

  test('a personal key gets 403 "A workspace API key is required." on create, patch, delete and deploy', async () => {
    const personal = await addUserWithKey(stack.app, a, 'member', 'personal');
    await expectMutationsRefused(personal.token, WORKSPACE_KEY_REQUIRED);
  });

  test('a viewer workspace key reads the safe projection and gets 403 "Write permission is required." on mutations', async () => {
    const viewer = await addUserWithKey(stack.app, a, 'viewer');
    const id = await expectMutationsRefused(viewer.token, WRITE_REQUIRED);
    const one = await get<Refusable<WorkflowWithLinks>>(`${WF}/${id}`, viewer.token);
    expect(one.status).toBe(200);
    expectRedacted(one.body.workflow);
    const restore = await post<Restored>(`${WF}/${id}/versions/1/restore`, undefined, viewer.token);
    expect(restore.status).toBe(403);
    expect(restore.body).toEqual(WRITE_REQUIRED);
  });

  test('a member workspace key gets full workflows and may write', async () => {
    const member = await addUserWithKey(stack.app, a, 'member');
    const { id } = await createWorkflow({ name: 'By member', ...validGraph('member') }, member.token);
    const one = await get<Refusable<WorkflowWithLinks>>(`${WF}/${id}`, member.token);
    expect(one.body.workflow.redaction).toBeUndefined();
    expect(one.body.workflow.nodes[1].config).toEqual(validGraph('member').nodes[1].config);
    expect((await patch(`${WF}/${id}`, { name: 'Renamed by member' }, member.token)).status).toBe(200);
  });
});
