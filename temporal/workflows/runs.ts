/**
 * One workflow run = one Temporal workflow (workflow id = run id). It interprets the pinned
 * graph with the shared engine: pure nodes run here, actions are activities, waits are
 * timers, an Update (approval) and a signal (event), subworkflows are child workflows. The
 * PostgreSQL projection (run row, steps, logs) is written by a local activity at the points
 * that matter: start, after each side effect, on entering and leaving a wait, at the end.
 */
import {
  allHandlersFinished,
  ApplicationFailure,
  CancellationScope,
  condition,
  ContinueAsNew,
  executeChild,
  isCancellation,
  makeContinueAsNewFunc,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  sleep,
  TemporalFailure,
  workflowInfo,
} from '@temporalio/workflow';
import type { createActivities } from '../../activities';
import type { StoredWait } from '../../db/entities/runs';
import {
  runGraph,
  type ApprovalDecision,
  type EngineHost,
  type LoopCheckpoint,
  type LogRecord,
  type StepRecord,
} from '../../engine/interpreter';
import { TABLE_NODE_TYPES, type GraphNode, type TableNodeType, type WorkflowGraph } from '../../engine/types';
import { MESSAGE_LIMIT_CHARS, NODE_OUTPUT_LIMIT_BYTES, oversizedOutput } from '../../engine/limits';
import {
  approvalQueuedSignal,
  approvalUpdate,
  progressQuery,
  resumeEventSignal,
  SEARCH_ATTRIBUTES,
  svcNameValue,
  RUN_WORKFLOW_TASK_TIMEOUT,
  TASK_QUEUE,
  webhookReplyUpdate,
  WORKFLOW_TYPES,
  type ApprovalRequest,
  type WebhookReply,
} from '../shared';

type Activities = ReturnType<typeof createActivities>;

/** Wall-clock budget of a code node; the sandbox enforces its own, shorter CPU deadline. */
const CODE_TIMEOUT_MS = 10_000;
/** Budget of one table node's transaction. */
const TABLE_TIMEOUT_MS = 30_000;

const isTableNode = (type: string): type is TableNodeType => (TABLE_NODE_TYPES as readonly string[]).includes(type);

export interface RunWorkflowInput {
  runId: string;
  workspaceId: string;
  workflowId: string;
  trigger: string;
  graph: WorkflowGraph;
  input: unknown;
  startNodeId?: string | null;
  /**
   * History events after which a loop continues the run in a new execution (same workflow id,
   * so the same run), unless Temporal suggests it first. Default DEFAULT_CONTINUE_AFTER_EVENTS.
   */
  continueAfterEvents?: number;
  /** Set on an execution continued from a loop (continue-as-new): where the previous one stopped. */
  continuation?: { checkpoint: LoopCheckpoint; reply: WebhookReply | null };
}

/**
 * History length at which a loop iteration continues the run as new. Temporal suggests it on its
 * own (workflowInfo().continueAsNewSuggested, by the server's history count and size limits);
 * this is the backstop, and what RUN_LOOP_CONTINUE_AFTER_EVENTS lowers.
 */
export const DEFAULT_CONTINUE_AFTER_EVENTS = 10_000;

/** Two records of one node are the same step when they are the same iteration. */
const stepKey = (step: StepRecord) => `${step.nodeId}#${step.iteration ?? 0}`;

export interface RunWorkflowResult {
  runId: string;
  status: 'succeeded';
  output: unknown;
}

const { recordRunProgress } = proxyLocalActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '200 milliseconds', maximumInterval: '10 seconds' },
});
const { issueResumeToken, prepareChildRun } = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 10 },
});

/** HTTP methods that are safe to repeat (RFC 9110 §9.2.1): calling them again changes nothing. */
const REPEATABLE_HTTP_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Whether a node's side effect runs as a local activity: inside the workflow task, on this
 * worker, without a round trip through the server's task queues for every step (about 10× less
 * overhead per step, see docs/benchmarks.md). The price: a local activity's result becomes
 * durable only when the workflow task completes, so a worker crash can run it again. That is
 * harmless for code nodes (pure computation in a sandbox) and for safe HTTP methods; any other
 * HTTP call stays a regular activity, recorded as done the moment it finishes.
 */
function runsAsLocalActivity(node: GraphNode, config: Record<string, unknown>): boolean {
  // Reading a table is repeatable like a GET; table writes stay regular activities.
  if (node.type === 'code' || node.type === 'table_read') return true;
  return node.type === 'http' && REPEATABLE_HTTP_METHODS.has(String(config.method ?? 'GET').toUpperCase());
}

