/**
 * Run progress through the workflow sink (patch `sink-progress-v1`, issue 30 point 1): a new
 * run's history has no local activity for its projection, the API still shows the whole run
 * once the writer flushed, and a batch older than the stored one never overwrites it.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { temporal } from '@temporalio/proto';
import { chain, deployWorkflow, executeWorkflow, node, useTestStack, waitRun } from '../../kit';
import { closedHistory } from '../../support/temporalHistory';
import { createRunProgressWriter, recordRunProgress } from '../../../services/runs';
import type { StepRecord } from '../../../engine/interpreter';

const stack = useTestStack();

const markers = (history: temporal.api.history.v1.IHistory, name: string) =>
  (history.events ?? []).filter((e) => e.markerRecordedEventAttributes?.markerName === name);
const patchNames = (history: temporal.api.history.v1.IHistory) =>
  markers(history, 'core_patch').flatMap((e) =>
    Object.values(e.markerRecordedEventAttributes!.details ?? {}).flatMap((p) =>
      (p.payloads ?? []).map((x) => Buffer.from(x.data ?? []).toString()),
    ),
  );

test('a new run records one local activity for its projection, its end, and the API shows it whole', async () => {
  const { workflowId } = await deployWorkflow(
    stack,
    chain(node.transform('double', '$.n * 2'), node.log('note', 'doubled'), node.transform('done', '{ "result": $ }')),
  );
  const runId = await executeWorkflow(stack, workflowId, { n: 21 });
  const history = await closedHistory(stack.app.deps.temporal.client, runId);
  expect(patchNames(history).join(' ')).toContain('sink-progress-v1');
  // Before the sink, the same run wrote its projection with a local activity at every write
  // (start, after side effects, end); now only the end is one (docs/architecture.md).
  expect(markers(history, 'core_local_activity')).toHaveLength(1);
  expect((history.events ?? []).filter((e) => e.activityTaskScheduledEventAttributes)).toHaveLength(0);

  const run = await waitRun(stack, runId);
  expect(run).toMatchObject({ status: 'succeeded', error: null });
  expect(run.startedAt).toBeTruthy();
  expect(run.finishedAt).toBeTruthy();
  expect(run.steps.map((s) => [s.nodeId, s.status])).toEqual([
    ['start', 'succeeded'],
    ['double', 'succeeded'],
    ['note', 'succeeded'],
    ['done', 'succeeded'],
  ]);
  const detail = await stack.api.get<{ timeline: Array<{ message?: string }>; workflowState: object }>(`/api/v1/logs/executions/${runId}`);
  expect(detail.status).toBe(200);
  expect(detail.body.workflowState).toMatchObject({ status: 'succeeded', terminal: true, stepCount: 4 });
  expect(detail.body.timeline.map((e) => e.message)).toEqual(
    expect.arrayContaining(['Run started at node start', 'doubled', 'Run succeeded']),
  );
});

test('the recorded history from before the sink kept its local activity writes (the "before" of the test above)', async () => {
  const dir = path.join(__dirname, '../../fixtures/histories');
  const history = temporal.api.history.v1.History.decode(await readFile(path.join(dir, 'durable-steps-before-coalescing.pb')));
  expect(patchNames(history).join(' ')).not.toContain('sink-progress-v1');
  expect(markers(history, 'core_local_activity').length).toBeGreaterThan(0);
});

const step = (nodeId: string, status: StepRecord['status']): StepRecord => ({
  nodeId,
  nodeType: 'transform',
  nodeName: null,
  seq: 1,
  status,
  attempts: 1,
  input: null,
  output: status === 'succeeded' ? { ok: true } : null,
  error: null,
  startedAt: '2026-01-01T00:00:00.000Z',
  finishedAt: status === 'succeeded' ? '2026-01-01T00:00:01.000Z' : null,
  durationMs: status === 'succeeded' ? 1000 : null,
});

test('a batch older than the stored one is dropped whole: run fields, steps and logs keep the newer state', async () => {
  // A run row to write against: a run of a workflow that waits, so the worker's own batches are in the past.
  const { workflowId } = await deployWorkflow(stack, chain(node.approval('gate', 'ok?')));
  const runId = await executeWorkflow(stack, workflowId);
  await waitRun(stack, runId, { until: (r) => r.status === 'waiting' });
  const conn = stack.app.orm.em.fork().getConnection();
  const [{ progress_seq: stored }] = await conn.execute('select progress_seq from runs where id = ?', [runId]);
  const base = { runId, workspaceId: stack.ws.workspaceId, logs: [] };

  const newer = {
    ...base,
    seq: stored + 10,
    at: '2026-01-01T00:00:05.000Z',
    run: { status: 'waiting' as const },
    steps: [step('x', 'succeeded')],
  };
  const older = {
    ...base,
    seq: stored + 9,
    at: '2026-01-01T00:00:04.000Z',
    run: { status: 'running' as const, waits: [] },
    steps: [step('x', 'running')],
    logs: [{ seq: 9_999, nodeId: 'x', level: 'info' as const, message: 'stale', data: null, createdAt: '2026-01-01T00:00:04.000Z' }],
  };
  expect(await recordRunProgress(stack.app.orm.em.fork(), newer)).toBe(true);
  expect(await recordRunProgress(stack.app.orm.em.fork(), older)).toBe(false);
  expect(await recordRunProgress(stack.app.orm.em.fork(), newer)).toBe(false); // the same batch again

  // Through the writer too: a late batch emitted after a newer one was written is dropped.
  const writer = createRunProgressWriter({ orm: stack.app.orm, intervalMs: 10 });
  writer.emit({ ...older, seq: stored + 9 });
  await writer.flush();

  const [row] = await conn.execute('select status, progress_seq, waits from runs where id = ?', [runId]);
  expect(row).toMatchObject({ status: 'waiting', progress_seq: stored + 10 });
  expect(row.waits).toHaveLength(1);
  const [x] = await conn.execute('select status from run_steps where id = ?', [`${runId}:x`]);
  expect(x).toEqual({ status: 'succeeded' });
  const [{ n }] = await conn.execute(`select count(*)::int as n from run_logs where run_id = ? and message = 'stale'`, [runId]);
  expect(n).toBe(0);
});
