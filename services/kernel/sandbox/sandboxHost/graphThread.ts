import { parentPort } from 'node:worker_threads';
import { runGraph, type EngineHost, type LogRecord, type StepRecord } from '../../../../engine/interpreter';
import { withConfigDefaults } from '../../../../engine/nodes';
import { SANDBOX_DEFAULTS, type SandboxResult } from '../sandboxEngine';
import type { CodeTask, DryRunResult, DryRunTask, ThreadInbound, ThreadOutbound } from './protocol';
import { lowerThreadPriority } from './threadPriority';

/**
 * Entry point of one graph thread of the sandbox host: interprets a dry run's graph (JSONata
 * included) off the API's event loop, under the deadline and heap cap of its ThreadPool.
 * Pure nodes run here for real; code nodes run for real on the host's code threads (asked of
 * the host: the same per-workspace queue, limits and outer deadline as a live code node);
 * HTTP calls, waits, approvals, events, subworkflows and table writes are simulated and marked
 * so; table reads are asked of the parent process, where the database is (they have no effect).
 */

let nextCallId = 1;
const calls = new Map<number, { resolve(value: unknown): void; reject(err: Error): void }>();
let currentTaskId = 0;

function ask(port: NonNullable<typeof parentPort>, op: string, args: unknown): Promise<unknown> {
  const callId = nextCallId++;
  return new Promise((resolve, reject) => {
    calls.set(callId, { resolve, reject });
    port.postMessage({ type: 'call', id: currentTaskId, callId, op, args } satisfies ThreadOutbound);
  });
}

function simulatedLog(seq: number, nodeId: string, message: string): LogRecord {
  return { seq, nodeId, level: 'info', message, data: { simulated: true }, createdAt: new Date().toISOString() };
}

export async function interpretDryRun(
  task: DryRunTask,
  ask: (op: 'code' | 'table_read', args: unknown) => Promise<unknown>,
): Promise<DryRunResult> {
  const steps = new Map<string, StepRecord>();
  const logs: LogRecord[] = [];
  const host: EngineHost = {
    now: () => Date.now(),
    async runAction(node, config, input) {
      if (node.type === 'code') {
        const code: CodeTask = { source: String(config.source), inputJson: JSON.stringify(input), limits: { ...SANDBOX_DEFAULTS } };
        const result = (await ask('code', code)) as SandboxResult;
        if (!result.ok) throw new Error(result.error.message);
        return { output: result.output, logs: result.logs };
      }
      // Reading a table has no effect, so a dry run reads for real; writes are simulated.
      if (node.type === 'table_read') return { output: await ask('table_read', config) };
      if (node.type.startsWith('table_'))
        return {
          output: {
            simulated: true,
            nodeType: node.type,
            tableId: config.tableId,
            rowIndex: config.rowIndex ?? null,
            values: config.values ?? null,
          },
        };
      // A model call costs and answers differently each time: a dry run does not make it.
      if (node.type === 'llm') return { output: { simulated: true, nodeType: 'llm', prompt: config.prompt ?? null, text: '' } };
      const { method, url, headers, query, body } = config;
      return { output: { simulated: true, request: { method, url, headers: headers ?? {}, query: query ?? {}, body: body ?? null } } };
    },
    async waitTimer(node, untilMs) {
      logs.push(simulatedLog(logs.length, node.id, `Simulated wait until ${new Date(untilMs).toISOString()}`));
    },
    async waitApproval(node) {
      logs.push(simulatedLog(logs.length, node.id, 'Simulated approval: approved'));
      return { decision: 'approved', comment: 'simulated', decidedBy: null };
    },
    async waitEvent(node) {
      logs.push(simulatedLog(logs.length, node.id, 'Simulated event: resumed with null'));
      return null;
    },
    async runSubworkflow(_node, config) {
      return { simulated: true, workflowId: config.workflowId };
    },
    onStep: (step) => void steps.set(`${step.nodeId}#${step.iteration ?? 0}`, step),
    onLog: (log) => void logs.push({ ...log, seq: logs.length }),
    onResponse: () => undefined,
    isCancellation: () => false,
  };
  let outcome: DryRunResult['outcome'];
  try {
    outcome = await runGraph(
      { graph: withConfigDefaults(task.graph), input: task.input, trigger: task.trigger, startNodeId: task.startNodeId },
      host,
    );
  } catch (err) {
    outcome = { status: 'failed', output: null, error: { message: (err as Error).message, nodeId: null }, costCredits: 0 };
  }
  return { outcome, steps: [...steps.values()], logs };
}

if (parentPort) {
  const port = parentPort;
  lowerThreadPriority();
  port.on('message', (msg: ThreadInbound) => {
    if (msg.type === 'reply') {
      const call = calls.get(msg.callId);
      calls.delete(msg.callId);
      if (msg.ok) call?.resolve(msg.value);
      else call?.reject(new Error(msg.message));
      return;
    }
    currentTaskId = msg.id;
    interpretDryRun(msg.payload as DryRunTask, (op, args) => ask(port, op, args)).then(
      (result) => port.postMessage({ type: 'result', id: msg.id, result } satisfies ThreadOutbound),
      (err: unknown) =>
        port.postMessage({ type: 'error', id: msg.id, message: err instanceof Error ? err.message : String(err) } satisfies ThreadOutbound),
    );
  });
  port.postMessage({ type: 'ready' } satisfies ThreadOutbound);
}
