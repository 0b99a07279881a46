/** The service's own HTTP API, as benchmarks use it (always on the stack's loopback address). */
import type { BenchStack } from './stack';

/** One authenticated JSON call with the benchmark workspace's key; throws on a non-2xx answer. */
export async function apiCall<T = Record<string, unknown>>(stack: BenchStack, method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(`${stack.apiUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${stack.workspace.apiKey}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = (await res.json().catch(() => null)) as T | null;
  if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}: ${JSON.stringify(json)}`);
  return (json ?? {}) as T;
}

/** Creates and deploys a workflow; returns its id and (for webhook workflows) the invoke URL on our loopback address. */
export async function deployWorkflow(stack: BenchStack, workflow: unknown): Promise<{ workflowId: string; invokeUrl: string | null }> {
  const created = await apiCall<{ workflow?: { id?: string } }>(stack, 'POST', '/api/v1/workflows', workflow);
  const workflowId = created.workflow?.id;
  if (!workflowId) throw new Error(`workflow creation returned no id: ${JSON.stringify(created)}`);
  const deployed = await apiCall<{ webhookUrl?: string | null }>(stack, 'POST', `/api/v1/workflows/${workflowId}/deploy`);
  // The URL's origin follows the request's Host; always aim at the loopback address we listen on.
  return { workflowId, invokeUrl: deployed.webhookUrl ? `${stack.apiUrl}${new URL(deployed.webhookUrl).pathname}` : null };
}