/**
 * After a local action the projection is written at most this often (workflow time): one
 * PostgreSQL transaction per step would cost more than the step itself. Between writes the
 * `progress` query shows the live steps.
 */
const LOCAL_PROGRESS_INTERVAL_MS = 250;

/**
 * Runs started before durable actions shared the 250 ms projection interval keep replaying
 * with a projection write after every durable action (one local activity each).
 */
const COALESCED_PROGRESS_PATCH = 'coalesced-progress-v1';

/** Runs started before local actions existed keep replaying with regular activities. */
const LOCAL_ACTIONS_PATCH = 'local-actions-v1';

/** Runs started before node outputs were capped (engine/limits.ts) keep replaying without the cap. */
const OUTPUT_LIMIT_PATCH = 'node-output-limit-v1';

/** Runs started before error and log messages were bounded (engine/limits.ts) keep replaying unbounded. */
const MESSAGE_LIMIT_PATCH = 'message-limit-v1';

/**
 * Runs started before the synchronous expression evaluator keep evaluating with JSONata only:
 * the evaluator gives the same values, but without JSONata's promises an expression finishes in
 * fewer microtasks, which can change which of two parallel branches schedules its next command
 * first.
 */
const SYNC_EXPRESSIONS_PATCH = 'sync-expressions-v1';

/**
 * Runs started before JSONata's built-in functions, regex matches and lambda signatures were
 * bounded (engine/expressionBounds.ts) keep evaluating without those bounds: an expression that
 * succeeded in their history must succeed again on replay.
 */
const EXPRESSION_BOUNDS_PATCH = 'expression-bounds-v1';

/**
 * Runs started before their expression work was cut into slices (engine WORK_SLICE_STEPS) did
 * all of it in one activation; they replay so. New runs end an activation with a 1 ms timer
 * after each slice, so no activation nears the worker's isolateExecutionTimeout.
 */
const WORK_SLICES_PATCH = 'work-slices-v1';

/** Each action node gets its own retry policy from `node.retry` (default: a single attempt). */
function actionActivities(node: GraphNode, timeoutMs: number, local: boolean): Activities {
  const options = {
    startToCloseTimeout: timeoutMs + 5_000,
    retry: {
      maximumAttempts: node.retry?.maxAttempts ?? 1,
      initialInterval: Math.max(node.retry?.backoffSeconds ?? 1, 0.001) * 1000,
      backoffCoefficient: 2,
    },
  };
  return local ? proxyLocalActivities<Activities>(options) : proxyActivities<Activities>(options);
}

