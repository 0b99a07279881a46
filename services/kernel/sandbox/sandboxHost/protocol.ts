import type { RunOutcome, LogRecord, StepRecord } from '../../../../engine/interpreter';
import type { WorkflowGraph } from '../../../../engine/types';
import type { SandboxLimits, SandboxResult } from '../sandboxEngine';

/**
 * Messages of the sandbox host: between the parent (API or worker process) and the host
 * process over the IPC channel, and between the host and its threads. Values cross as
 * structured data only; nothing of the parent (ORM, sockets) ever reaches the host.
 */

/** A code node: QuickJS with the given limits. */
export interface CodeTask {
  source: string;
  inputJson: string | undefined;
  limits: SandboxLimits;
}

/** A dry run: the whole graph interpreted in a graph thread. */
export interface DryRunTask {
  graph: WorkflowGraph;
  input: unknown;
  trigger: string;
  startNodeId: string | null;
}

export interface DryRunResult {
  outcome: RunOutcome;
  steps: StepRecord[];
  logs: LogRecord[];
}

export type HostRequest =
  | { type: 'code'; id: number; workspaceId: string; task: CodeTask }
  | { type: 'dryRun'; id: number; workspaceId: string; task: DryRunTask; timeoutMs: number }
  | { type: 'cancel'; id: number }
  | { type: 'reply'; id: number; callId: number; ok: true; value: unknown }
  | { type: 'reply'; id: number; callId: number; ok: false; message: string }
  | { type: 'ping'; seq: number };

export type HostMessage =
  | { type: 'ready'; pid: number }
  | { type: 'started'; id: number }
  | { type: 'code'; id: number; result: SandboxResult }
  | { type: 'dryRun'; id: number; result: DryRunResult }
  | { type: 'failed'; id: number; message: string }
  | { type: 'call'; id: number; callId: number; op: string; args: unknown }
  | { type: 'pong'; seq: number };

export type ThreadInbound =
  | { type: 'task'; id: number; payload: unknown }
  | { type: 'reply'; callId: number; ok: true; value: unknown }
  | { type: 'reply'; callId: number; ok: false; message: string };

export type ThreadOutbound =
  | { type: 'ready' }
  /** `grown`: the thread holds memory it cannot give back (WASM memory never shrinks). */
  | { type: 'result'; id: number; result: unknown; grown?: boolean }
  | { type: 'error'; id: number; message: string }
  | { type: 'call'; id: number; callId: number; op: string; args: unknown };
