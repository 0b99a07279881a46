import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { ActivityDeps } from './index';
import { oversizedOutput } from '../engine/limits';
import {
  CredentialRefreshError,
  CredentialUseError,
  sendHttpWithStoredCredential,
  type CredentialUseFailure,
} from '../services/credentials';
import { httpRequest, OutboundError, type HttpRequestInput } from '../services/kernel/outbound';
import { expandJsRuntime } from '../services/extflow/jsRuntime';
import { LlmNodeError, runLlmNode, type LlmNodeConfig, type LlmNodeOutput } from '../services/models/llmNode';
import { modelApiErrorStatus } from '../services/models/embeddings';
import { DomainError } from '../services/kernel/errors';
import type { LlmConfig } from '../services/kernel/config';
import { KILL_GRACE_MS, SANDBOX_DEFAULTS, runUserCode, type SandboxErrorKind, type SandboxLog } from '../services/kernel/sandbox/sandbox';

/** Time kept between a code call's own deadline and its activity's timeout (the answer's trip back). */
const CODE_QUEUE_MARGIN_MS = 1_000;

const CODE_FAILURE_TYPES: Record<SandboxErrorKind, string> = {
  syntax: 'CodeSyntax',
  runtime: 'CodeRuntime',
  timeout: 'CodeTimeout',
  memory: 'CodeMemory',
  output: 'CodeOutput',
};

const CREDENTIAL_FAILURE_TYPES: Record<CredentialUseFailure, string> = {
  missing: 'CredentialNotFound',
  unreadable: 'CredentialUnreadable',
  unsupported: 'CredentialTypeUnsupported',
  unconfigured: 'CredentialUnavailable',
  destination: 'CredentialDestinationRefused',
};

export interface HttpNodeConfig {
  method: string;
  url: string;
  headers?: Record<string, string>;
  query?: Record<string, string>;
  body?: unknown;
  timeoutMs?: number;
  responseFormat?: 'auto' | 'json' | 'text';
  acceptAnyStatus?: boolean;
  followRedirects?: boolean;
  /** A credential id or name of the run's workspace, resolved by the activity at call time. */
  credentialId?: string;
  /** The run's workspace (set by the run workflow): where `credentialId` is looked up. */
  workspaceId?: string;
}

/**
 * The body an http node outputs: with `responseFormat: "json"` the text parsed whatever the
 * content type says (empty text is null; text that is not JSON fails the node, without retry).
 */
function jsonBodyOf(config: HttpNodeConfig, body: unknown): unknown {
  if (config.responseFormat !== 'json' || typeof body !== 'string') return body;
  if (body.trim() === '') return null;
  try {
    return JSON.parse(body) as unknown;
  } catch {
    throw ApplicationFailure.nonRetryable(`The response body of ${config.method} ${config.url} is not valid JSON.`, 'HttpBodyNotJson');
  }
}

/** Without LLM_BASE_URL the deployment has no model: a workspace `llm` credential is needed. */
const NO_LLM: LlmConfig = { baseUrl: undefined, apiKey: undefined, model: 'unset', timeoutMs: 60_000, maxRetries: 2, prices: {} };

/** Whether a model call's failure is final: our own refusals, and 4xx answers other than 408, 409 and 429. */
function permanentModelError(err: unknown): boolean {
  if (err instanceof DomainError || err instanceof LlmNodeError) return true;
  const status = modelApiErrorStatus(err);
  return status !== undefined && status >= 400 && status < 500 && ![408, 409, 429].includes(status);
}

/**
 * The side-effecting node types. Failures are ApplicationFailures so the node's retry policy
 * (set by the workflow per node) decides: mistakes that cannot heal on retry — a syntax
 * error, a refused address, a 4xx — are non-retryable.
 */