export async function runWorkflow(req: RunWorkflowInput): Promise<RunWorkflowResult> {
  const steps = new Map<string, StepRecord>();
  const waits = new Map<string, StoredWait>();
  const approvals = new Map<string, ApprovalDecision>();
  const events = new Map<string, unknown>();
  // Keyed by node and iteration: a loop records thousands of steps between two writes.
  let pendingSteps = new Map<string, StepRecord>();
  let pendingLogs: LogRecord[] = [];
  let status: 'running' | 'waiting' = 'running';
  // A continued execution keeps the answer a Response node already gave.
  let reply: WebhookReply | null = req.continuation?.reply ?? null;
  let ended: WebhookReply | null = null;

  setHandler(progressQuery, () => ({ status, steps: [...steps.values()], waits: [...waits.values()] }));
  setHandler(
    approvalUpdate,
    (request: ApprovalRequest) => {
      const nodeId = pendingApprovalFor(request.nodeId);
      approvals.set(nodeId, { decision: request.decision, comment: request.comment ?? null, decidedBy: request.decidedBy ?? null });
      return { nodeId, decision: request.decision };
    },
    { validator: (request: ApprovalRequest) => void pendingApprovalFor(request.nodeId) },
  );
  // A decision queued while no worker answered: the first decision of a node wins, later ones (an Update admitted before it) are refused or ignored.
  setHandler(approvalQueuedSignal, (request) => {
    const wait = waits.get(request.nodeId);
    if (wait?.kind !== 'approval' || approvals.has(request.nodeId)) return;
    approvals.set(request.nodeId, { decision: request.decision, comment: request.comment ?? null, decidedBy: request.decidedBy ?? null });
  });
  setHandler(webhookReplyUpdate, async (): Promise<WebhookReply> => {
    await condition(() => reply !== null || status === 'waiting' || ended !== null);
    if (reply) return reply;
    return status === 'waiting' && !ended ? { kind: 'waiting' } : ended!;
  });
  setHandler(resumeEventSignal, ({ nodeId, token, payload }) => {
    const wait = waits.get(nodeId);
    if (wait?.kind === 'event' && wait.token === token && !events.has(nodeId)) events.set(nodeId, payload);
  });

  /** The approval an Update decides; throws (rejecting the Update) when there is none. */
  function pendingApprovalFor(nodeId: string | null | undefined): string {
    const pending = [...waits.values()].filter((w) => w.kind === 'approval' && !approvals.has(w.nodeId)).map((w) => w.nodeId);
    if (nodeId) {
      if (approvals.has(nodeId)) throw new Error('This approval has already been decided.');
      if (!pending.includes(nodeId)) throw new Error(`The run is not waiting for an approval at node "${nodeId}".`);
      return nodeId;
    }
    const [only] = pending;
    if (only === undefined) throw new Error('The run is not waiting for an approval.');
    if (pending.length > 1) throw new Error(`The run waits on several approvals (${pending.join(', ')}); name one with nodeId.`);
    return only;
  }

  const nowIso = () => new Date(Date.now()).toISOString();
  let lastFlushMs = 0;
  const flush = async (extra: Parameters<Activities['recordRunProgress']>[0]['run'] = {}) => {
    lastFlushMs = Date.now();
    const batch = { steps: [...pendingSteps.values()], logs: pendingLogs };
    pendingSteps = new Map();
    pendingLogs = [];
    await recordRunProgress({ runId: req.runId, workspaceId: req.workspaceId, at: nowIso(), run: extra, ...batch });
  };
  const enterWait = async (wait: StoredWait) => {
    waits.set(wait.nodeId, wait);
    status = 'waiting';
    await flush({ status, waits: [...waits.values()] });
  };
  const leaveWait = async (nodeId: string) => {
    waits.delete(nodeId);
    status = waits.size > 0 ? 'waiting' : 'running';
    await flush({ status, waits: [...waits.values()] });
  };
  const timeoutMs = (seconds?: number) => (seconds ? seconds * 1000 : undefined);

  // Decided once, at the start: a replay of an older history sees no marker and keeps its outcome.
  const outputLimited = patched(OUTPUT_LIMIT_PATCH);
  // Durable actions are already recorded by Temporal; their projection write can wait for the
  // interval like a local action's (it was one PostgreSQL transaction per step, a third of a
  // durable step's time). Waits, subworkflows, failures and the end still write at once.
  const coalescedProgress = patched(COALESCED_PROGRESS_PATCH);
  const progressDue = (local: boolean) => (local || coalescedProgress ? Date.now() - lastFlushMs >= LOCAL_PROGRESS_INTERVAL_MS : true);
  const host: EngineHost = {
    outputLimitBytes: outputLimited ? NODE_OUTPUT_LIMIT_BYTES : Infinity,
    messageLimitChars: patched(MESSAGE_LIMIT_PATCH) ? MESSAGE_LIMIT_CHARS : Infinity,
    syncExpressions: patched(SYNC_EXPRESSIONS_PATCH),
    boundedExpressions: patched(EXPRESSION_BOUNDS_PATCH),
    ...(patched(WORK_SLICES_PATCH) ? { endActivation: () => sleep(1) } : {}),
    now: () => Date.now(),
    async runAction(node, config, input) {
      const local = runsAsLocalActivity(node, config) && patched(LOCAL_ACTIONS_PATCH);
      if (isTableNode(node.type)) {
        // table_read was added after local actions: no patch needed, no history ran it before.
        const tableLocal = node.type === 'table_read';
        const result = await actionActivities(node, TABLE_TIMEOUT_MS, tableLocal).tableNode({
          workspaceId: req.workspaceId,
          nodeType: node.type,
          config,
        });
        if (progressDue(tableLocal)) await flush();
        return { output: result.output };
      }
      if (node.type === 'llm') {
        // A regular activity: a model call that finished is recorded at once and never paid twice.
        const result = await actionActivities(node, Number(config.timeoutMs ?? 120_000), false).llmNode({
          workspaceId: req.workspaceId,
          config: config as never,
        });
        if (progressDue(false)) await flush();
        return { output: result.output, attempts: result.attempt, costCredits: result.costCredits };
      }
      const result =
        node.type === 'code'
          ? await actionActivities(node, CODE_TIMEOUT_MS, local).codeNode({
              source: String(config.source),
              input,
              workspaceId: req.workspaceId,
            })
          : await actionActivities(node, Number(config.timeoutMs ?? 30_000), local).httpNode({
              ...config,
              workspaceId: req.workspaceId,
            } as never);
      if (progressDue(local)) await flush();
      return { output: result.output, logs: result.logs, attempts: result.attempt };
    },
    async waitTimer(node, untilMs) {
      await enterWait({ kind: 'timer', nodeId: node.id, since: nowIso(), until: new Date(untilMs).toISOString() });
      await sleep(Math.max(0, untilMs - Date.now()));
      await leaveWait(node.id);
    },
    async waitApproval(node, config) {
      const expires = timeoutMs(config.timeoutSeconds);
      await enterWait({
        kind: 'approval',
        nodeId: node.id,
        since: nowIso(),
        ...(config.prompt ? { prompt: config.prompt } : {}),
        ...(expires ? { expiresAt: new Date(Date.now() + expires).toISOString() } : {}),
      });
      const decided = await waitUntil(() => approvals.has(node.id), expires);
      await leaveWait(node.id);
      if (!decided) throw new Error(`Approval timed out after ${config.timeoutSeconds} s`);
      return approvals.get(node.id)!;
    },
    async waitEvent(node, config) {
      const expires = timeoutMs(config.timeoutSeconds);
      const expiresAt = expires ? new Date(Date.now() + expires).toISOString() : null;
      const { token } = await issueResumeToken({ runId: req.runId, workspaceId: req.workspaceId, nodeId: node.id, expiresAt });
      await enterWait({ kind: 'event', nodeId: node.id, since: nowIso(), token, ...(expiresAt ? { expiresAt } : {}) });
      const resumed = await waitUntil(() => events.has(node.id), expires);
      await leaveWait(node.id);
      if (!resumed) throw new Error(`Event wait timed out after ${config.timeoutSeconds} s`);
      return events.get(node.id);
    },
    async runSubworkflow(node, config, input) {
      await flush();
      const child = await prepareChildRun({
        parentRunId: req.runId,
        parentNodeId: node.id,
        workspaceId: req.workspaceId,
        workflowId: config.workflowId,
        input,
      });
      const result = await executeChild(runWorkflow, {
        workflowId: child.runId,
        taskQueue: TASK_QUEUE,
        workflowTaskTimeout: RUN_WORKFLOW_TASK_TIMEOUT,
        args: [
          {
            runId: child.runId,
            workspaceId: req.workspaceId,
            workflowId: config.workflowId,
            trigger: req.trigger,
            graph: child.graph,
            input,
          },
        ],
        searchAttributes: {
          [SEARCH_ATTRIBUTES.WorkspaceId]: [req.workspaceId],
          [SEARCH_ATTRIBUTES.SvcWorkflowId]: [config.workflowId],
          [SEARCH_ATTRIBUTES.SvcTrigger]: [req.trigger],
          // Histories recorded before the activity returned the name replay without it.
          ...(child.name ? { [SEARCH_ATTRIBUTES.SvcName]: [svcNameValue(child.name)] } : {}),
        },
      });
      return result.output;
    },
    onStep(step) {
      // The progress query shows each node's latest iteration; the read model keeps them all.
      steps.set(step.nodeId, step);
      // Delete first: a later record of a step moves to the end, as the batch's order was.
      const key = stepKey(step);
      pendingSteps.delete(key);
      pendingSteps.set(key, step);
    },
    onLog(log) {
      pendingLogs.push(log);
    },
    onResponse(response) {
      // The first Response node answers a waiting webhook caller; the run goes on.
      reply ??= { kind: 'response', status: response.status, headers: response.headers, body: response.body };
    },
    isCancellation,
    // Only graphs with loop-back edges call these two: runs of other graphs record the same commands as before.
    async loopPause() {
      await sleep(1);
      if (progressDue(true)) await flush();
    },
    async continueAsNew(checkpoint) {
      const info = workflowInfo();
      const long = info.continueAsNewSuggested || info.historyLength >= (req.continueAfterEvents ?? DEFAULT_CONTINUE_AFTER_EVENTS);
      // A handler still running (a webhook caller waiting for its reply) would be cut off: the next iteration may try again.
      if (!long || !allHandlersFinished()) return;
      const state = checkpoint();
      if (!state) return;
      await flush();
      const continueRun = makeContinueAsNewFunc<typeof runWorkflow>({
        workflowType: WORKFLOW_TYPES.run,
        memo: info.memo,
        typedSearchAttributes: info.typedSearchAttributes,
      });
      await continueRun({ ...req, continuation: { checkpoint: state, reply } });
    },
  };

  // A continued execution's run row is already running, with its start.
  if (!req.continuation) await flush({ status: 'running', startedAt: nowIso() });
  try {
    let outcome = await runGraph(
      {
        graph: req.graph,
        input: req.input,
        trigger: req.trigger,
        startNodeId: req.startNodeId,
        ...(req.continuation ? { resume: req.continuation.checkpoint } : {}),
      },
      host,
    );
    // The projection says `succeeded` only when Temporal can accept the result: a result over
    // its payload limit would end the execution with a server error instead.
    const oversized = outcome.status === 'succeeded' && outputLimited ? oversizedOutput(outcome.output, 'Run output') : null;
    if (oversized) outcome = { ...outcome, status: 'failed', output: null, error: { message: oversized, nodeId: null } };
    await flush({
      status: outcome.status,
      output: outcome.output,
      error: outcome.error?.message ?? null,
      errorNodeId: outcome.error?.nodeId ?? null,
      costCredits: outcome.costCredits,
      waits: [],
      finishedAt: nowIso(),
    });
    ended = outcome.status === 'failed' ? { kind: 'failed', error: outcome.error?.message ?? 'Run failed' } : { kind: 'completed' };
    // Let a webhook caller's pending update answer before the execution closes.
    await condition(allHandlersFinished);
    if (outcome.status === 'failed') {
      // Failing the Temporal execution too makes failed runs visible as such in the Web UI.
      throw ApplicationFailure.nonRetryable(outcome.error?.message ?? 'Run failed', 'RunFailed', { nodeId: outcome.error?.nodeId ?? null });
    }
    return { runId: req.runId, status: 'succeeded', output: outcome.output };
  } catch (err) {
    if (isCancellation(err)) {
      ended = { kind: 'failed', error: 'The run was canceled.' };
      await CancellationScope.nonCancellable(() =>
        flush({ status: 'canceled', waits: [], finishedAt: nowIso(), cancelReason: 'Canceled on request' }),
      );
      throw err;
    }
    if (err instanceof TemporalFailure || err instanceof ContinueAsNew) throw err;
    // Workflow-task failure guard, part 1: any other error is one of the workflow code itself
    // (node errors never get here: the engine turns them into failed nodes). Thrown as is, it
    // would fail the workflow task, which Temporal retries for ever with the same history and so
    // the same error; the run would stay `running`. Fail the run with the reason instead, in
    // PostgreSQL and in Temporal. (Workflow tasks that never complete, e.g. an activation over
    // the worker's isolateExecutionTimeout, never reach this catch: see the README.)
    const reason = `Internal error in the run workflow: ${err instanceof Error ? err.message : String(err)}`;
    ended = { kind: 'failed', error: reason };
    await flush({ status: 'failed', error: reason, errorNodeId: null, waits: [], finishedAt: nowIso() });
    throw ApplicationFailure.nonRetryable(reason, 'RunInternalError');
  }
}

