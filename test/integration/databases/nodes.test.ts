/** Workflow table nodes: real runs on Temporal read and write the run's workspace's tables, validated like the API. */
import type { z } from 'zod';
import type { rowPageSchema, rowSchema, tableEnvelopeSchema } from '../../../api/schemas/databases';
import { createWorkspace, deployWorkflow, executeAndWait, http, node, useTestStack, type Run } from '../../kit';

type Row = z.infer<typeof rowSchema>;
type RowPage = z.infer<typeof rowPageSchema>;
type TableEnvelope = z.infer<typeof tableEnvelopeSchema>;
/** What the table nodes output: a row (insert, update), rows (read) or a deletion. */
type TableNodeOutput = { row: Row; rows: Row[]; count: number; rowIndex: number; deleted: boolean };

let tableId: string;

const stack = useTestStack();
beforeAll(async () => {
  const res = await http<TableEnvelope>(stack.app, 'POST', '/api/v1/databases', {
    token: stack.ws.token,
    body: {
      databaseName: 'ops',
      tableName: 'orders',
      columns: [
        { name: 'ref', type: 'text' },
        { name: 'total', type: 'number' },
        { name: 'meta', type: 'json' },
      ],
    },
  });
  tableId = res.body.table.id;
});

/** Deploys start → `nodes` (joined by `edges`) in `token`'s workspace and waits for one run with `input`. */
async function run(nodes: object[], edges: object[], input: unknown, token = stack.ws.token): Promise<Run> {
  const as = { app: stack.app, ws: { token } };
  const { workflowId } = await deployWorkflow(as, { name: 'tables', nodes: [node.start(), ...nodes], edges });
  return executeAndWait(as, workflowId, input);
}
/** Each step's output by node id, as the table nodes write them. */
const outputsOf = (steps: Array<{ nodeId: string; output: unknown }>) =>
  Object.fromEntries(steps.map((s) => [s.nodeId, s.output])) as Record<string, TableNodeOutput>;
const rowsOf = async (id = tableId) =>
  (await http<RowPage>(stack.app, 'GET', `/api/v1/databases/${id}/rows`, { token: stack.ws.token })).body.rows;

test('insert, update, read and delete in one run, with expressions from the trigger', async () => {
  const result = await run(
    [
      { id: 'ins', type: 'table_insert', config: { tableId, values: { ref: '=ref', total: '=total', meta: { source: 'run' } } } },
      { id: 'upd', type: 'table_update', config: { tableId, rowIndex: '=row.rowIndex', values: { total: '=row.values.total * 2' } } },
      { id: 'read', type: 'table_read', config: { tableId, filter: { ref: '=$trigger.ref' }, limit: 10 } },
      { id: 'del', type: 'table_delete', config: { tableId, rowIndex: '=rows[0].rowIndex' } },
    ],
    [
      { source: 'start', target: 'ins' },
      { source: 'ins', target: 'upd' },
      { source: 'upd', target: 'read' },
      { source: 'read', target: 'del' },
    ],
    { ref: 'A-1', total: 21 },
  );
  expect(result.status).toBe('succeeded');
  const out = outputsOf(result.steps);
  expect(out.ins).toEqual({ row: { rowIndex: expect.any(Number), values: { ref: 'A-1', total: 21, meta: { source: 'run' } } } });
  expect(out.upd.row.values.total).toBe(42);
  expect(out.read).toEqual({ rows: [out.upd.row], count: 1 });
  expect(out.del).toEqual({ rowIndex: out.ins.row.rowIndex, deleted: true });
  expect(await rowsOf()).toEqual([]);
});

test('a value the API would refuse fails the node with the same message, writing nothing', async () => {
  const result = await run(
    [{ id: 'ins', type: 'table_insert', config: { tableId, values: { ref: 'x', total: 'lots' } } }],
    [{ source: 'start', target: 'ins' }],
    {},
  );
  expect(result.status).toBe('failed');
  expect(result.error).toContain('Column "total" (number) does not accept "lots"');
  const unknown = await run(
    [{ id: 'ins', type: 'table_insert', config: { tableId, values: { nope: 1 } } }],
    [{ source: 'start', target: 'ins' }],
    {},
  );
  expect(unknown.error).toContain('Unknown column "nope"');
  const missing = await run(
    [{ id: 'upd', type: 'table_update', config: { tableId, rowIndex: 999, values: { total: 1 } } }],
    [{ source: 'start', target: 'upd' }],
    {},
  );
  expect(missing.error).toContain('Row not found');
  expect(await rowsOf()).toEqual([]);
});

