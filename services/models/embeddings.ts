/**
 * The model-call module, embeddings first: one client over the OpenAI-compatible protocol (the
 * `openai` npm client) configured by EMBEDDINGS_BASE_URL, EMBEDDINGS_MODEL and
 * EMBEDDINGS_API_KEY. Every request goes through the outbound guard (services/kernel/outbound.ts) via
 * the client's `fetch` option; the client applies the timeout and retries 408, 409, 429 and 5xx
 * answers and connection errors with exponential backoff (honouring Retry-After).
 *
 * Called from Temporal activities only (indexing, query embedding), never from a request handler.
 */
import type OpenAI from 'openai';
import { httpRequest } from '../kernel/outbound';
import { lazyModule } from '../kernel/lazyModule';

/** The `openai` package once a model client was made (services/kernel/lazyModule.ts says why it is loaded late). */
let openAiPackage: typeof import('openai') | undefined;

/** Loads the `openai` package on the first model call. */
const loadOpenAi = lazyModule(async () => (openAiPackage = await import('openai')));

/**
 * A client of the `openai` package, made on its first use (`client()`), so that a process that
 * never calls a model never loads the package.
 */
export function lazyOpenAiClient(options: ConstructorParameters<typeof OpenAI>[0]): () => Promise<OpenAI> {
  return lazyModule(async () => new (await loadOpenAi()).default(options));
}

/**
 * The HTTP status of a model endpoint's error answer (the `openai` client's APIError), or
 * undefined for any other error. Needs no loading: an APIError exists only once the package is loaded.
 */
export function modelApiErrorStatus(err: unknown): number | undefined {
  return openAiPackage && err instanceof openAiPackage.APIError && typeof err.status === 'number' ? err.status : undefined;
}

export interface EmbeddingsConfig {
  /** Unset: no embeddings endpoint; knowledge search is keyword only. */
  baseUrl: string | undefined;
  model: string;
  apiKey: string | undefined;
  timeoutMs: number;
  maxRetries: number;
}

export interface EmbeddingsClient {
  readonly model: string;
  /** One unit-length vector per text, in order. */
  embed(texts: string[], signal?: AbortSignal): Promise<number[][]>;
}

/** Largest embeddings response accepted (a batch of 64 vectors of 3072 floats is about 4 MB of JSON). */
const MAX_RESPONSE_BYTES = 32 * 1024 * 1024;

/**
 * A `fetch` for the openai client that sends every request through `httpRequest` (SSRF guard,
 * resolve-once lookup, response size cap).
 */
export function guardedFetch(opts: { allowPrivateNetworks: boolean; timeoutMs: number; maxResponseBytes?: number }): typeof fetch {
  return async (input, init) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.toString() : input.url;
    const headers: Record<string, string> = {};
    new Headers(init?.headers).forEach((value, key) => (headers[key] = value));
    let body: string | Uint8Array | undefined;
    if (typeof init?.body === 'string') body = init.body;
    else if (init?.body instanceof Uint8Array) body = init.body;
    else if (init?.body instanceof ArrayBuffer) body = new Uint8Array(init.body);
    else if (init?.body != null) body = String(init.body);
    const res = await httpRequest(
      { method: init?.method ?? 'GET', url, headers, body, timeoutMs: opts.timeoutMs },
      {
        allowPrivateNetworks: opts.allowPrivateNetworks,
        signal: init?.signal ?? undefined,
        maxResponseBytes: opts.maxResponseBytes ?? MAX_RESPONSE_BYTES,
      },
    );
    const text = typeof res.body === 'string' ? res.body : JSON.stringify(res.body);
    const outHeaders = new Headers();
    for (const [key, value] of Object.entries(res.headers)) {
      if (key !== 'content-length' && key !== 'content-encoding' && key !== 'transfer-encoding') outHeaders.set(key, value);
    }
    return new Response(res.status === 204 || res.status === 304 ? null : text, { status: res.status, headers: outHeaders });
  };
}

/** Scales a vector to unit length, so cosine similarity is a dot product. */
export function normalise(vector: number[]): number[] {
  let sum = 0;
  for (const v of vector) sum += v * v;
  const norm = Math.sqrt(sum);
  return norm > 0 ? vector.map((v) => v / norm) : vector;
}

/** The embeddings client, or null when no endpoint is configured. */
export function createEmbeddingsClient(config: EmbeddingsConfig, opts: { allowPrivateNetworks: boolean }): EmbeddingsClient | null {
  if (!config.baseUrl) return null;
  const client = lazyOpenAiClient({
    baseURL: config.baseUrl,
    // Local OpenAI-compatible servers often need no key; the client insists on one.
    apiKey: config.apiKey || 'unused',
    timeout: config.timeoutMs,
    maxRetries: config.maxRetries,
    fetch: guardedFetch({ allowPrivateNetworks: opts.allowPrivateNetworks, timeoutMs: config.timeoutMs }),
  });
  return {
    model: config.model,
    async embed(texts, signal) {
      if (texts.length === 0) return [];
      const res = await (await client()).embeddings.create({ model: config.model, input: texts, encoding_format: 'float' }, { signal });
      // By each item's index, not by position: the API may answer out of order. A missing index
      // must fail here (an array with a hole would pass `some`, which skips holes).
      const byIndex = new Map(res.data.map((item) => [item.index, item.embedding]));
      const vectors: number[][] = [];
      for (let i = 0; i < texts.length; i++) {
        const embedding = byIndex.get(i);
        if (!Array.isArray(embedding) || byIndex.size !== texts.length)
          throw new Error(`The embeddings endpoint returned ${res.data.length} vectors for ${texts.length} inputs.`);
        vectors.push(normalise(embedding));
      }
      const dims = vectors[0]?.length ?? 0;
      if (dims === 0 || vectors.some((v) => v.length !== dims))
        throw new Error('The embeddings endpoint returned vectors of different or zero dimensions.');
      return vectors;
    },
  };
}
