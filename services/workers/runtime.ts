/**
 * The parts of the worker status beyond queue, database and scheduler: the agent runtime (is
 * the chat model endpoint reachable, which local AI CLIs are connected), the side-effect
 * transports (mail, SMTP, the outbound HTTP guard), deployment labels and what the deployment
 * lacks, and which workspaces the workers serve. Labels and states only: no address, no
 * connection string, no environment variable name.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { AppConfig } from '../kernel/config';
import { httpRequest, OutboundError } from '../kernel/outbound';
import type { storedLocalAiCliState } from './localAiCli';
import { credentialCountsByType } from './store';

/** Budget of the model endpoint probe. */
const MODEL_PROBE_TIMEOUT_MS = 2_000;

export type ModelEndpointStatus = 'not_configured' | 'reachable' | 'unreachable' | 'timed_out' | 'refused';

export interface ModelEndpointState {
  configured: boolean;
  /** Null when not configured. */
  reachable: boolean | null;
  status: ModelEndpointStatus;
  /** The HTTP status of the probe (`GET <base>/models`, no key sent); any answer counts as reachable. */
  httpStatus: number | null;
  latencyMs: number | null;
}

/** Probes the chat model endpoint through the outbound guard with a short budget. */
export async function probeModelEndpoint(config: Pick<AppConfig, 'llm' | 'outboundAllowPrivateNetworks'>): Promise<ModelEndpointState> {
  const base = config.llm.baseUrl;
  if (!base) return { configured: false, reachable: null, status: 'not_configured', httpStatus: null, latencyMs: null };
  const started = performance.now();
  try {
    const res = await httpRequest(
      { method: 'GET', url: `${base.replace(/\/+$/, '')}/models`, timeoutMs: MODEL_PROBE_TIMEOUT_MS },
      { allowPrivateNetworks: config.outboundAllowPrivateNetworks, maxResponseBytes: 256 * 1024 },
    );
    return { configured: true, reachable: true, status: 'reachable', httpStatus: res.status, latencyMs: Math.round(res.durationMs) };
  } catch (err) {
    const latencyMs = Math.round(performance.now() - started);
    const code = err instanceof OutboundError ? err.code : 'network';
    if (code === 'too_large') return { configured: true, reachable: true, status: 'reachable', httpStatus: null, latencyMs };
    const status: ModelEndpointStatus = code === 'timeout' ? 'timed_out' : code === 'refused' ? 'refused' : 'unreachable';
    return { configured: true, reachable: false, status, httpStatus: null, latencyMs };
  }
}

type LocalAiCliState = Awaited<ReturnType<typeof storedLocalAiCliState>>;

/** What agent runs (command jobs, research) can call: the chat model endpoint or a connected local AI CLI. */
export function agentRuntimeState(modelEndpoint: ModelEndpointState, localAiCli: LocalAiCliState | null) {
  const connectedLocalAiClis = Object.values(localAiCli ?? {})
    .filter((s) => s.connected)
    .map((s) => s.kind);
  return {
    modelEndpoint,
    connectedLocalAiClis,
    ready: modelEndpoint.reachable === true || connectedLocalAiClis.length > 0,
  };
}

const MAIL_PROVIDER_TYPES = ['mailA', 'mailB'];

/** Credential counts by type of the workspace: which mail transports it can use. */
export async function sideEffectTransports(
  em: EntityManager,
  config: Pick<AppConfig, 'outboundAllowPrivateNetworks'>,
  workspaceId: string,
) {
  const rows = await credentialCountsByType(em, workspaceId);
  const count = (types: string[]) => rows.filter((r) => types.includes(r.type)).reduce((sum, r) => sum + Number(r.count), 0);
  const smtp = count(['smtp']);
  const imap = count(['imap']);
  const providers = MAIL_PROVIDER_TYPES.filter((t) => count([t]) > 0);
  return {
    mail: { inbound: 'signed-webhook' as const, outbound: smtp > 0 ? ('smtp' as const) : null, providers, imapCredentials: imap },
    smtp: { configured: smtp > 0, credentials: smtp },
    httpGuard: { enabled: true, privateNetworksAllowed: config.outboundAllowPrivateNetworks },
  };
}

/** Deployment labels (kinds and on/off, never values) and what is missing, as labels. */
export function deploymentState(config: AppConfig, temporalNamespace: string) {
  const labels = {
    role: 'api',
    runtime: `node ${process.versions.node}`,
    temporalNamespace,
    blobStorage: config.blobs.backend,
    payloadEncryption: config.temporal.payloadKey || config.secretKey ? 'on' : 'off',
    credentialsEncryption: config.credentials.key ? 'dedicated-key' : config.secretKey ? 'derived-key' : 'off',
    malwareScanner: config.files.clamdAddress ? 'clamd' : 'builtin',
    embeddings: config.knowledge.embeddings.baseUrl ? 'configured' : 'keyword-only',
    chatModel: config.llm.baseUrl ? 'configured' : 'not-configured',
    localAiCli: (['cliA', 'cliB'] as const).filter((k) => config.localAiCli.paths[k]).join(',') || 'none',
  };
  const missingRequired: string[] = [];
  const missingOptional: string[] = [];
  if (!config.secretKey) missingRequired.push('secret key (webhook URLs and encrypted credentials)');
  if (!config.llm.baseUrl) missingOptional.push('chat model endpoint');
  if (!config.knowledge.embeddings.baseUrl) missingOptional.push('embeddings endpoint');
  if (!config.files.clamdAddress) missingOptional.push('malware scanner daemon');
  for (const kind of ['cliA', 'cliB'] as const) if (!config.localAiCli.paths[kind]) missingOptional.push(`local AI CLI ${kind}`);
  return { labels, missingRequired, missingOptional };
}

/**
 * Which workspaces the workers serve: every worker polls the one shared task queue, so all
 * workspaces are served together, and this one is served when any worker polls.
 */
export function managedWorkspacesState(workerConcurrency: number) {
  return { mode: 'shared-task-queue' as const, allWorkspaces: true, thisWorkspaceServed: workerConcurrency > 0 };
}