test("a workflow of another workspace cannot reach this workspace's table", async () => {
  const other = await createWorkspace(stack.app, 'Other');
  const read = await run([{ id: 'read', type: 'table_read', config: { tableId } }], [{ source: 'start', target: 'read' }], {}, other.token);
  expect(read).toMatchObject({ status: 'failed', error: expect.stringContaining('Table not found') });
  const write = await run(
    [{ id: 'ins', type: 'table_insert', config: { tableId, values: { ref: 'intruder' } } }],
    [{ source: 'start', target: 'ins' }],
    {},
    other.token,
  );
  expect(write.status).toBe('failed');
  expect(await rowsOf()).toEqual([]);
});

test('configs are validated like any node: the validation report names each bad field', async () => {
  const created = await stack.api.workflows.create({
    name: 'bad',
    nodes: [
      { id: 'start', type: 'start', config: {} },
      { id: 'upd', type: 'table_update', config: { tableId, rowIndex: 'one', values: {} } },
      { id: 'read', type: 'table_read', config: { limit: 5000 } },
    ],
    edges: [
      { source: 'start', target: 'upd' },
      { source: 'upd', target: 'read' },
    ],
  });
  expect(created.status).toBe(201);
  const validation = await http(stack.app, 'GET', `/api/v1/workflows/${created.body.workflow.id}/validate`, { token: stack.ws.token });
  const messages = JSON.stringify(validation.body);
  expect(messages).toContain('config.rowIndex: must be a positive integer or an \\"=\\" expression');
  expect(messages).toContain('config.tableId: is required');
  expect(messages).toContain('config.limit');
  expect((await http(stack.app, 'POST', `/api/v1/workflows/${created.body.workflow.id}/deploy`, { token: stack.ws.token })).status).toBe(
    400,
  );
});

test('a dry run reads for real and simulates writes', async () => {
  await http(stack.app, 'POST', `/api/v1/databases/${tableId}/rows`, {
    token: stack.ws.token,
    body: { values: { ref: 'seen', total: 1 } },
  });
  const created = await stack.api.workflows.create({
    name: 'dry',
    nodes: [
      { id: 'start', type: 'start', config: {} },
      { id: 'read', type: 'table_read', config: { tableId } },
      { id: 'ins', type: 'table_insert', config: { tableId, values: { ref: 'dry' } } },
    ],
    edges: [
      { source: 'start', target: 'read' },
      { source: 'read', target: 'ins' },
    ],
  });
  const res = await http<{ run: Run }>(stack.app, 'POST', `/api/v1/workflows/${created.body.workflow.id}/execute`, {
    token: stack.ws.token,
    body: { target: 'candidate', input: {} },
  });
  expect(res.status).toBe(201);
  const steps = outputsOf(res.body.run.steps);
  expect(steps.read.rows.map((r) => r.values.ref)).toEqual(['seen']);
  expect(steps.ins).toMatchObject({ simulated: true, nodeType: 'table_insert' });
  expect((await rowsOf()).map((r) => r.values.ref)).toEqual(['seen']);
});

test('a managed configuration table refuses workflow writes but can be read', async () => {
  const created = await http<TableEnvelope>(stack.app, 'POST', '/api/v1/databases', {
    token: stack.ws.token,
    body: {
      databaseName: 'ops',
      tableName: 'settings',
      columns: [
        { name: 'key', type: 'text' },
        { name: 'active', type: 'json' },
        { name: 'retired', type: 'json' },
      ],
      rows: [{ key: 'mode', active: 'fast' }],
    },
  });
  const settingsId = created.body.table.id;
  expect(
    (await http(stack.app, 'POST', '/api/v1/configuration/declare', { token: stack.ws.token, body: { tableId: settingsId } })).status,
  ).toBe(200);
  const write = await run(
    [{ id: 'ins', type: 'table_insert', config: { tableId: settingsId, values: { key: 'x' } } }],
    [{ source: 'start', target: 'ins' }],
    {},
  );
  expect(write).toMatchObject({ status: 'failed', error: expect.stringContaining('managed configuration') });
  const read = await run(
    [{ id: 'read', type: 'table_read', config: { tableId: settingsId, filter: { key: 'mode' } } }],
    [{ source: 'start', target: 'read' }],
    {},
  );
  expect(read.status).toBe('succeeded');
  expect(outputsOf([{ nodeId: 'run', output: read.output }]).run.rows[0].values).toEqual({ key: 'mode', active: 'fast', retired: null });
});
