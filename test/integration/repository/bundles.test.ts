/**
 * Repository artifacts and bundles over real HTTP and PostgreSQL: validate-artifact (object
 * and array forms, schema errors, secrets, duplicate externalIds, 400 without files),
 * importBundleJson on POST /workflows (created / updated / unchanged upsert by externalId,
 * subworkflow references resolved in the bundle and the workspace, all-or-nothing) and
 * import-preview for bundles (the same plan, nothing written), isolation between workspaces.
 */
import { WorkflowSchema } from '../../../db/entities';
import type { z } from 'zod';
import type { artifactReportSchema, bundlePreviewSchema, importedBundleSchema } from '../../../api/schemas/workflows';
import {
  addUserWithKey,
  createWorkspace,
  nodesOf,
  savedNode,
  useTestStack,
  type GraphEdge,
  type NodeInput,
  type WorkspaceFixture,
} from '../../kit';

/** The answers of these routes; on a refusal, `error` (and `invalidWorkflows` for bundles). */
type Refusal = { error?: string; invalidWorkflows?: unknown };
type ArtifactReport = z.infer<typeof artifactReportSchema> & Refusal;
type ImportedBundle = z.infer<typeof importedBundleSchema> & Refusal;
type BundlePreview = z.infer<typeof bundlePreviewSchema> & Refusal;

const stack = useTestStack({ worker: false, workspaceName: 'Bundles A' });
let a: WorkspaceFixture;
let b: WorkspaceFixture;

beforeAll(async () => {
  a = stack.ws;
  b = await createWorkspace(stack.app, 'Bundles B');
});

const WF = '/api/v1/workflows';
const post = <T>(path: string, body?: unknown, token = a.token) => stack.as(token).post<T>(path, body);
const validate = (body: unknown) => post<ArtifactReport>(`${WF}/validate-artifact`, body);
const importBundle = (body: unknown, token?: string) => post<ImportedBundle>(WF, body, token);
const preview = (body: unknown) => post<BundlePreview>(`${WF}/import-preview`, body);

function artifact(externalId: string, extra: { tag?: string; subworkflow?: string } = {}) {
  const nodes: NodeInput[] = [
    { id: 'start', type: 'start', name: 'Start', config: {}, position: { x: 0, y: 0 } },
    {
      id: 'shape',
      type: 'transform',
      name: 'Shape',
      config: { expression: `{ "tag": "${extra.tag ?? 'one'}" }` },
      position: { x: 200, y: 0 },
    },
  ];
  const edges: GraphEdge[] = [{ id: 'e1', source: 'start', target: 'shape' }];
  if (extra.subworkflow) {
    nodes.push({ id: 'child', type: 'subworkflow', name: 'Child', config: { workflowId: extra.subworkflow }, position: { x: 400, y: 0 } });
    edges.push({ id: 'e2', source: 'shape', target: 'child' });
  }
  return { schema: 'workflow-artifact.v1', externalId, name: `Flow ${externalId}`, description: 'from git', nodes, edges, connections: {} };
}

const bundle = (workflows: unknown[]) => JSON.stringify({ schema: 'workflow-bundle.v1', name: 'Team flows', workflows });
const rowsOf = (workspaceId: string) => stack.app.orm.em.fork().find(WorkflowSchema, { workspaceId }, { orderBy: { createdAt: 'asc' } });

