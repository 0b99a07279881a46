import { z } from 'zod';
import { routeGroup, type AnyRoute, type RouteResult } from '../http/route';
import type { AppDeps } from '../deps';
import type { AppContext } from '../context';
import { DomainError, unavailable } from '../../services/kernel/errors';
import { STATUS_OF_KIND } from '../http/errorMapping';
import { PayloadDecryptionError, payloadFromJson, payloadToJson, type JsonPayload } from '../../services/kernel/payloadCodec';

/**
 * Temporal's codec server protocol, for the Web UI ("Data Encoder" setting) and the CLI
 * (`--codec-endpoint`): operators see decrypted payloads; nobody else can. The browser calls
 * it cross-origin from the UI's origin, so answers carry CORS headers for TEMPORAL_UI_ORIGINS.
 */
export const CODEC_PATH = '/api/temporal-codec';

/** The most payloads one codec request may carry. */
const MAX_PAYLOADS = 1000;

const payloadsSchema = z.strictObject({
  payloads: z
    .array(z.object({ metadata: z.record(z.string(), z.string().max(1024)).optional(), data: z.string().optional() }))
    .max(MAX_PAYLOADS),
});

/**
 * CORS headers for a browser call from `origin` when it is one of the Web UI's origins
 * (TEMPORAL_UI_ORIGINS); none otherwise, so the browser keeps the answer from any other page.
 * Credentials are allowed: the UI's "include cross-origin credentials" sends the operator's
 * session cookie.
 */
export function codecCorsHeaders(deps: AppDeps, origin: string | undefined): Record<string, string> {
  const vary = { vary: 'Origin' };
  if (!origin || !deps.config.temporal.uiOrigins.includes(origin)) return vary;
  return {
    ...vary,
    'access-control-allow-origin': origin,
    'access-control-allow-credentials': 'true',
    'access-control-allow-methods': 'POST, OPTIONS',
    'access-control-allow-headers': 'content-type, x-namespace, authorization',
    'access-control-max-age': '600',
  };
}

/**
 * Middleware: every answer under CODEC_PATH (refusals, malformed bodies and preflights included)
 * carries the CORS headers, so the UI can read and show why a decode failed instead of a bare
 * network error. Mounted outside the error middleware, whose answers it therefore covers.
 */
export function codecCors(deps: AppDeps) {
  return async (ctx: AppContext, next: () => Promise<unknown>) => {
    if (ctx.path === CODEC_PATH || ctx.path.startsWith(`${CODEC_PATH}/`)) ctx.set(codecCorsHeaders(deps, ctx.get('origin') || undefined));
    await next();
  };
}

/** Bytes of a refused CLI request read to count its payloads; a larger body keeps the plain refusal. */
const MAX_REFUSED_BODY_BYTES = 4 * 1024 * 1024;

/**
 * Temporal's CLI (and any Go SDK remote codec) retries a codec answer that is not 200 until its
 * deadline and then prints only "context deadline exceeded", never the answer's body. Such a
 * caller is recognised by the `X-Namespace` header it always sends (the Web UI sends it too,
 * but with an `Origin`): for it, a decode refused for want of operator rights (401) or of
 * operator configuration (503) is answered 200 with each payload replaced by a readable
 * `json/plain` one, `{"codecRefused": {"status", "error"}}`, which the CLI prints in place of
 * the data. Nothing is decoded; encode refusals keep their status (an error payload must never
 * be stored as data).
 */
export function codecRefusalsForCli() {
  return async (ctx: AppContext, next: () => Promise<unknown>): Promise<void> => {
    const cliDecode = ctx.method === 'POST' && ctx.path === `${CODEC_PATH}/decode` && 'x-namespace' in ctx.headers && !ctx.get('origin');
    if (!cliDecode) {
      await next();
      return;
    }
    try {
      await next();
    } catch (err) {
      if (!(err instanceof DomainError) || (err.kind !== 'unauthenticated' && err.kind !== 'unavailable')) throw err;
      const count = await payloadCountOfUnreadBody(ctx);
      if (count === null) throw err;
      const refusal = { codecRefused: { status: STATUS_OF_KIND[err.kind], error: err.message } };
      const payload = payloadToJson({
        metadata: { encoding: new TextEncoder().encode('json/plain') },
        data: new TextEncoder().encode(JSON.stringify(refusal)),
      });
      ctx.status = 200;
      ctx.body = { payloads: Array.from({ length: count }, () => payload) };
    }
  };
}

/** How many payloads the (not yet parsed) request body holds; null when it is too large, not JSON or not a codec body. */
async function payloadCountOfUnreadBody(ctx: AppContext): Promise<number | null> {
  if (ctx.request.body !== undefined) return null;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_REFUSED_BODY_BYTES) return null;
    chunks.push(chunk);
  }
  try {
    const parsed = payloadsSchema.safeParse(JSON.parse(Buffer.concat(chunks).toString('utf8')));
    return parsed.success ? parsed.data.payloads.length : null;
  } catch {
    return null;
  }
}

function codecOf(deps: AppDeps) {
  const { codec } = deps.services.temporalCodec;
  if (!codec) throw unavailable('Temporal payloads are not encrypted on this deployment: there is nothing to decode.');
  return codec;
}

/** The codec endpoints: operators only, under CODEC_PATH. */
const codecGroup = routeGroup({
  tags: ['Operators'],
  family: 'bare',
  access: { kind: 'operator' },
  errors: {
    400: 'Malformed body',
    401: 'Operator credentials are required.',
    503: 'Operator access or payload encryption is not configured',
  },
  pathPrefix: CODEC_PATH,
});

const answer = (payloads: JsonPayload[]): RouteResult => ({ status: 200, body: { payloads } });

async function decodeEach(deps: AppDeps, payloads: JsonPayload[]): Promise<JsonPayload[]> {
  const codec = codecOf(deps);
  // A payload this deployment cannot decrypt (a retired key) is shown as stored rather than failing the whole page.
  return Promise.all(
    payloads.map(async (json) => {
      try {
        const [decoded] = await codec.decode([payloadFromJson(json)]);
        return decoded ? payloadToJson(decoded) : json;
      } catch (err) {
        if (err instanceof PayloadDecryptionError) return json;
        throw err;
      }
    }),
  );
}

async function encodeAll(deps: AppDeps, payloads: JsonPayload[]): Promise<JsonPayload[]> {
  return (await codecOf(deps).encode(payloads.map(payloadFromJson))).map(payloadToJson);
}

const codecRoute = (direction: 'decode' | 'encode') =>
  codecGroup({
    method: 'post',
    path: `/${direction}`,
    operationId: direction === 'decode' ? 'temporalCodecDecode' : 'temporalCodecEncode',
    summary:
      direction === 'decode'
        ? 'Decrypt Temporal payloads for an operator (codec server protocol)'
        : 'Encrypt payloads for an operator (codec server protocol; used when the UI sends signals)',
    body: payloadsSchema,
    responses: { 200: { description: 'The payloads, transformed', schema: payloadsSchema } },
    handler: async (_ctx, { body, deps }) => answer(await (direction === 'decode' ? decodeEach : encodeAll)(deps, body.payloads)),
  });

export const temporalCodecRoutes: AnyRoute[] = [codecRoute('decode'), codecRoute('encode')];
