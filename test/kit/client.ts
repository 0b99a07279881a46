/**
 * The typed test client: real HTTP to a test app (through `http` of the harness) with the
 * answer bodies typed from the API's own zod schemas (`api/schemas`). A test that reads a
 * field the contract does not declare fails to type-check instead of reading `undefined`.
 *
 * Bodies are typed as the success answer; on an error status they hold `{ error, … }` —
 * check `status` first (or use `expectStatus`).
 */
import type { z } from 'zod';
import type {
  createdWorkflowSchema,
  deployResultSchema,
  updatedWorkflowSchema,
  workflowListSchema,
  workflowWithLinksSchema,
} from '../../api/schemas/workflows';
import type { fullRunSchema, fullRunSummarySchema, queuedReceiptSchema, rerunReceiptSchema, runLinksSchema } from '../../api/schemas/runs';
import type { credentialEnvelopeSchema, credentialListSchema } from '../../api/schemas/credentials';
import type { acceptedDeliverySchema, webhookListSchema, webhookSchema, webhookWithLinksSchema } from '../../api/schemas/webhooks';
import { http as untypedHttp, type HttpResult as UntypedHttpResult } from '../support/harness';
import type { WorkflowBody } from './graphs';

export type Workflow = z.infer<typeof workflowWithLinksSchema>['workflow'];
export type CreatedWorkflow = z.infer<typeof createdWorkflowSchema>;
export type UpdatedWorkflow = z.infer<typeof updatedWorkflowSchema>;
export type WorkflowWithLinks = z.infer<typeof workflowWithLinksSchema>;
export type WorkflowList = z.infer<typeof workflowListSchema>;
export type DeployResult = z.infer<typeof deployResultSchema>;
/** The full run (owner and write keys); read-only keys get the `workspace-safe.v1` projection. */
export type Run = z.infer<typeof fullRunSchema>;
export type RunSummary = z.infer<typeof fullRunSummarySchema>;
export type RunLinks = z.infer<typeof runLinksSchema>;
export type RunWithLinks = { run: Run; links: RunLinks };
export type RunList = { runs: RunSummary[]; links: RunLinks[] };
export type QueuedReceipt = Omit<z.infer<typeof queuedReceiptSchema>, 'run'> & { run: Run };
export type RerunReceipt = Omit<z.infer<typeof rerunReceiptSchema>, 'run'> & { run: Run };
export type Webhook = z.infer<typeof webhookSchema>;
export type WebhookList = z.infer<typeof webhookListSchema>;
export type WebhookWithLinks = z.infer<typeof webhookWithLinksSchema>;
export type AcceptedDelivery = z.infer<typeof acceptedDeliverySchema>;
/** A credential's answer (create, get, update): the masked credential. */
export type CredentialEnvelope = z.infer<typeof credentialEnvelopeSchema>;
export type CredentialList = z.infer<typeof credentialListSchema>;
/** The error answer of every route. */
export interface ApiError {
  error: string;
  [field: string]: unknown;
}

/**
 * The two projections of a run-like union from `api/schemas`: owner and write keys get the full
 * one, read-only keys the `workspace-safe.v1` one (the members with `redaction`). Type each call
 * as its caller's projection instead of narrowing in the test.
 */
export type FullProjection<U> = Exclude<U, { redaction: unknown }>;
export type SafeProjection<U> = Extract<U, { redaction: unknown }>;

/**
 * A success body that may be a bare refusal instead (`{ error, code? }` on a 4xx/5xx): for
 * tests that read both sides of one call, e.g. `post<Refusable<RerunReceipt>>(…)`.
 */
export type Refusable<T> = T & { error?: string; code?: string };

/**
 * An answer of the envelope family (`{ ok: true, data, meta }` or `{ ok: false, error }`), typed
 * with both sides as the other bodies are typed as the success answer: check `status` (or `ok`)
 * first, then read `data` or `error`.
 */
export interface Enveloped<T = unknown> {
  ok: boolean;
  data: T;
  meta: { contractVersion: string };
  error: { code: string; message: string; [field: string]: unknown };
}

/** An HTTP answer whose body is `unknown` until the caller names its type. */
export type HttpResult<T = unknown> = UntypedHttpResult<T>;

/** The request options of `http`, without the token (the client carries it). */
export interface RequestOptions {
  body?: unknown;
  rawBody?: string;
  headers?: Record<string, string>;
  cookie?: string;
  /** Another credential than the client's for this one request. */
  token?: string;
}

/** Where a client sends requests: an app (anything with its `url`). */
export interface AppTarget {
  url: string;
}

/** The options of `http`: the client's, with the credential. */
export interface HttpOptions extends Omit<RequestOptions, 'token'> {
  token?: string;
}

