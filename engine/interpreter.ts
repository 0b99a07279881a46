/**
 * The graph interpreter shared by the Temporal run workflow and dry runs. It owns the
 * semantics of the graph (which node runs when, with which input, which edges are live) and
 * evaluates pure nodes itself; everything with an effect outside the run — actions, waits,
 * child runs, projections — goes through the `EngineHost`, which the Temporal workflow
 * implements with activities, timers, signals and child workflows, and a dry run with
 * simulations. Deterministic: no I/O, no clock or randomness except through the host.
 */
import { canonicalJson } from './canonicalJson';
import {
  evaluateExpressionSync,
  evaluateWithJsonata,
  resolveTemplated,
  resolveTemplatedSync,
  type EvaluationOptions,
  type WorkSlice,
} from './expressions';
import { WORK_METER, WORK_PER_STEP } from './expressionBounds';
import { EXPRESSION_FIELDS } from './expressionFields';
import {
  boundedMessage,
  DEFAULT_LOOP_ITERATIONS,
  jsonBytes,
  LOOP_CHECKPOINT_LIMIT_BYTES,
  MESSAGE_LIMIT_CHARS,
  NODE_OUTPUT_LIMIT_BYTES,
  outputLimitMessage,
} from './limits';
import { ACTION_TYPES, type GraphEdge, type GraphNode, type NodeType, type WorkflowGraph } from './types';

export type StepStatus = 'running' | 'waiting' | 'succeeded' | 'failed' | 'skipped' | 'canceled';
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

export interface StepRecord {
  nodeId: string;
  nodeType: string;
  nodeName: string | null;
  seq: number;
  status: StepStatus;
  attempts: number;
  input: unknown;
  output: unknown;
  error: string | null;
  startedAt: string | null;
  finishedAt: string | null;
  durationMs: number | null;
  /**
   * Which run of the node this is when the node sits in a loop: 0 for the first, then one more
   * each time a loop-back edge starts the region again. Absent for nodes outside loops.
   */
  iteration?: number;
}

export interface LogRecord {
  seq: number;
  nodeId: string | null;
  level: LogLevel;
  message: string;
  data: unknown;
  createdAt: string;
}

