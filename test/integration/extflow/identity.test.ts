/**
 * The identity and safety of extflow imports (issue 29 point 6): an export without an `id` is
 * known by its content, never by its name; a bundle reports every workflow's fate; re-importing
 * a bundle changes nothing; and an import never overwrites a workflow whose draft it did not
 * write. Over real HTTP and PostgreSQL.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { z } from 'zod';
import type { extflowImportResultSchema } from '../../../api/schemas/extflow';
import type { bundlePreviewSchema, createdWorkflowSchema, importedBundleSchema } from '../../../api/schemas/workflows';
import { createWorkspace, http, useTestStack, type ApiError, type WorkflowList, type WorkspaceFixture } from '../../kit';

const FIXTURES = join(__dirname, '../../fixtures/extflow/identity');
/** A hand-written export of the external tool (a fresh copy each call). */
const exported = (name: string) => JSON.parse(readFileSync(join(FIXTURES, `${name}.json`), 'utf8')) as Record<string, unknown>;

type Imported = z.infer<typeof extflowImportResultSchema> & Partial<ApiError> & { files?: Files };
type Files = z.infer<typeof importedBundleSchema>['files'];
type CreatedWorkflow = z.infer<typeof createdWorkflowSchema>;
type BundlePreview = z.infer<typeof bundlePreviewSchema>;
type WorkflowBody = {
  workflow: { id: string; name: string; externalId?: string | null; nodes: Array<{ id: string; config: Record<string, unknown> }> };
};

const stack = useTestStack({ worker: false });

const importBundle = (ws: WorkspaceFixture, workflows: unknown[]) =>
  http<Imported>(stack.app, 'POST', '/api/v1/workers/extflow/import-bundle', {
    token: ws.token,
    body: { importBundleJson: JSON.stringify(workflows) },
  });

async function workflowsOf(ws: WorkspaceFixture) {
  const res = await http<WorkflowList>(stack.app, 'GET', '/api/v1/workflows', { token: ws.token });
  return res.body.workflows;
}

const getWorkflow = async (ws: WorkspaceFixture, id: string) =>
  (await http<WorkflowBody>(stack.app, 'GET', `/api/v1/workflows/${id}`, { token: ws.token })).body.workflow;

/** The Set node's expression of an imported workflow: what its draft holds. */
const fieldsOf = async (ws: WorkspaceFixture, id: string) => (await getWorkflow(ws, id)).nodes.find((n) => n.id === 'edit_fields')?.config;

