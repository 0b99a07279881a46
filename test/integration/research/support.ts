import { createHash, randomUUID } from 'node:crypto';
import type { LlmConfig } from '../../../services/kernel/config';
import type { FakeLlmServer } from '../../fakes/llm';
import type { z } from 'zod';
import type { researchCreatedSchema, researchRunEnvelope, researchRunSchema } from '../../../api/schemas/research';
import { http, type Enveloped } from '../../kit';

export type ResearchRun = z.infer<typeof researchRunSchema>;
export type ResearchCreated = Enveloped<z.infer<typeof researchCreatedSchema>>;
/** GET and cancel: `{ run }` in the envelope. */
export type ResearchRunAnswer = Enveloped<z.infer<typeof researchRunEnvelope>>;

export const key = () => `research-${randomUUID()}`;

/** The app's (and in-process worker's) model configuration for the loopback model server. */
export const llmConfig = (llm: FakeLlmServer): LlmConfig => ({
  baseUrl: llm.url,
  apiKey: llm.apiKey,
  model: llm.model,
  timeoutMs: 10_000,
  maxRetries: 0,
  prices: { [llm.model]: { input: 2, output: 10 }, '*': { input: 1, output: 1 } },
});

export const expectedRunId = (workspaceId: string, k: string) =>
  `research_${createHash('sha256').update(`${workspaceId}\0${k}`).digest('hex').slice(0, 32)}`;

export function createResearch(app: { url: string }, token: string, body: unknown, k: string | null = key()) {
  return http<ResearchCreated>(app, 'POST', '/api/v1/research', { token, body, headers: k ? { 'idempotency-key': k } : {} });
}

export async function getResearch(app: { url: string }, token: string, id: string): Promise<ResearchRun> {
  const res = await http<ResearchRunAnswer>(app, 'GET', `/api/v1/research/${id}`, { token });
  if (res.status !== 200) throw new Error(`GET research ${id}: ${res.status} ${res.text}`);
  return res.body.data.run;
}

/** Polls the run until `done(run)` (default: a terminal status). */
export async function waitForResearch(
  app: { url: string },
  token: string,
  id: string,
  done: (run: ResearchRun) => boolean = (r) => ['succeeded', 'failed', 'canceled'].includes(r.status),
  timeoutMs = 90_000,
): Promise<ResearchRun> {
  const deadline = Date.now() + timeoutMs;
  let run: ResearchRun | undefined;
  while (Date.now() < deadline) {
    run = await getResearch(app, token, id);
    if (done(run)) return run;
    await new Promise((r) => setTimeout(r, 150));
  }
  throw new Error(`research run ${id} did not reach the expected state: ${JSON.stringify(run)}`);
}