describe('POST /workflows/validate-artifact', () => {
  test('reports per file, object form with text and parsed content', async () => {
    const bad = { ...artifact('bad'), schema: 'v0' };
    const res = await validate({
      files: {
        'flows/good.workflow.json': JSON.stringify(artifact('good')),
        'flows/bad.workflow.json': bad,
        'flows/broken.json': '{ nope',
      },
    });
    expect(res.status).toBe(200);
    expect(res.body.valid).toBe(false);
    const byPath = Object.fromEntries(res.body.files.map((f) => [f.path, f]));
    expect(byPath['flows/good.workflow.json']).toMatchObject({ valid: true, externalId: 'good', name: 'Flow good', errors: [] });
    expect(byPath['flows/good.workflow.json'].validation?.deploymentReadiness.ready).toBe(true);
    expect(byPath['flows/bad.workflow.json']).toMatchObject({ valid: false, externalId: null, validation: null });
    expect(byPath['flows/bad.workflow.json'].errors).toEqual([{ path: 'schema', message: 'schema must be "workflow-artifact.v1".' }]);
    expect(byPath['flows/broken.json'].errors[0].message).toMatch(/^Not valid JSON/);
  });

  test('array form: all valid; duplicates and secrets are reported', async () => {
    const ok = await validate({
      files: [
        { path: 'x.json', content: artifact('x') },
        { path: 'y.json', content: artifact('y') },
      ],
    });
    expect(ok.status).toBe(200);
    expect(ok.body.valid).toBe(true);

    const secret = artifact('s');
    secret.nodes[1].config = { ...secret.nodes[1].config, password: 'hunter2' };
    const res = await validate({
      files: [
        { path: 'a.json', content: artifact('dup') },
        { path: 'b.json', content: artifact('dup') },
        { path: 's.json', content: secret },
      ],
    });
    expect(res.body.valid).toBe(false);
    expect(res.body.files[0].errors).toEqual([{ path: 'externalId', message: 'externalId "dup" appears in more than one file.' }]);
    expect(res.body.files[2].errors).toEqual([
      { path: 'nodes[1].config.password', message: 'Artifacts must not carry secret values; reference a credential alias instead.' },
    ]);
  });

  test('400 when files is missing or malformed', async () => {
    const missing = await validate({});
    expect(missing.status).toBe(400);
    expect(missing.body.error).toMatch(/files is required/);
    const wrong = await validate({ files: 'nope' });
    expect(wrong.status).toBe(400);
  });
});

