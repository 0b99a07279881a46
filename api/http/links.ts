/**
 * The one link builder of the API: every absolute URL a response carries is made here from
 * the request origin. Services return data (ids, tokens); only this module turns it into URLs.
 */
import type { Run, StoredWait } from '../../db/entities';
import type { AppContext } from '../context';
import type { WebhookData } from '../../services/webhooks';
import { isTruncatedValue } from '../../services/runs';
import { requestOrigin } from './urls';

export interface LinkBase {
  /** Request origin, e.g. `https://api.example.com`. */
  origin: string;
  /** When the Temporal Web UI address is configured, runs link straight to their execution there. */
  temporalUi?: { url: string; namespace: string };
}

/** The link base of a request: its origin, and the Temporal Web UI when configured. */
export function linkBase(ctx: AppContext): LinkBase {
  const ui = ctx.deps.config.temporal.uiUrl;
  return { origin: requestOrigin(ctx), ...(ui ? { temporalUi: { url: ui, namespace: ctx.deps.temporal.namespace } } : {}) };
}

/** Links of a workflow, absolute from the request origin. */
export function workflowLinks(ctx: AppContext, id: string) {
  const base = `${requestOrigin(ctx)}/api/v1/workflows/${id}`;
  return {
    self: base,
    version: `${base}/versions`,
    validate: `${base}/validate`,
    execute: `${base}/execute`,
    status: `${base}/status`,
    portable: `${base}?format=portable`,
    deploy: `${base}/deploy`,
  };
}

/** Links of a run: the API's run, execution, status, rerun and cancel URLs, and its Temporal UI page. */
export function runLinks(run: Pick<Run, 'id' | 'workflowId'> & { dryRun?: boolean }, base: LinkBase) {
  const v1 = `${base.origin}/api/v1`;
  // Dry runs never reach Temporal, so they have nothing to show there.
  const temporal =
    base.temporalUi && !run.dryRun
      ? `${base.temporalUi.url.replace(/\/$/, '')}/namespaces/${encodeURIComponent(base.temporalUi.namespace)}/workflows/${encodeURIComponent(run.id)}`
      : undefined;
  return {
    ...(temporal ? { temporal } : {}),
    run: `${v1}/runs/${run.id}`,
    execution: executionUrl(base.origin, run.id),
    status: `${v1}/workflows/${run.workflowId}/status?runId=${run.id}`,
    rerun: `${v1}/runs/${run.id}/rerun`,
    cancel: `${v1}/runs/${run.id}/cancel`,
  };
}

/** The URL of a run's execution detail (logs area). */
export const executionUrl = (origin: string, runId: string) => `${origin}/api/v1/logs/executions/${runId}`;

/** `executionUrl` bound to one origin, for services that list related runs. */
export const executionLinker = (origin: string) => (runId: string) => executionUrl(origin, runId);

/** The public URL that resumes an event wait; the token is the capability. */
export const resumeUrl = (origin: string, token: string) => `${origin}/api/hooks/resume/${token}`;

type WaitShown = Omit<StoredWait, 'token'> & { resumeUrl?: string };

/** Where the whole of a truncated run value is: the run's input or output, or one step's. */
export function runValueUrl(origin: string, runId: string, field: 'input' | 'output', nodeId?: string): string {
  const run = `${origin}/api/v1/runs/${encodeURIComponent(runId)}`;
  return nodeId === undefined ? `${run}/${field}` : `${run}/steps/${encodeURIComponent(nodeId)}/${field}`;
}

const withHref = (value: unknown, href: () => string) => (isTruncatedValue(value) ? { ...value, href: href() } : value);

type RunViewShape = {
  id: string;
  waits?: StoredWait[];
  input?: unknown;
  output?: unknown;
  steps?: Array<{ nodeId: string; input?: unknown; output?: unknown }>;
};

/**
 * A run view as the API shows it: each event wait's resume token becomes its `resumeUrl`, and
 * each value truncated by the view's cap (services/runs/views.ts) gets `href`, the route that
 * returns it whole. Safe projections carry none of these and pass through unchanged.
 */
export function withRunUrls<T extends RunViewShape>(view: T, origin: string): Omit<T, 'waits'> & { waits?: WaitShown[] } {
  const shown: T = { ...view };
  if ('input' in view) shown.input = withHref(view.input, () => runValueUrl(origin, view.id, 'input'));
  if ('output' in view) shown.output = withHref(view.output, () => runValueUrl(origin, view.id, 'output'));
  if (view.steps) {
    shown.steps = view.steps.map((s) =>
      'input' in s || 'output' in s
        ? {
            ...s,
            input: withHref(s.input, () => runValueUrl(origin, view.id, 'input', s.nodeId)),
            output: withHref(s.output, () => runValueUrl(origin, view.id, 'output', s.nodeId)),
          }
        : s,
    );
  }
  if (!view.waits) return shown;
  return { ...shown, waits: view.waits.map(({ token, ...wait }) => (token ? { ...wait, resumeUrl: resumeUrl(origin, token) } : wait)) };
}

// --- Webhooks -------------------------------------------------------------------------------

/** Public invoke URL of a generic webhook token. */
export function webhookInvokeUrl(origin: string, token: string): string {
  return `${origin}/api/webhooks/${token}`;
}

/** Public ingress URL of an error-tracker endpoint token (shown once, at creation). */
export function errtrackerInvokeUrl(origin: string, token: string): string {
  return `${origin}/api/integrations/errtracker/${token}`;
}

/** The webhook resource itself. */
export function webhookUrl(origin: string, webhookId: string): string {
  return `${origin}/api/v1/webhooks/${webhookId}`;
}

/**
 * A webhook as the API answers it: its data with the token replaced by `invokeUrl` and
 * `links.invoke` (both null for error-tracker endpoints, whose token is not kept).
 */
export function webhookWithLinks(origin: string, webhook: WebhookData) {
  const { token, ...data } = webhook;
  const invokeUrl = token === null ? null : webhookInvokeUrl(origin, token);
  return { ...data, invokeUrl, links: { invoke: invokeUrl } };
}

/** The deploy response's links to the first webhook of the deployed version (null without one). */
export function deployedWebhookLinks(origin: string, first: WebhookData | undefined) {
  const invoke = first?.token ? webhookInvokeUrl(origin, first.token) : null;
  return { webhook: first ? webhookUrl(origin, first.id) : null, invoke };
}

/** Where an end-user gateway key reads and cancels a run it started (never the workspace run routes). */
export function endUserRunUrls(ctx: AppContext, runId: string) {
  const self = `${requestOrigin(ctx)}/api/v1/end-users/runs/${encodeURIComponent(runId)}`;
  return { statusUrl: self, cancelUrl: `${self}/cancel` };
}

/** Upload and complete URLs of a file under the mount the request came through (`/api/v1/files` or `/api/files`). */
export function fileLinks(origin: string, mount: string, fileId: string) {
  return { uploadUrl: `${origin}${mount}/${fileId}/content`, completeUrl: `${origin}${mount}/${fileId}/complete` };
}

/** The rows URL of a user table. */
export function tableRowsUrl(origin: string, tableId: string): string {
  return `${origin}/api/v1/databases/${tableId}/rows`;
}

/** Where a person reviews and confirms a prepared configuration proposal (a session page). */
export function configurationProposalUrl(origin: string, proposalId: string): string {
  return `${origin}/configuration/proposals/${proposalId}`;
}