/** Durable wait for `fn` to become true; false when `timeoutMs` passes first (no timeout: waits forever). */
async function waitUntil(fn: () => boolean, timeoutMs: number | undefined): Promise<boolean> {
  if (timeoutMs === undefined) {
    await condition(fn);
    return true;
  }
  return condition(fn, timeoutMs);
}

export interface ScheduledRunInput {
  workspaceId: string;
  workflowId: string;
  nodeId: string;
  /** A preview destination's schedule: the run executes that destination's active version. */
  targetId?: string;
}

const { prepareScheduledRun } = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 10 },
});

/**
 * Started by a Temporal Schedule. It records the run (id = this execution's id) against the
 * workflow's active version at fire time, then interprets it exactly like any other run.
 */
export async function scheduledRunWorkflow(input: ScheduledRunInput): Promise<RunWorkflowResult | { skipped: string }> {
  const runId = workflowInfo().workflowId;
  const runInput = { scheduledAt: workflowInfo().startTime.toISOString(), nodeId: input.nodeId };
  const prepared = await prepareScheduledRun({
    runId,
    workspaceId: input.workspaceId,
    workflowId: input.workflowId,
    input: runInput,
    ...(input.targetId ? { targetId: input.targetId } : {}),
  });
  if (!prepared.graph) return { skipped: prepared.reason ?? 'not runnable' };
  return runWorkflow({
    runId,
    workspaceId: input.workspaceId,
    workflowId: input.workflowId,
    trigger: 'schedule',
    graph: prepared.graph,
    input: runInput,
    startNodeId: input.nodeId,
  });
}
