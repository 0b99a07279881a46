import { z } from 'zod';
import { routeGroup, type AnyRoute, type RouteResult } from '../http/route';
import type { AppDeps } from '../deps';
import { unavailable } from '../../services/kernel/errors';
import { PayloadDecryptionError, payloadFromJson, payloadToJson, type JsonPayload } from '../../services/kernel/payloadCodec';

/**
 * Temporal's codec server protocol, for the Web UI ("Data Encoder" setting) and the CLI
 * (`--codec-endpoint`): operators see decrypted payloads; nobody else can. The browser calls
 * it cross-origin from the UI's origin, so answers carry CORS headers for TEMPORAL_UI_URL.
 */
export const CODEC_PATH = '/api/temporal-codec';

const payloadsSchema = z.strictObject({
  payloads: z.array(z.object({ metadata: z.record(z.string(), z.string().max(1024)).optional(), data: z.string().optional() })).max(1000),
});

/** CORS headers for the configured Web UI origin (none when the UI address is unknown). */
export function codecCorsHeaders(deps: AppDeps): Record<string, string> {
  const ui = deps.config.temporal.uiUrl;
  if (!ui) return {};
  return {
    'access-control-allow-origin': new URL(ui).origin,
    'access-control-allow-credentials': 'true',
    'access-control-allow-methods': 'POST, OPTIONS',
    'access-control-allow-headers': 'content-type, x-namespace, authorization',
    vary: 'Origin',
  };
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

const answer = (deps: AppDeps, payloads: JsonPayload[]): RouteResult => ({
  status: 200,
  body: { payloads },
  headers: codecCorsHeaders(deps),
});

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
    handler: async (_ctx, { body, deps }) => answer(deps, await (direction === 'decode' ? decodeEach : encodeAll)(deps, body.payloads)),
  });

export const temporalCodecRoutes: AnyRoute[] = [codecRoute('decode'), codecRoute('encode')];