describe('exports without an id', () => {
  test('two different exports sharing a name are two workflows, known by their content', async () => {
    const ws = await createWorkspace(stack.app, 'Same name');
    const first = await importBundle(ws, [exported('no-id-greeting')]);
    const second = await importBundle(ws, [exported('no-id-total')]);
    expect([first.status, second.status]).toEqual([201, 201]);
    expect(first.body.importResult.bundle).toMatchObject({ created: 1, updated: 0 });
    // Without the content identity both were `extflow-my_workflow` and the second replaced the first's draft.
    expect(second.body.importResult.bundle).toMatchObject({ created: 1, updated: 0 });
    const [a, b] = [first.body.importResult.workflows[0], second.body.importResult.workflows[0]];
    expect(a.externalId).toMatch(/^extflow-content-[0-9a-f]{20}$/);
    expect(b.externalId).toMatch(/^extflow-content-[0-9a-f]{20}$/);
    expect(a.externalId).not.toBe(b.externalId);
    expect(a.importReadiness.conversion).toMatchObject({ sourceWorkflowId: null, externalId: a.externalId });
    expect((await workflowsOf(ws)).map((w) => w.name)).toEqual(['My workflow', 'My workflow']);
    expect(await fieldsOf(ws, a.workflow.id)).toEqual({ expression: '{"greeting": "hello"}' });

    // The same content renamed and moved in the editor is the same workflow: its name is updated, nothing else.
    const renamed = exported('no-id-greeting');
    renamed.name = 'Greeting';
    (renamed.nodes as Array<{ position: number[] }>)[1].position = [500, 500];
    const again = await importBundle(ws, [renamed]);
    expect(again.body.importResult.files).toEqual([
      expect.objectContaining({ externalId: a.externalId, fate: 'updated', workflowId: a.workflow.id }),
    ]);
    expect(await workflowsOf(ws)).toHaveLength(2);
  });

  test('a bundle of two such exports is accepted; importing it again is a no-op reported per file', async () => {
    const ws = await createWorkspace(stack.app, 'Bundle of two');
    const bundle = [exported('no-id-greeting'), exported('no-id-total')];
    const res = await importBundle(ws, bundle);
    // Before: 400 "The bundle holds workflow "extflow-my_workflow" more than once; nothing was imported."
    expect(res.status).toBe(201);
    expect(res.body.importResult.bundle).toEqual({ name: null, workflowCount: 2, created: 2, updated: 0, unchanged: 0, refused: 0 });
    const ids = res.body.importResult.workflows.map((w) => w.workflow.id);
    expect(res.body.importResult.files).toEqual([
      {
        index: 0,
        source: 'importBundleJson.workflows[0]',
        externalId: res.body.importResult.workflows[0].externalId,
        name: 'My workflow',
        fate: 'created',
        workflowId: ids[0],
        reason: null,
      },
      {
        index: 1,
        source: 'importBundleJson.workflows[1]',
        externalId: res.body.importResult.workflows[1].externalId,
        name: 'My workflow',
        fate: 'created',
        workflowId: ids[1],
        reason: null,
      },
    ]);
    const before = await Promise.all(ids.map((id) => getWorkflow(ws, id)));

    const again = await importBundle(ws, bundle);
    expect(again.status).toBe(201);
    expect(again.body.importResult.bundle).toMatchObject({ created: 0, updated: 0, unchanged: 2, refused: 0 });
    expect(again.body.importResult.files?.map((f) => [f.fate, f.workflowId])).toEqual([
      ['unchanged', ids[0]],
      ['unchanged', ids[1]],
    ]);
    expect(await Promise.all(ids.map((id) => getWorkflow(ws, id)))).toEqual(before);
    expect(await workflowsOf(ws)).toHaveLength(2);
  });

  test('every file has a fate: a malformed one and a repeated one are refused with the reason, the others imported', async () => {
    const ws = await createWorkspace(stack.app, 'Fates');
    const bundle = [exported('no-id-greeting'), { name: 'Broken', nodes: [{ name: 'x' }], connections: {} }, exported('no-id-greeting')];
    const res = await importBundle(ws, bundle);
    expect(res.status).toBe(201);
    expect(res.body.importResult.bundle).toMatchObject({ workflowCount: 3, created: 1, refused: 2 });
    const externalId = res.body.importResult.workflows[0].externalId;
    expect(res.body.importResult.files?.map((f) => [f.index, f.fate, f.reason])).toEqual([
      [0, 'created', null],
      [1, 'refused', 'importBundleJson.workflows[1].nodes[0] must be an object with a name and a type.'],
      [2, 'refused', `The same workflow as importBundleJson.workflows[0] (externalId "${externalId}"): it is imported once.`],
    ]);
    expect(await workflowsOf(ws)).toHaveLength(1);

    // import-preview reports the same fates without writing.
    const preview = await http<BundlePreview>(stack.app, 'POST', '/api/v1/workflows/import-preview', {
      token: ws.token,
      body: { importBundleJson: JSON.stringify(bundle) },
    });
    expect(preview.status).toBe(200);
    expect(preview.body.files.map((f) => f.fate)).toEqual(['unchanged', 'refused', 'refused']);
  });
});