describe('importBundleJson', () => {
  test('creates, then upserts by externalId: unchanged and updated; references resolve in the bundle', async () => {
    const first = await importBundle({ importBundleJson: bundle([artifact('parent', { subworkflow: 'child' }), artifact('child')]) });
    expect(first.status).toBe(201);
    expect(first.body.bundle).toEqual({ name: 'Team flows', workflowCount: 2, created: 2, updated: 0, unchanged: 0, refused: 0 });
    const [parent, child] = first.body.workflows;
    expect(parent.importAction).toBe('created');
    expect(parent.links.self).toBe(`${stack.app.url}${WF}/${parent.workflow.id}`);
    expect(parent.bundleSubWorkflowStatus).toEqual({
      resolved: true,
      references: [{ nodeId: 'child', reference: 'child', resolvedIn: 'bundle', workflowId: child.workflow.id }],
    });
    // The reference is rewritten to the imported child's id.
    expect(savedNode(parent.workflow, 'child').config?.workflowId).toBe(child.workflow.id);
    expect(parent.workflow.status).toBe('draft');
    expect(parent.importReadiness.deploymentReadiness.ready).toBe(true);
    const rows = await rowsOf(a.workspaceId);
    expect(
      rows
        .filter((r) => r.externalId)
        .map((r) => r.externalId)
        .sort(),
    ).toEqual(['child', 'parent']);

    const again = await importBundle({
      importBundleJson: bundle([artifact('parent', { subworkflow: 'child' }), artifact('child', { tag: 'two' })]),
    });
    expect(again.status).toBe(201);
    expect(again.body.bundle).toMatchObject({ created: 0, updated: 1, unchanged: 1 });
    expect(again.body.workflows.map((w) => [w.externalId, w.importAction, w.workflow.id])).toEqual([
      ['parent', 'unchanged', parent.workflow.id],
      ['child', 'updated', child.workflow.id],
    ]);
    expect(nodesOf(again.body.workflows[1].workflow)[1].config?.expression).toContain('two');
    expect((await rowsOf(a.workspaceId)).length).toBe(rows.length);

    // A later bundle refers to the child by its externalId: resolved in the workspace.
    const later = await importBundle({ importBundleJson: bundle([artifact('uses-child', { subworkflow: 'child' })]) });
    expect(later.body.workflows[0].bundleSubWorkflowStatus.references[0]).toEqual({
      nodeId: 'child',
      reference: 'child',
      resolvedIn: 'workspace',
      workflowId: child.workflow.id,
    });
  });

  test('unresolved subworkflow references import but block readiness', async () => {
    const res = await importBundle({ importBundleJson: bundle([artifact('orphan', { subworkflow: 'nowhere' })]) });
    expect(res.status).toBe(201);
    const [w] = res.body.workflows;
    expect(w.bundleSubWorkflowStatus).toEqual({
      resolved: false,
      references: [{ nodeId: 'child', reference: 'nowhere', resolvedIn: null, workflowId: null }],
    });
    expect(w.importReadiness.deploymentReadiness.ready).toBe(false);
    expect(w.importReadiness.deploymentReadiness.blockers).toContain(
      'child: subworkflow "nowhere" is neither in the bundle nor in the workspace',
    );
  });

  test('all-or-nothing: one invalid workflow writes nothing', async () => {
    const before = (await rowsOf(a.workspaceId)).length;
    const res = await importBundle({
      importBundleJson: bundle([artifact('fine-1'), { ...artifact('broken'), name: '' }, artifact('parent', { tag: 'changed' })]),
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('importBundleJson has 1 invalid workflow(s); nothing was imported.');
    expect(res.body.invalidWorkflows).toEqual([
      { index: 1, externalId: 'broken', errors: [{ path: 'name', message: 'name is required.' }] },
    ]);
    expect((await rowsOf(a.workspaceId)).length).toBe(before);
    const parent = (await rowsOf(a.workspaceId)).find((r) => r.externalId === 'parent')!;
    expect(JSON.stringify(parent.nodes)).not.toContain('changed');

    const dup = await importBundle({ importBundleJson: bundle([artifact('d'), artifact('d')]) });
    expect(dup.status).toBe(400);
    expect((await rowsOf(a.workspaceId)).length).toBe(before);

    for (const body of [
      { importBundleJson: 'nope' },
      { importBundleJson: bundle([]) },
      { importBundleJson: bundle([artifact('z')]), name: 'x' },
    ]) {
      const r = await importBundle(body);
      expect(r.status).toBe(400);
      expect(r.body.error).toMatch(/importBundleJson/);
    }
  });

  test('import-preview returns the plan and writes nothing', async () => {
    const before = await rowsOf(a.workspaceId);
    const res = await preview({
      importBundleJson: bundle([artifact('parent', { subworkflow: 'child', tag: 'preview' }), artifact('brand-new')]),
    });
    expect(res.status).toBe(200);
    expect(res.body.persisted).toBe(false);
    expect(res.body.bundle).toMatchObject({ workflowCount: 2, created: 1, updated: 1, unchanged: 0 });
    const existing = before.find((r) => r.externalId === 'parent')!;
    expect(res.body.workflows[0]).toMatchObject({ externalId: 'parent', workflowId: existing.id, importAction: 'updated' });
    expect(res.body.workflows[1]).toMatchObject({ externalId: 'brand-new', workflowId: null, importAction: 'created' });
    expect(res.body.workflows[0].bundleSubWorkflowStatus.references[0]).toMatchObject({ resolvedIn: 'workspace' });
    const after = await rowsOf(a.workspaceId);
    expect(after.length).toBe(before.length);
    expect(JSON.stringify(after.find((r) => r.externalId === 'parent')!.nodes)).not.toContain('preview');

    const bad = await preview({ importBundleJson: bundle([{ nope: true }]) });
    expect(bad.status).toBe(400);
  });

  test('another workspace has its own externalIds; viewers cannot import', async () => {
    const res = await importBundle({ importBundleJson: bundle([artifact('parent')]) }, b.token);
    expect(res.status).toBe(201);
    expect(res.body.workflows[0].importAction).toBe('created');
    const parentA = (await rowsOf(a.workspaceId)).find((r) => r.externalId === 'parent')!;
    expect(res.body.workflows[0].workflow.id).not.toBe(parentA.id);
    expect(res.body.workflows[0].workflow.workspaceId).toBe(b.workspaceId);

    const viewer = await addUserWithKey(stack.app, a, 'viewer');
    const before = (await rowsOf(a.workspaceId)).length;
    const refused = await importBundle({ importBundleJson: bundle([artifact('viewer-flow')]) }, viewer.token);
    expect(refused.status).toBe(403);
    expect((await rowsOf(a.workspaceId)).length).toBe(before);
  });
});