export interface ResponseCapture {
  nodeId: string;
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

export interface ApprovalDecision {
  decision: 'approved' | 'rejected';
  comment?: string | null;
  decidedBy?: string | null;
}

/** What the interpreter needs from its environment. */
export interface EngineHost {
  now(): number;
  /** Action nodes (http, code, table_*, llm), with their config already resolved. Throws on failure. */
  runAction(
    node: GraphNode,
    config: Record<string, unknown>,
    input: unknown,
  ): Promise<{
    output: unknown;
    attempts?: number;
    logs?: Array<{ level: LogLevel; message: string }>;
    /** Credits the action spent beyond its step's one (an `llm` node's tokens, priced by the deployment). */
    costCredits?: number;
  }>;
  waitTimer(node: GraphNode, untilMs: number): Promise<void>;
  /** Resolves with the decision; throws when the approval times out. */
  waitApproval(node: GraphNode, config: { prompt?: string; timeoutSeconds?: number }): Promise<ApprovalDecision>;
  /** Resolves with the resume body; throws when the event times out. */
  waitEvent(node: GraphNode, config: { timeoutSeconds?: number }): Promise<unknown>;
  runSubworkflow(node: GraphNode, config: { workflowId: string }, input: unknown): Promise<unknown>;
  /** Called when a step starts, waits and ends (same nodeId: an upsert). */
  onStep(step: StepRecord): void | Promise<void>;
  onLog(log: LogRecord): void | Promise<void>;
  onResponse(response: ResponseCapture): void | Promise<void>;
  /** True for the host's cancellation errors, which end the run instead of failing a node. */
  isCancellation(err: unknown): boolean;
  /**
   * Largest node output in UTF-8 JSON bytes (default NODE_OUTPUT_LIMIT_BYTES). Infinity turns
   * the check off: runs started before the limit existed replay without it.
   */
  outputLimitBytes?: number;
  /** Longest error and log message kept (default MESSAGE_LIMIT_CHARS); Infinity replays runs from before the bound. */
  messageLimitChars?: number;
  /**
   * Evaluate expressions in the synchronous subset without a Promise (default true; see
   * engine/syncExpressions.ts). False: JSONata only, as runs recorded before it replay.
   */
  syncExpressions?: boolean;
  /**
   * Bound built-in functions, regex matches and lambda signatures (default true; see
   * engine/expressionBounds.ts). False: as runs recorded before the bounds replay.
   */
  boundedExpressions?: boolean;
  /**
   * Ends the current workflow activation (the run workflow: a 1 ms durable timer). When set, the
   * run's expression work (and node output checks) is cut into slices of `sliceSteps` steps, so
   * no activation runs into the worker's isolateExecutionTimeout, which aborts the whole worker
   * process when it fires (issue 26, F4). Unset: one activation does all the work, as runs
   * recorded before slices (patch work-slices-v1) replay, and as dry runs do.
   */
  endActivation?: () => Promise<void>;
  /** Steps per slice when endActivation is set (default WORK_SLICE_STEPS). */
  sliceSteps?: number;
  /**
   * Offered at every loop iteration where nothing else of the run is in flight: a host whose
   * history grew long continues the run in a new execution from `checkpoint()` (Temporal
   * continue-as-new) and does not return; otherwise it returns and the loop goes on here.
   * `checkpoint()` returns null when the state is too large to carry (LOOP_CHECKPOINT_LIMIT_BYTES).
   */
  continueAsNew?: (checkpoint: () => LoopCheckpoint | null) => Promise<void>;
  /**
   * Ends the workflow activation between loop iterations, every LOOP_NODES_PER_ACTIVATION node
   * runs (the run workflow: a 1 ms timer, then its projection write when due). Unset: loops run
   * in one activation, as dry runs do.
   */
  loopPause?: () => Promise<void>;
}

/**
 * The interpreter's state at a loop iteration with nothing else in flight: enough to go on
 * in another execution (RunRequest.resume). Plain JSON; edges are named by their index in
 * `graph.edges`, maps by node id.
 */
export interface LoopCheckpoint {
  outputs: Record<string, unknown>;
  pending: Record<string, number>;
  /** Per target, the live inputs already arrived: source id → [output] (wrapped, so `undefined` survives as null). */
  liveInputs: Record<string, Array<[string, unknown]>>;
  arrived: number[];
  seq: number;
  logSeq: number;
  costCredits: number;
  lastTerminal: { nodeId: string; output: unknown } | null;
  iterations: Record<string, number>;
  loopRounds: Record<string, number>;
  loopStates: Record<string, LoopNodeState>;
  reentries: Array<{ edge: number; output: unknown }>;
}

/** What a `loop` node keeps between its iterations. */
interface LoopNodeState {
  items: unknown[];
  next: number;
  results: unknown[];
  resultBytes: number;
}

/**
 * Node runs in loops per workflow activation: after this many, a loop iteration ends the
 * activation (EngineHost.loopPause), so a long loop of pure nodes, which no expression
 * budget slices, cannot hold the worker's isolate past its execution timeout.
 */
export const LOOP_NODES_PER_ACTIVATION = 1_000;

/**
 * Evaluation steps (WORK_METER) per workflow activation. A step of the costliest built-ins is
 * about 50 µs on one core (a $distinct of 60,000 numbers, 10,000 steps, took 0.57 s), so a slice
 * is ~0.1 s of work; one expression may overrun it by at most its own budget (maxSteps).
 */
export const WORK_SLICE_STEPS = 2_000;

/**
 * Work slices over WORK_METER (see EvaluationOptions.slice): due once `size` steps were done
 * since the slice began. JSONata evaluations run one at a time; the first to start while a slice
 * is due ends the activation, for all the evaluations queued behind it.
 */
function workSlices(endActivation: () => Promise<void>, size: number): WorkSlice {
  let began = WORK_METER.steps;
  let queue: Promise<unknown> = Promise.resolve();
  const due = () => WORK_METER.steps - began >= size;
  return {
    due,
    run<T>(evaluate: () => Promise<T>): Promise<T> {
      const turn = queue.then(async () => {
        if (due()) {
          await endActivation();
          began = WORK_METER.steps;
        }
        return evaluate();
      });
      queue = turn.catch(() => undefined);
      return turn;
    },
  };
}

export interface RunRequest {
  /** Configs already parsed with their defaults (withConfigDefaults in nodes.ts); the engine does not re-check them. */
  graph: WorkflowGraph;
  input: unknown;
  /** The run's trigger; picks the matching trigger node when several exist. */
  trigger: string;
  startNodeId?: string | null;
  /** Go on from a loop checkpoint (a continued execution) instead of starting at the trigger. */
  resume?: LoopCheckpoint;
}

export interface RunOutcome {
  status: 'succeeded' | 'failed';
  output: unknown;
  error: { message: string; nodeId: string | null } | null;
  /** 1 credit per executed action node (http, code) and per child run. */
  costCredits: number;
}

/** A node failure that carries the failing node, so the run's error can name it. */
export class NodeFailure extends Error {
  constructor(
    readonly nodeId: string,
    message: string,
  ) {
    super(message);
    this.name = 'NodeFailure';
  }
}

const ACTION_NODE_TYPES = new Set<string>(ACTION_TYPES);
const TRIGGERS_BY_RUN_TRIGGER: Record<string, string[]> = {
  webhook: ['webhook', 'start'],
  schedule: ['schedule', 'start'],
};

interface NodeResult {
  output: unknown;
  /** Which output handles are live; null means every edge without an explicit handle. */
  handles: string[] | null;
}

/**
 * Runs the graph to completion. Nodes run as soon as all their incoming edges are decided
 * (dead-path elimination), so branches of one node run in parallel and a merge waits for
 * every live branch. The run's output is the output of the terminal node that finished last.
 */
export async function runGraph(req: RunRequest, host: EngineHost): Promise<RunOutcome> {
  const { graph } = req;
  const outputLimit = host.outputLimitBytes ?? NODE_OUTPUT_LIMIT_BYTES;
  const nodes = new Map(graph.nodes.map((n) => [n.id, n]));
  const incoming = new Map<string, GraphEdge[]>();
  const outgoing = new Map<string, GraphEdge[]>();
  // Loop-back edges stay out of the forward flow: they start a loop's next iteration (see nextIteration).
  const loopsOut = new Map<string, GraphEdge[]>();
  const loopsInto = new Map<string, GraphEdge[]>();
  for (const n of graph.nodes) {
    incoming.set(n.id, []);
    outgoing.set(n.id, []);
    loopsOut.set(n.id, []);
    loopsInto.set(n.id, []);
  }
  for (const e of graph.edges) {
    if (!nodes.has(e.source) || !nodes.has(e.target)) continue;
    if (e.loop) {
      loopsOut.get(e.source)!.push(e);
      loopsInto.get(e.target)!.push(e);
      continue;
    }
    outgoing.get(e.source)!.push(e);
    incoming.get(e.target)!.push(e);
  }
  // A loop's region: its head and everything downstream of it, which each iteration runs again.
  const regions = new Map<string, Set<string>>();
  const iterations = new Map<string, number>();
  for (const [head, edges] of loopsInto) {
    if (edges.length === 0) continue;
    const region = reachableFrom(head, outgoing);
    regions.set(head, region);
    for (const id of region) iterations.set(id, 0);
  }
  const hasLoops = regions.size > 0;
  const edgeIndex = new Map(graph.edges.map((e, i) => [e, i]));
  const arrived = new Set<GraphEdge>();
  const loopRounds = new Map<string, number>();
  const loopStates = new Map<string, LoopNodeState>();
  const reentries: Array<{ edge: GraphEdge; output: unknown }> = [];
  const reentryInputs = new Map<string, unknown>();
  let loopNodesSinceYield = 0;

  const start = pickStartNode(req, graph.nodes);
  const reachable = reachableFrom(start.id, outgoing);
  const pending = new Map<string, number>();
  const liveInputs = new Map<string, Map<string, unknown>>();
  for (const n of graph.nodes) {
    pending.set(n.id, incoming.get(n.id)!.filter((e) => reachable.has(e.source)).length);
    liveInputs.set(n.id, new Map());
  }

  const outputs: Record<string, unknown> = {};
  const bindings = { trigger: req.input, nodes: outputs };
  const expressionOptions: EvaluationOptions = {
    sync: host.syncExpressions ?? true,
    bounded: host.boundedExpressions ?? true,
    ...(host.endActivation ? { slice: workSlices(host.endActivation, host.sliceSteps ?? WORK_SLICE_STEPS) } : {}),
  };
  const outputTooLarge = (output: unknown): string | null => {
    if (outputLimit === Infinity) return null;
    const bytes = jsonBytes(output);
    // Measuring and later copying an output is work too: large outputs end slices sooner.
    if (expressionOptions.slice) WORK_METER.steps += bytes / WORK_PER_STEP;
    return outputLimitMessage(bytes, outputLimit);
  };
  // Expressions in the synchronous subset are evaluated without awaiting anything (`now` is
  // `{ value }`); the rest go through JSONata, whose promises are costly in the workflow sandbox.
  const evaluateNow = (expr: string, input: unknown) =>
    expressionOptions.sync ? evaluateExpressionSync(expr, input, bindings, expressionOptions) : null;
  const resolveNow = (value: unknown, input: unknown) =>
    expressionOptions.sync ? resolveTemplatedSync(value, input, bindings, expressionOptions) : null;
  const resolve = async (value: unknown, input: unknown): Promise<unknown> => {
    const now = resolveNow(value, input);
    return now ? now.value : resolveTemplated(value, input, bindings, expressionOptions);
  };
  let seq = 0;
  let logSeq = 0;
  let costCredits = 0;
  let lastTerminal: { nodeId: string; output: unknown } | null = null;
  let failure: { message: string; nodeId: string | null } | null = null;
  let cancellation: unknown = null;
  const inFlight: Promise<void>[] = [];

  const messageLimit = host.messageLimitChars ?? MESSAGE_LIMIT_CHARS;
  const log = (nodeId: string | null, level: LogLevel, message: string, data: unknown = null) =>
    host.onLog({
      seq: logSeq++,
      nodeId,
      level,
      message: boundedMessage(message, messageLimit),
      data,
      createdAt: new Date(host.now()).toISOString(),
    });

  const step = (node: GraphNode, fields: Partial<StepRecord> & { status: StepStatus; seq: number }): StepRecord => ({
    nodeId: node.id,
    nodeType: node.type,
    nodeName: node.name ?? null,
    attempts: 0,
    input: null,
    output: null,
    error: null,
    startedAt: null,
    finishedAt: null,
    durationMs: null,
    ...(iterations.has(node.id) ? { iteration: iterations.get(node.id) } : {}),
    ...fields,
  });

  /** A live loop-back edge of a finished node: the loop's next iteration starts once the run is idle. */
  const queueLoops = (node: GraphNode, result: NodeResult) => {
    for (const edge of loopsOut.get(node.id)!) if (isLive(edge, result)) reentries.push({ edge, output: result.output });
  };
  /** Terminal for this run: no outgoing edge, or none of them live (e.g. an unwired branch). */
  const isTerminal = (node: GraphNode, result: NodeResult) =>
    !outgoing.get(node.id)!.some((e) => isLive(e, result)) && !loopsOut.get(node.id)!.some((e) => isLive(e, result));

  /** A node's input, taken once when it runs: a loop iteration's input, the run input, a merge's live inputs, or its one live input. */
  const takeInput = (node: GraphNode): { input: unknown; looped: boolean } => {
    if (reentryInputs.has(node.id)) {
      const input = reentryInputs.get(node.id);
      reentryInputs.delete(node.id);
      return { input, looped: true };
    }
    const inputs = liveInputs.get(node.id)!;
    const input = node.id === start.id ? req.input : node.type === 'merge' ? Object.fromEntries(inputs) : [...inputs.values()][0];
    return { input, looped: false };
  };

  /**
   * A `loop` node: entered forward, it takes its input's items (an array, or one item) and
   * passes the first batch on `loop`; entered again through a loop-back edge, it keeps what came
   * back and passes the next batch, or, when none is left, everything that came back on `done`.
   */
  const loopStep = (node: GraphNode, input: unknown, looped: boolean): NodeResult => {
    const size = Number((node.config as { batchSize?: number }).batchSize ?? 1);
    let state = looped ? loopStates.get(node.id) : undefined;
    if (state) {
      const bytes = state.resultBytes + jsonBytes(input) + 1;
      const over = outputLimit === Infinity ? null : outputLimitMessage(bytes, outputLimit, "The loop's collected output");
      if (over) throw new NodeFailure(node.id, over);
      state.results.push(input);
      state.resultBytes = bytes;
    } else {
      state = { items: Array.isArray(input) ? input : [input], next: 0, results: [], resultBytes: 2 };
      loopStates.set(node.id, state);
    }
    if (state.next >= state.items.length) return { output: state.results, handles: ['done'] };
    const batch = state.items.slice(state.next, state.next + size);
    state.next += size;
    return { output: size === 1 ? batch[0] : batch, handles: ['loop'] };
  };

  const decideEdges = async (node: GraphNode, result: NodeResult | null) => {
    for (const edge of outgoing.get(node.id)!) {
      const live = result !== null && isLive(edge, result);
      await resolveEdge(edge, live, live ? result.output : undefined);
    }
  };

  /**
   * One edge's answer reaching its target: `waiting` while other edges into it are undecided,
   * then `skip` when none of them was live, else `ready`. Synchronous, so both edge paths share
   * it without changing where the old path awaits.
   */
  const arrive = (edge: GraphEdge, live: boolean, output: unknown): 'waiting' | 'skip' | 'ready' => {
    const target = edge.target;
    if (hasLoops) arrived.add(edge);
    if (live) liveInputs.get(target)!.set(edge.source, output);
    const left = pending.get(target)! - 1;
    pending.set(target, left);
    if (left > 0) return 'waiting';
    return liveInputs.get(target)!.size === 0 ? 'skip' : 'ready';
  };

  const resolveEdge = async (edge: GraphEdge, live: boolean, output: unknown) => {
    const arrival = arrive(edge, live, output);
    if (arrival === 'waiting') return;
    if (arrival === 'skip') {
      const node = nodes.get(edge.target)!;
      await host.onStep(step(node, { status: 'skipped', seq: seq++ }));
      await decideEdges(node, null);
      return;
    }
    schedule(edge.target);
  };

  const schedule = (nodeId: string) => {
    if (failure || cancellation) return;
    if (!expressionOptions.sync) {
      inFlight.push(execute(nodes.get(nodeId)!));
      return;
    }
    // Runs a node now, and the nodes it makes ready, in FIFO order without recursion; only
    // nodes that must wait for something leave a promise in inFlight.
    ready.push(nodes.get(nodeId)!);
    if (draining) return;
    draining = true;
    try {
      while (ready.length > 0) {
        const pendingWork = executeNow(ready.shift()!);
        if (pendingWork) inFlight.push(pendingWork);
      }
    } finally {
      draining = false;
    }
  };

  /*
   * The synchronous path (new runs: `syncExpressions`, Temporal patch sync-expressions-v1).
   * Inside Temporal's workflow sandbox every Promise costs a captured, source-mapped stack, so a
   * pure node (a trigger, merge, condition, switch, transform or log whose expressions are in
   * the synchronous subset) runs to its end and decides its edges without creating one. Anything
   * else takes `execute` above. Runs recorded without the patch keep the all-async path, whose
   * microtask order decided the order of their commands.
   */
  const ready: GraphNode[] = [];
  let draining = false;

  /** The result of a pure node computed without side effects, or null when it needs the async path. */
  const pureNow = (node: GraphNode, input: unknown): { result: NodeResult; logMessage?: string } | null => {
    if (node.disabled) return { result: { output: input, handles: null } };
    const config = node.config ?? {};
    switch (node.type) {
      case 'start':
      case 'webhook':
      case 'schedule':
      case 'ci':
      case 'merge':
        return { result: { output: input, handles: null } };
      case 'condition': {
        const now = evaluateNow(config.expression as string, input);
        return now ? { result: { output: input, handles: [now.value ? 'true' : 'false'] } } : null;
      }
      case 'switch': {
        const now = evaluateNow(config.expression as string, input);
        if (!now) return null;
        const cases = config.cases as Array<{ value: unknown; handle: string }>;
        const match = now.value === undefined ? undefined : cases.find((c) => canonicalJson(c.value) === canonicalJson(now.value));
        return { result: { output: input, handles: [match ? match.handle : 'default'] } };
      }
      case 'transform': {
        const now = evaluateNow(config.expression as string, input);
        return now ? { result: { output: now.value, handles: null } } : null;
      }
      case 'log': {
        const now = resolveNow(config.message, input);
        return now ? { result: { output: input, handles: null }, logMessage: String(now.value) } : null;
      }
      default:
        return null;
    }
  };

  const executeNow = (node: GraphNode): void | Promise<void> => {
    const taken = takeInput(node);
    const { input } = taken;
    const ran = pureNow(node, input);
    // An oversized output fails the node: the async path reports it.
    if (!ran || outputTooLarge(ran.result.output)) return execute(node, taken);
    const { result, logMessage } = ran;
    const mySeq = seq++;
    const startedMs = host.now();
    const base = { seq: mySeq, input, startedAt: new Date(startedMs).toISOString() };
    return andThen(host.onStep(step(node, { ...base, status: 'running' })), () =>
      andThen(logMessage === undefined ? undefined : log(node.id, (node.config as { level: LogLevel }).level, logMessage), () => {
        const finishedMs = host.now();
        outputs[node.id] = result.output;
        return andThen(
          host.onStep(
            step(node, {
              ...base,
              status: 'succeeded',
              attempts: 1,
              output: result.output,
              finishedAt: new Date(finishedMs).toISOString(),
              durationMs: finishedMs - startedMs,
            }),
          ),
          () => {
            if (isTerminal(node, result)) lastTerminal = { nodeId: node.id, output: result.output };
            queueLoops(node, result);
            return decideEdgesNow(node, result);
          },
        );
      }),
    );
  };

  const decideEdgesNow = (node: GraphNode, result: NodeResult | null, from = 0): void | Promise<void> => {
    const edges = outgoing.get(node.id)!;
    for (let i = from; i < edges.length; i++) {
      const edge = edges[i];
      if (edge === undefined) continue; // i < edges.length: never (the index type allows it)
      const live = result !== null && isLive(edge, result);
      const pendingWork = resolveEdgeNow(edge, live, live ? result.output : undefined);
      if (pendingWork) return pendingWork.then(() => decideEdgesNow(node, result, i + 1));
    }
  };

  const resolveEdgeNow = (edge: GraphEdge, live: boolean, output: unknown): void | Promise<void> => {
    const arrival = arrive(edge, live, output);
    if (arrival === 'waiting') return;
    if (arrival === 'skip') {
      const node = nodes.get(edge.target)!;
      return andThen(host.onStep(step(node, { status: 'skipped', seq: seq++ })), () => decideEdgesNow(node, null));
    }
    schedule(edge.target);
  };

  const execute = async (node: GraphNode, taken = takeInput(node)): Promise<void> => {
    const mySeq = seq++;
    const startedMs = host.now();
    const { input, looped } = taken;
    const base = { seq: mySeq, input, startedAt: new Date(startedMs).toISOString() };
    await host.onStep(step(node, { ...base, status: 'running' }));

    let result: NodeResult;
    let attempts = 1;
    try {
      if (node.disabled) {
        result = { output: input, handles: null };
      } else {
        const ran = await runNode(node, input, mySeq, looped);
        result = ran.result;
        attempts = ran.attempts;
      }
      // Outputs travel in Temporal payloads (activity inputs, child and run results): fail the
      // node before one can outgrow Temporal's 2 MB limit.
      const oversized = outputTooLarge(result.output);
      if (oversized) throw new NodeFailure(node.id, oversized);
    } catch (err) {
      if (host.isCancellation(err)) {
        cancellation = err;
        await host.onStep(step(node, { ...base, status: 'canceled', finishedAt: new Date(host.now()).toISOString() }));
        return;
      }
      const message = boundedMessage(errorMessage(err), messageLimit);
      const finishedMs = host.now();
      await host.onStep(
        step(node, {
          ...base,
          status: 'failed',
          attempts,
          error: message,
          finishedAt: new Date(finishedMs).toISOString(),
          durationMs: finishedMs - startedMs,
        }),
      );
      await log(node.id, 'error', `Node ${node.id} failed: ${message}`);
      const onError = node.onError ?? 'stop';
      if (onError === 'stop') {
        failure ??= { message, nodeId: node.id };
        return;
      }
      const errorOutput = { error: { message, nodeId: node.id } };
      outputs[node.id] = errorOutput;
      await finish(node, { output: errorOutput, handles: onError === 'branch' ? ['error'] : null });
      return;
    }

    const finishedMs = host.now();
    outputs[node.id] = result.output;
    await host.onStep(
      step(node, {
        ...base,
        status: 'succeeded',
        attempts,
        output: result.output,
        finishedAt: new Date(finishedMs).toISOString(),
        durationMs: finishedMs - startedMs,
      }),
    );
    await finish(node, result);
  };

  const finish = async (node: GraphNode, result: NodeResult) => {
    if (isTerminal(node, result)) lastTerminal = { nodeId: node.id, output: result.output };
    queueLoops(node, result);
    await decideEdges(node, result);
  };

  const runNode = async (
    node: GraphNode,
    input: unknown,
    nodeSeq: number,
    looped: boolean,
  ): Promise<{ result: NodeResult; attempts: number }> => {
    // Parsed with defaults before the run started (withConfigDefaults in nodes.ts).
    const config = node.config ?? {};
    const pure = (output: unknown, handles: string[] | null = null) => ({ result: { output, handles }, attempts: 1 });
    switch (node.type) {
      case 'start':
      case 'webhook':
      case 'schedule':
      case 'ci':
        return pure(input);
      case 'condition': {
        const now = evaluateNow(config.expression as string, input);
        const value = now ? now.value : await evaluateWithJsonata(config.expression as string, input, bindings, expressionOptions);
        return pure(input, [value ? 'true' : 'false']);
      }
      case 'switch': {
        const now = evaluateNow(config.expression as string, input);
        const value = now ? now.value : await evaluateWithJsonata(config.expression as string, input, bindings, expressionOptions);
        const cases = config.cases as Array<{ value: unknown; handle: string }>;
        const match = value === undefined ? undefined : cases.find((c) => canonicalJson(c.value) === canonicalJson(value));
        return pure(input, [match ? match.handle : 'default']);
      }
      case 'transform': {
        const now = evaluateNow(config.expression as string, input);
        return pure(now ? now.value : await evaluateWithJsonata(config.expression as string, input, bindings, expressionOptions));
      }
      case 'merge':
        return pure(input);
      case 'loop': {
        const result = loopStep(node, input, looped);
        return pure(result.output, result.handles);
      }
      case 'log': {
        const now = resolveNow(config.message, input);
        const message = String(now ? now.value : await resolve(config.message, input));
        await log(node.id, config.level as LogLevel, message);
        return pure(input);
      }
      case 'fail':
        throw new NodeFailure(node.id, String(await resolve(config.message, input)));
      case 'response': {
        const template = { headers: config.headers ?? {}, body: config.body };
        const now = resolveNow(template, input);
        const resolved = (now ? now.value : await resolve(template, input)) as {
          headers: Record<string, string>;
          body: unknown;
        };
        const response = {
          nodeId: node.id,
          status: (config.status as number) ?? 200,
          headers: stringRecord(resolved.headers),
          body: resolved.body,
        };
        await host.onResponse(response);
        return pure({ status: response.status, headers: response.headers, body: response.body });
      }
      case 'wait': {
        const untilMs = typeof config.until === 'string' ? Date.parse(config.until) : host.now() + Number(config.seconds) * 1000;
        await host.onStep(step(node, { seq: nodeSeq, status: 'waiting', input, startedAt: new Date(host.now()).toISOString() }));
        await host.waitTimer(node, untilMs);
        return pure(input);
      }
      case 'approval': {
        await host.onStep(step(node, { seq: nodeSeq, status: 'waiting', input, startedAt: new Date(host.now()).toISOString() }));
        const decision = await host.waitApproval(node, config);
        return pure({ decision: decision.decision, comment: decision.comment ?? null, decidedBy: decision.decidedBy ?? null }, [
          decision.decision,
        ]);
      }
      case 'event': {
        await host.onStep(step(node, { seq: nodeSeq, status: 'waiting', input, startedAt: new Date(host.now()).toISOString() }));
        return pure(await host.waitEvent(node, config));
      }
      case 'subworkflow': {
        const childInput = config.input === undefined ? input : await resolve(config.input, input);
        const output = await host.runSubworkflow(node, { workflowId: config.workflowId as string }, childInput);
        costCredits += 1;
        return pure(output);
      }
      default: {
        if (!ACTION_NODE_TYPES.has(node.type)) throw new NodeFailure(node.id, `Unknown node type "${node.type}"`);
        const ran = await host.runAction(node, await resolveTemplatedFields(node.type, config, input, resolve), input);
        costCredits += 1 + (ran.costCredits ?? 0);
        for (const entry of ran.logs ?? []) await log(node.id, entry.level, entry.message);
        return { result: { output: ran.output, handles: null }, attempts: ran.attempts ?? 1 };
      }
    }
  };

  /** The state to go on from in another execution, or null when it is too large to carry. */
  const checkpoint = (): LoopCheckpoint | null => {
    const record = <T>(map: Map<string, T>) => Object.fromEntries(map);
    const state: LoopCheckpoint = {
      outputs: { ...outputs },
      pending: record(pending),
      liveInputs: Object.fromEntries([...liveInputs].filter(([, m]) => m.size > 0).map(([id, m]) => [id, [...m]])),
      arrived: [...arrived].map((e) => edgeIndex.get(e)!),
      seq,
      logSeq,
      costCredits,
      lastTerminal,
      iterations: record(iterations),
      loopRounds: record(loopRounds),
      loopStates: record(loopStates),
      reentries: reentries.map((r) => ({ edge: edgeIndex.get(r.edge)!, output: r.output })),
    };
    return jsonBytes(state) > LOOP_CHECKPOINT_LIMIT_BYTES ? null : state;
  };

  const restore = (state: LoopCheckpoint) => {
    Object.assign(outputs, state.outputs);
    for (const [id, count] of Object.entries(state.pending)) pending.set(id, count);
    for (const [id, entries] of Object.entries(state.liveInputs)) liveInputs.set(id, new Map(entries));
    for (const i of state.arrived) if (graph.edges[i]) arrived.add(graph.edges[i]);
    seq = state.seq;
    logSeq = state.logSeq;
    costCredits = state.costCredits;
    lastTerminal = state.lastTerminal;
    for (const [id, n] of Object.entries(state.iterations)) iterations.set(id, n);
    for (const [id, n] of Object.entries(state.loopRounds)) loopRounds.set(id, n);
    for (const [id, loopState] of Object.entries(state.loopStates)) loopStates.set(id, loopState);
    for (const r of state.reentries) {
      const edge = graph.edges[r.edge];
      if (edge) reentries.push({ edge, output: r.output });
    }
  };

  /**
   * Starts the next iteration of every loop whose loop-back edge was live, once nothing of the
   * run is in flight: each loop's region (its head and all downstream of it) forgets the inputs
   * it produced and runs again from the head, whose input is what came back. A loop enclosing
   * another wins (its region starts the inner loop afresh); a loop at its limit fails the run.
   */
  const nextIteration = async () => {
    if (host.continueAsNew) await host.continueAsNew(checkpoint);
    const arrivals = new Map<string, Array<{ edge: GraphEdge; output: unknown }>>();
    for (const r of reentries.splice(0)) arrivals.set(r.edge.target, [...(arrivals.get(r.edge.target) ?? []), r]);
    const heads = [...arrivals.keys()].filter(
      (head) => ![...arrivals.keys()].some((other) => other !== head && regions.get(other)!.has(head)),
    );
    for (const head of heads) {
      const rounds = (loopRounds.get(head) ?? 0) + 1;
      const limit = Math.min(...loopsInto.get(head)!.map((e) => e.maxIterations ?? DEFAULT_LOOP_ITERATIONS));
      if (rounds < limit) continue;
      const node = nodes.get(head)!;
      const message = `Loop at node "${head}" reached its limit of ${limit} iterations (maxIterations of its loop-back edge)`;
      const at = new Date(host.now()).toISOString();
      await host.onStep(
        step(node, { status: 'failed', seq: seq++, iteration: iterations.get(head)! + 1, error: message, startedAt: at, finishedAt: at }),
      );
      await log(head, 'error', `Node ${head} failed: ${message}`);
      failure ??= { message, nodeId: head };
      return;
    }
    const restarted = new Set<string>();
    for (const head of heads) {
      const region = regions.get(head)!;
      for (const id of region) {
        restarted.add(id);
        iterations.set(id, iterations.get(id)! + 1);
        if (id !== head) loopRounds.delete(id);
        const live = liveInputs.get(id)!;
        for (const source of [...live.keys()]) if (region.has(source)) live.delete(source);
      }
      loopRounds.set(head, (loopRounds.get(head) ?? 0) + 1);
    }
    for (const edge of [...arrived]) if (restarted.has(edge.source)) arrived.delete(edge);
    for (const id of restarted) {
      pending.set(id, incoming.get(id)!.filter((e) => reachable.has(e.source) && !arrived.has(e)).length);
    }
    for (const head of heads) {
      const came = arrivals.get(head)!;
      const node = nodes.get(head)!;
      reentryInputs.set(head, node.type === 'merge' ? Object.fromEntries(came.map((r) => [r.edge.source, r.output])) : came[0]?.output);
    }
    loopNodesSinceYield += restarted.size;
    if (host.loopPause && loopNodesSinceYield >= LOOP_NODES_PER_ACTIVATION) {
      loopNodesSinceYield = 0;
      await host.loopPause();
    }
    for (const head of heads) schedule(head);
  };

  if (req.resume) {
    restore(req.resume);
  } else {
    await log(null, 'info', `Run started at node ${start.id}`);
    schedule(start.id);
  }
  // Nodes schedule their successors; keep awaiting until no new work appears, then start the loops' next iterations.
  for (let settled = 0; ;) {
    for (; settled < inFlight.length; settled++) await inFlight[settled];
    if (failure || cancellation || reentries.length === 0) break;
    await nextIteration();
  }

  if (cancellation) throw cancellation;
  if (failure) {
    const f = failure as { message: string; nodeId: string | null };
    await log(f.nodeId, 'error', `Run failed: ${f.message}`);
    return { status: 'failed', output: null, error: f, costCredits };
  }
  await log(null, 'info', 'Run succeeded');
  const terminal = lastTerminal as { nodeId: string; output: unknown } | null;
  return { status: 'succeeded', output: terminal?.output ?? null, error: null, costCredits };
}

/**
 * Resolves `=expression` strings only in the fields the node contract declares templated
 * (for http: url, headers, query, body), never in e.g. a code node's source or a credential id.
 */
async function resolveTemplatedFields(
  type: string,
  config: Record<string, unknown>,
  input: unknown,
  resolve: (value: unknown, input: unknown) => Promise<unknown>,
): Promise<Record<string, unknown>> {
  const fields = EXPRESSION_FIELDS[type as NodeType]?.templated ?? [];
  const resolved = { ...config };
  for (const field of fields) {
    if (resolved[field] !== undefined) resolved[field] = await resolve(resolved[field], input);
  }
  return resolved;
}

/** Runs `next` at once after a synchronous step, or when the step's promise settles. */
function andThen(step: void | Promise<void>, next: () => void | Promise<void>): void | Promise<void> {
  return step instanceof Promise ? step.then(next) : next();
}

/** Edges without a handle follow a node's normal output; handled edges follow only their handle. */
function isLive(edge: GraphEdge, result: NodeResult): boolean {
  const handle = edge.sourceHandle ?? null;
  return result.handles === null ? handle === null || handle === 'default' : handle !== null && result.handles.includes(handle);
}

/** The node a run starts at: `startNodeId` when given, else the trigger matching the run's trigger. */
export function pickStartNode(req: Pick<RunRequest, 'trigger' | 'startNodeId'>, nodes: GraphNode[]): GraphNode {
  if (req.startNodeId) {
    const node = nodes.find((n) => n.id === req.startNodeId);
    if (!node) throw new NodeFailure(req.startNodeId, `Start node "${req.startNodeId}" does not exist`);
    return node;
  }
  const preferred = TRIGGERS_BY_RUN_TRIGGER[req.trigger] ?? ['start', 'webhook', 'schedule'];
  for (const type of preferred) {
    const node = nodes.find((n) => n.type === type);
    if (node) return node;
  }
  const anyTrigger = nodes.find((n) => ['start', 'webhook', 'schedule', 'ci'].includes(n.type));
  if (!anyTrigger) throw new NodeFailure('', 'The workflow has no trigger node');
  return anyTrigger;
}

function reachableFrom(startId: string, outgoing: Map<string, GraphEdge[]>): Set<string> {
  const seen = new Set<string>([startId]);
  const stack = [startId];
  while (stack.length > 0) {
    for (const e of outgoing.get(stack.pop()!) ?? []) {
      if (!seen.has(e.target)) {
        seen.add(e.target);
        stack.push(e.target);
      }
    }
  }
  return seen;
}

function errorMessage(err: unknown): string {
  if (err instanceof Error) {
    // Temporal wraps activity failures; the root cause carries the useful message.
    let cause: unknown = err;
    while (cause instanceof Error && cause.cause instanceof Error) cause = cause.cause;
    return (cause as Error).message || err.message;
  }
  return String(err);
}

function stringRecord(value: unknown): Record<string, string> {
  if (!value || typeof value !== 'object') return {};
  return Object.fromEntries(
    Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]),
  );
}