describe('an import never overwrites a workflow it does not own', () => {
  test('a draft edited since its import is refused as a conflict, alone (409) or in a bundle (refused fate)', async () => {
    const ws = await createWorkspace(stack.app, 'Edited draft');
    const first = await importBundle(ws, [exported('with-id')]);
    const id = first.body.importResult.workflows[0].workflow.id;
    expect(first.body.importResult.workflows[0].externalId).toBe('extflow-idWfOrders7');

    // Exports with an id keep today's behaviour: a new export of the same id updates the untouched draft.
    const v2 = exported('with-id');
    (
      v2.nodes as Array<{ parameters: { assignments: { assignments: Array<{ value: number }> } } }>
    )[1].parameters.assignments.assignments[0].value = 2;
    const updated = await importBundle(ws, [v2]);
    expect(updated.body.importResult.files).toEqual([expect.objectContaining({ fate: 'updated', workflowId: id })]);
    expect(await fieldsOf(ws, id)).toEqual({ expression: '{"orders": 2}' });

    // Someone edits the draft here.
    const draft = await getWorkflow(ws, id);
    const edited = draft.nodes.map((n) => (n.id === 'edit_fields' ? { ...n, config: { expression: '{"orders": 99}' } } : n));
    expect((await http(stack.app, 'PATCH', `/api/v1/workflows/${id}`, { token: ws.token, body: { nodes: edited } })).status).toBe(200);

    const v3 = exported('with-id');
    (
      v3.nodes as Array<{ parameters: { assignments: { assignments: Array<{ value: number }> } } }>
    )[1].parameters.assignments.assignments[0].value = 3;
    const refused = await importBundle(ws, [v3]);
    expect(refused.status).toBe(409);
    expect(refused.body.error).toBe(
      `Nothing was imported. importBundleJson.workflows[0]: Workflow "Orders" (${id}) already carries externalId "extflow-idWfOrders7" and its draft was changed since it was imported; nothing was overwritten. Trash that workflow, or replace its draft on purpose (PATCH /workflows/{id} with importJson).`,
    );
    expect(await fieldsOf(ws, id)).toEqual({ expression: '{"orders": 99}' });

    // In a bundle the others go on; the edited one is reported refused, pointing at the workflow it would have overwritten.
    const mixed = await importBundle(ws, [v3, exported('no-id-total')]);
    expect(mixed.status).toBe(201);
    expect(
      mixed.body.importResult.files?.map((f) => [f.fate, f.workflowId, f.reason?.includes('changed since it was imported') ?? null]),
    ).toEqual([
      ['refused', id, true],
      ['created', mixed.body.importResult.workflows[0].workflow.id, null],
    ]);
    expect(await fieldsOf(ws, id)).toEqual({ expression: '{"orders": 99}' });
  });

  test('a workflow that got the externalId otherwise is refused; one imported through POST /workflows is owned', async () => {
    const ws = await createWorkspace(stack.app, 'Not imported');
    // A native bundle (our artifact format) may name any externalId, including an extflow one.
    const native = await http(stack.app, 'POST', '/api/v1/workflows', {
      token: ws.token,
      body: {
        importBundleJson: JSON.stringify({
          workflows: [
            {
              schema: 'workflow-artifact.v1',
              externalId: 'extflow-idWfOrders7',
              name: 'Hand-made orders',
              description: '',
              nodes: [{ id: 'start', type: 'start', name: 'Start', config: {} }],
              edges: [],
            },
          ],
        }),
      },
    });
    expect(native.status).toBe(201);
    const res = await importBundle(ws, [exported('with-id')]);
    expect(res.status).toBe(409);
    expect(res.body.error).toContain('but was not created by an import of it; nothing was overwritten.');
    expect((await workflowsOf(ws)).map((w) => w.name)).toEqual(['Hand-made orders']);

    const other = await createWorkspace(stack.app, 'Single import');
    const single = await http<CreatedWorkflow>(stack.app, 'POST', '/api/v1/workflows', {
      token: other.token,
      body: { importJson: JSON.stringify(exported('with-id')) },
    });
    expect(single.status).toBe(201);
    const v2 = exported('with-id');
    (
      v2.nodes as Array<{ parameters: { assignments: { assignments: Array<{ value: number }> } } }>
    )[1].parameters.assignments.assignments[0].value = 2;
    const updated = await importBundle(other, [v2]);
    expect(updated.status).toBe(201);
    expect(updated.body.importResult.files).toEqual([expect.objectContaining({ fate: 'updated', workflowId: single.body.workflow.id })]);
  });
});