export function createNodeActivities(deps: ActivityDeps) {
  const attempt = () => Context.current().info.attempt;
  /**
   * Resolves the credential in the run's workspace at call time and sends the request with it:
   * the workflow passes only the reference, so no secret enters the run's history.
   */
  const sendWithCredential = async (reference: string, workspaceId: string | undefined, request: HttpRequestInput) => {
    if (!workspaceId)
      throw new CredentialUseError(
        'missing',
        `Credential "${reference.slice(0, 200)}" cannot be resolved: the run did not name its workspace.`,
      );
    if (!deps.credentials) throw new CredentialUseError('unconfigured', 'Credentials are unavailable on this worker.');
    return sendHttpWithStoredCredential(
      deps.orm.em.fork(),
      { keys: deps.credentials, allowPrivateNetworks: deps.allowPrivateNetworks },
      workspaceId,
      reference,
      request,
    );
  };
  return {
    /** Runs a code node's source in the WebAssembly sandbox. */
    async codeNode(args: {
      source: string;
      input: unknown;
      workspaceId?: string;
    }): Promise<{ output: unknown; logs: SandboxLog[]; attempt: number }> {
      // The workspace picks the fair queue; a call still queued when the activity is canceled leaves the queue,
      // and one that cannot get a thread in time to finish inside the activity's timeout fails saying so.
      const { info, cancellationSignal } = Context.current();
      // (No room for a wait at all, as with a test's short timeout: leave it to the activity's own timeout.)
      const timeoutMs = deps.codeTimeoutMs ?? SANDBOX_DEFAULTS.timeoutMs;
      const queueBudgetMs = info.startToCloseTimeoutMs - timeoutMs - KILL_GRACE_MS - CODE_QUEUE_MARGIN_MS;
      const queueTimeoutMs = queueBudgetMs > 0 ? queueBudgetMs : undefined;
      // Imported expressions name their runtime instead of carrying it (services/extflow/jsRuntime.ts).
      const result = await runUserCode(expandJsRuntime(args.source), args.input, {
        workspaceId: args.workspaceId,
        signal: cancellationSignal,
        queueTimeoutMs,
        timeoutMs,
      });
      if (!result.ok) {
        const type = CODE_FAILURE_TYPES[result.error.kind];
        // The logs written before the failure help the author find it.
        const details = { kind: result.error.kind, logs: result.logs };
        throw result.error.kind === 'syntax' || result.error.kind === 'output'
          ? ApplicationFailure.nonRetryable(result.error.message, type, details)
          : ApplicationFailure.retryable(result.error.message, type, details);
      }
      return { output: result.output, logs: result.logs, attempt: attempt() };
    },

    /**
     * Runs an `llm` node (services/models/llmNode.ts): a regular activity, so a finished model
     * call is recorded and never paid twice. Token usage is in the output; its credits are returned beside it.
     */
    async llmNode(args: {
      workspaceId: string;
      config: LlmNodeConfig;
    }): Promise<{ output: LlmNodeOutput; costCredits: number; attempt: number }> {
      if (!deps.credentials) throw ApplicationFailure.nonRetryable('Credentials are unavailable on this worker.', 'CredentialUnavailable');
      let result;
      try {
        result = await runLlmNode(
          deps.orm.em.fork(),
          {
            llm: deps.llm ?? NO_LLM,
            keys: deps.credentials,
            allowPrivateNetworks: deps.allowPrivateNetworks,
            signal: Context.current().cancellationSignal,
          },
          args.workspaceId,
          args.config,
        );
      } catch (err) {
        if (permanentModelError(err)) throw ApplicationFailure.nonRetryable((err as Error).message, 'LlmFailed');
        throw ApplicationFailure.retryable((err as Error).message, 'LlmUnavailable');
      }
      // An activity result over Temporal's payload limit would fail the workflow task instead of the node.
      const oversized = oversizedOutput(result.output);
      if (oversized) throw ApplicationFailure.nonRetryable(oversized, 'NodeOutputTooLarge');
      return { ...result, attempt: attempt() };
    },

    /** Sends an http node's request through the outbound guard; 5xx and 429 are retryable failures, other 4xx are final. */
    async httpNode(
      config: HttpNodeConfig,
    ): Promise<{ output: { status: number; headers: Record<string, string>; body: unknown }; logs: SandboxLog[]; attempt: number }> {
      const request = {
        method: config.method,
        url: config.url,
        headers: config.headers,
        query: config.query,
        body: config.body,
        timeoutMs: config.timeoutMs,
        ...(config.followRedirects === false ? { maxRedirects: 0 } : {}),
        ...(config.responseFormat === 'json' || config.responseFormat === 'text' ? { bodyAs: 'text' as const } : {}),
      };
      let response;
      try {
        response = config.credentialId
          ? await sendWithCredential(config.credentialId, config.workspaceId, request)
          : await httpRequest(request, { allowPrivateNetworks: deps.allowPrivateNetworks });
      } catch (err) {
        if (err instanceof CredentialUseError) throw ApplicationFailure.nonRetryable(err.message, CREDENTIAL_FAILURE_TYPES[err.reason]);
        if (err instanceof CredentialRefreshError) throw ApplicationFailure.nonRetryable(err.message, 'CredentialRefreshFailed');
        const code = err instanceof OutboundError ? err.code : 'network';
        if (code === 'timeout') throw ApplicationFailure.retryable((err as Error).message, 'HttpTimeout');
        if (code === 'network') throw ApplicationFailure.retryable((err as Error).message, 'HttpNetworkError');
        // Refused targets, oversized answers, redirect loops and malformed requests will not heal on retry.
        throw ApplicationFailure.nonRetryable((err as Error).message, code === 'refused' ? 'OutboundRefused' : 'HttpRequestInvalid');
      }
      const output = { status: response.status, headers: response.headers, body: jsonBodyOf(config, response.body) };
      if (config.acceptAnyStatus === true) {
        const oversized = oversizedOutput(output);
        if (oversized) throw ApplicationFailure.nonRetryable(oversized, 'NodeOutputTooLarge');
        return { output, logs: [], attempt: attempt() };
      }
      if (response.status >= 500 || response.status === 429) {
        throw ApplicationFailure.retryable(`HTTP ${response.status} from ${config.method} ${config.url}`, 'HttpStatus', output);
      }
      if (response.status >= 400) {
        throw ApplicationFailure.nonRetryable(`HTTP ${response.status} from ${config.method} ${config.url}`, 'HttpStatus', output);
      }
      // An activity result over Temporal's payload limit would fail the workflow task instead of the node.
      const oversized = oversizedOutput(output);
      if (oversized) throw ApplicationFailure.nonRetryable(oversized, 'NodeOutputTooLarge');
      return { output, logs: [], attempt: attempt() };
    },
  };
}