/**
 * Real HTTP to `app`, as the harness's `http`, but the body is `unknown` until the caller names
 * its type (`http<T>(…)`, ideally from `api/schemas`) or narrows it: reading a field the answer
 * does not have fails to type-check instead of reading `undefined`.
 */
export function http<T = unknown>(app: AppTarget, method: string, path: string, opts: HttpOptions = {}): Promise<HttpResult<T>> {
  return untypedHttp<T>(app, method, path, opts);
}

const WF = '/api/v1/workflows';
const RUNS = '/api/v1/runs';

export type TestClient = ReturnType<typeof client>;

/**
 * A client for `app` calling as `token` (none for public routes). `request<T>` is the generic
 * call; the resource helpers return typed bodies.
 */
export function client(app: AppTarget, token?: string) {
  const request = <T = unknown>(method: string, path: string, opts: RequestOptions = {}): Promise<HttpResult<T>> =>
    http<T>(app, method, path, { ...opts, token: opts.token ?? token });
  return {
    app,
    token,
    request,
    get: <T = unknown>(path: string, opts?: RequestOptions) => request<T>('GET', path, opts),
    post: <T = unknown>(path: string, body?: unknown, opts: RequestOptions = {}) => request<T>('POST', path, { ...opts, body }),
    patch: <T = unknown>(path: string, body?: unknown, opts: RequestOptions = {}) => request<T>('PATCH', path, { ...opts, body }),
    put: <T = unknown>(path: string, body?: unknown, opts: RequestOptions = {}) => request<T>('PUT', path, { ...opts, body }),
    delete: <T = unknown>(path: string, opts?: RequestOptions) => request<T>('DELETE', path, opts),
    /** The same app as another caller. */
    as: (otherToken: string | undefined) => client(app, otherToken),
    workflows: {
      create: (body: WorkflowBody, opts?: RequestOptions) => request<CreatedWorkflow>('POST', WF, { ...opts, body }),
      get: (id: string, opts?: RequestOptions) => request<WorkflowWithLinks>('GET', `${WF}/${id}`, opts),
      list: (query = '', opts?: RequestOptions) => request<WorkflowList>('GET', `${WF}${query}`, opts),
      update: (id: string, body: Record<string, unknown>, opts?: RequestOptions) =>
        request<UpdatedWorkflow>('PATCH', `${WF}/${id}`, { ...opts, body }),
      deploy: (id: string, opts?: RequestOptions) => request<DeployResult>('POST', `${WF}/${id}/deploy`, opts),
      /** POST /execute with `{ input, ...extra }` (e.g. `executionTargetId`). */
      execute: (id: string, input: unknown = {}, extra: Record<string, unknown> = {}, opts?: RequestOptions) =>
        request<QueuedReceipt>('POST', `${WF}/${id}/execute`, { ...opts, body: { input, ...extra } }),
    },
    runs: {
      get: (id: string, opts?: RequestOptions) => request<RunWithLinks>('GET', `${RUNS}/${id}`, opts),
      list: (query = '', opts?: RequestOptions) => request<RunList>('GET', `${RUNS}${query}`, opts),
      cancel: (id: string, body: Record<string, unknown> = {}, opts?: RequestOptions) =>
        request<RunWithLinks>('POST', `${RUNS}/${id}/cancel`, { ...opts, body }),
      rerun: (id: string, body: Record<string, unknown> = {}, opts?: RequestOptions) =>
        request<RerunReceipt>('POST', `${RUNS}/${id}/rerun`, { ...opts, body }),
    },
    webhooks: {
      list: (query = '', opts?: RequestOptions) => request<WebhookList>('GET', `/api/v1/webhooks${query}`, opts),
      get: (id: string, opts?: RequestOptions) => request<WebhookWithLinks>('GET', `/api/v1/webhooks/${id}`, opts),
      /** Calls a webhook's public invoke path (or full URL) with `body`; no credential. */
      invoke: <T = AcceptedDelivery>(pathOrUrl: string, body?: unknown, opts: Omit<RequestOptions, 'token'> = {}) =>
        http<T>(app, 'POST', pathOrUrl.startsWith('http') ? new URL(pathOrUrl).pathname + new URL(pathOrUrl).search : pathOrUrl, {
          ...opts,
          body,
        }),
    },
  };
}

/** Throws (failing the test) with the answer's text when `res.status` is not `status`; returns `res`. */
export function expectStatus<R extends { status: number; text: string }>(res: R, status: number, what = 'request'): R {
  if (res.status !== status) throw new Error(`${what}: expected HTTP ${status}, got ${res.status}: ${res.text.slice(0, 2_000)}`);
  return res;
}
