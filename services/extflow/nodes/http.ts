/**
 * HTTP Request (v1 to v4.x) → http, followed by a transform shaping the answer as the external
 * tool does (the body, `{ data }` for text, or `{ body, headers, statusCode, statusMessage }`
 * with "full response"). Each version's parameters are first read into one request
 * description (`readV1`, `readV3`), then mapped once. Query, headers and bodies (JSON,
 * form-urlencoded, multipart text fields, raw) keep their expressions; the node's credential
 * becomes an alias (`credentialId`: the credential's name, resolved by name at run time, sent
 * only to the hosts it is bound to). What cannot be carried over is either a placeholder
 * (`Unsupported`: pagination, file answers, binary bodies, digest and OAuth1) or, where the
 * node still does its job, a named readiness issue (`unsupportedOption`).
 */
import { STATUS_CODES } from 'node:http';
import { isExtExpression, jsonLiteral, splitTemplate, toJsonata, toStringTemplate, toTemplate, type ExpressionScope } from '../expressions';
import { Unsupported } from '../types';
import { isRecord, ourNode, type MapContext, type Mapper } from './context';

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD'];
/** The engine's cap on an http node's timeout. */
const MAX_TIMEOUT_MS = 120_000;
/** Redirects the outbound guard follows at most. */
const MAX_REDIRECTS = 5;
/** Fixed, so a converted graph is the same at every import; long enough not to occur in a field. */
const MULTIPART_BOUNDARY = '----ExtflowFormBoundary7MA4YWxkTrZu0gW';

/** The external tool's generic credential types and ours. */
const GENERIC_AUTH: Record<string, string> = {
  httpHeaderAuth: 'http_header',
  httpBasicAuth: 'basic',
  httpBearerAuth: 'bearer',
  httpQueryAuth: 'http_query',
  httpCustomAuth: 'http_custom',
  oAuth2Api: 'oauth2',
};

/** v1's `authentication` values and the generic credential type each one reads. */
const V1_AUTH: Record<string, string> = {
  basicAuth: 'httpBasicAuth',
  headerAuth: 'httpHeaderAuth',
  queryAuth: 'httpQueryAuth',
  oAuth2: 'oAuth2Api',
  digestAuth: 'httpDigestAuth',
  oAuth1: 'oAuth1Api',
};

/**
 * Service credential types ("predefined" in the external tool) whose API takes a bearer token
 * in the Authorization header, as our `bearer` sends it. Others (and those sending the key in
 * a header of their own or in the URL) keep their type and are said so.
 */
const PREDEFINED_BEARER = new Set([
  'openAiApi',
  'notionApi',
  'airtableTokenApi',
  'slackApi',
  'githubApi',
  'hubspotAppToken',
  'stripeApi',
  'mistralCloudApi',
  'groqApi',
  'perplexityApi',
  'openRouterApi',
  'deepSeekApi',
  'linearApi',
  'clickUpApi',
  'todoistApi',
  'asanaApi',
  'calendlyApi',
  'supabaseApi',
]);

/** Where a request's query, headers or body come from before they are mapped. */
type Params = { kind: 'pairs'; pairs: Array<{ name: string; value: unknown }> } | { kind: 'json'; text: unknown };

/** One HTTP Request node, whatever its version. */
interface RequestSpec {
  method: string;
  url: unknown;
  /** The external tool's credential type the node authenticates with, and whether it is a service ("predefined") type. */
  auth: { type: string; predefined: boolean } | null;
  query: Params | null;
  headers: Params | null;
  /** Header names as the external tool sends them: v1 lower-cases those given as pairs. */
  lowerHeaderNames: boolean;
  body: { type: 'json' | 'form' | 'multipart' | 'raw'; params: Params | { kind: 'text'; text: unknown }; contentType?: string } | null;
  responseFormat: 'autodetect' | 'json' | 'text' | 'file';
  outputProperty: string;
  fullResponse: boolean;
  neverError: boolean;
  timeoutMs: number | undefined;
  followRedirects: boolean;
  maxRedirects: number | undefined;
  /** The Accept header v1 sends unless the node sets one. */
  accept?: string;
  /** v1's "string" answers: its HTTP client parsed JSON text before wrapping it, so `{ data }` may hold an object. */
  textParsesJson?: boolean;
  /** Whether a JSON array answer becomes one item per element (v3+ always, v1/v2 with "split into items"). */
  splitsArrays: boolean;
}

function pairs(block: unknown, key: string): Array<{ name: string; value: unknown }> {
  const list = isRecord(block) && Array.isArray(block[key]) ? (block[key] as unknown[]) : [];
  return list
    .filter(isRecord)
    .map((p) => ({ name: String(p.name ?? ''), value: p.value ?? '', binary: p.parameterType === 'formBinaryData' }))
    .filter((p) => {
      if (p.binary)
        throw new Unsupported(
          `the form field "${p.name}" sends a file (binary data)`,
          'Send text fields, or upload the file with a code node.',
        );
      return p.name !== '';
    })
    .map(({ name, value }) => ({ name, value }));
}

const str = (v: unknown, fallback: string) => (typeof v === 'string' && v !== '' ? v : fallback);

/** The method, also when it is an expression without placeholders (`=POST`: the tool's expression mode on plain text). */
const methodOf = (v: unknown) => {
  const text = str(v, 'GET').trim();
  return (text.startsWith('=') && !text.includes('{{') ? text.slice(1).trim() : text).toUpperCase();
};

/** Options shared by v1 and v2 that stop a faithful conversion, named as the node maps anyway. */
function commonOptions(ctx: MapContext, options: Record<string, unknown>, allowUnauthorizedCerts: unknown) {
  if (typeof options.proxy === 'string' ? options.proxy !== '' : isRecord(options.proxy))
    ctx.lossy('unsupportedOption', 'the request is sent directly, not through the configured proxy.');
  if (allowUnauthorizedCerts === true)
    ctx.lossy('unsupportedOption', '"ignore SSL issues" is not carried over: a service without a valid TLS certificate fails here.');
}

/** The credential type a node authenticates with: v1 names it by `authentication`, v2+ by the generic or service type. */
function authOf(ctx: MapContext, v1: boolean): RequestSpec['auth'] {
  const p = ctx.params;
  // Public template collections replace the value with a placeholder `{{ $credentials.<value> }}`.
  const raw = str(p.authentication, 'none');
  const authentication = /^\{\{\s*\$credentials\.(\w+)\s*\}\}$/.exec(raw)?.[1] ?? raw;
  if (authentication === 'none') return null;
  if (v1) return { type: V1_AUTH[authentication] ?? authentication, predefined: false };
  if (authentication === 'genericCredentialType') return { type: str(p.genericAuthType, ''), predefined: false };
  if (authentication === 'predefinedCredentialType') {
    // The node's credential names its type too; it wins over a type the node does not hold (a template's "YOUR_CREDENTIAL_HERE").
    const held = Object.keys(ctx.node.credentials ?? {});
    const named = str(p.nodeCredentialType, 'unknown');
    return { type: held.includes(named) || held.length === 0 ? named : (held[0] ?? named), predefined: true };
  }
  return { type: authentication, predefined: false };
}

/** HTTP Request v1 and v2: `requestMethod`, the `…ParametersUi` / `…ParametersJson` pairs, `responseFormat` json/string/file. */
function readV1(ctx: MapContext): RequestSpec {
  const p = ctx.params;
  const options = isRecord(p.options) ? p.options : {};
  const method = methodOf(p.requestMethod);
  const auth = authOf(ctx, ctx.version < 2);
  commonOptions(ctx, options, p.allowUnauthorizedCerts);

  const asJson = p.jsonParameters === true;
  const jsonOrUi = (json: unknown, ui: unknown): Params | null => {
    if (asJson) return typeof json === 'string' && json.trim() !== '' && json.trim() !== '=' ? { kind: 'json', text: json } : null;
    const list = pairs(ui, 'parameter');
    return list.length ? { kind: 'pairs', pairs: list } : null;
  };
  const hasBody = ['PATCH', 'POST', 'PUT', 'DELETE'].includes(method);
  let body: RequestSpec['body'] = null;
  if (hasBody) {
    if (asJson && p.sendBinaryData === true)
      throw new Unsupported('a binary file as the body', 'Send JSON, form or raw text, or upload the file with a code node.');
    const contentType = str(options.bodyContentType, 'json');
    // v1 converts bodies to forms only for PATCH, POST and PUT; a DELETE body stays JSON.
    const formish = method !== 'DELETE';
    if (contentType === 'raw' && asJson) {
      const text = p.bodyParametersJson;
      if (typeof text === 'string' && text !== '') body = { type: 'raw', params: { kind: 'text', text } };
    } else {
      const params = jsonOrUi(p.bodyParametersJson, p.bodyParametersUi);
      const type = !formish
        ? 'json'
        : contentType === 'form-urlencoded'
          ? 'form'
          : contentType === 'multipart-form-data'
            ? 'multipart'
            : 'json';
      if (params) body = { type, params };
    }
    if (body && typeof options.bodyContentCustomMimeType === 'string' && options.bodyContentCustomMimeType !== '')
      body.contentType = options.bodyContentCustomMimeType;
  }
  const format = str(p.responseFormat, 'json');
  if (options.splitIntoItems === true && !ctx.itemLoop)
    ctx.warn('"Split into items": a JSON array answer stays one array value here (the external tool splits it into items).');
  if (typeof options.batchSize === 'number' || typeof options.batchInterval === 'number') batchingWarning(ctx);
  // v1 follows redirects of GET and HEAD unless told not to, and of other methods only with "follow all redirects".
  const followRedirects = method === 'GET' || method === 'HEAD' ? options.followRedirect !== false : options.followAllRedirects === true;
  return {
    method,
    url: p.url,
    auth,
    query: jsonOrUi(p.queryParametersJson, p.queryParametersUi),
    headers: jsonOrUi(p.headerParametersJson, p.headerParametersUi),
    lowerHeaderNames: !asJson,
    body,
    responseFormat: format === 'string' ? 'text' : format === 'file' ? 'file' : 'json',
    textParsesJson: format === 'string' && !(body?.type === 'raw'),
    outputProperty: str(p.dataPropertyName, 'data'),
    fullResponse: options.fullResponse === true,
    splitsArrays: options.splitIntoItems === true && options.fullResponse !== true && format !== 'string' && format !== 'file',
    neverError: options.ignoreResponseCode === true,
    timeoutMs: typeof options.timeout === 'number' ? options.timeout : undefined,
    followRedirects,
    maxRedirects: undefined,
    accept:
      format === 'json'
        ? 'application/json,text/*;q=0.99'
        : format === 'string'
          ? 'application/json,text/html,application/xhtml+xml,application/xml,text/*;q=0.9, */*;q=0.1'
          : undefined,
  };
}

/** HTTP Request v3 and v4.x: `method`, `send…` switches with pairs or JSON, `options.response`, `options.redirect`, pagination. */
function batchingWarning(ctx: MapContext): void {
  ctx.warn(
    ctx.itemLoop
      ? 'Batching spaces out the requests of several items; here they are sent one after another, without its pauses.'
      : 'Batching spaces out the requests of several items; a connection carries one item here, so there is one request.',
  );
}

function readV3(ctx: MapContext): RequestSpec {
  const p = ctx.params;
  const options = isRecord(p.options) ? p.options : {};
  const method = methodOf(p.method);
  const auth = authOf(ctx, false);
  if (p.provideSslCertificates === true) throw new Unsupported('client SSL certificates', 'Call the service without client certificates.');
  commonOptions(ctx, options, options.allowUnauthorizedCerts);

  const pagination = isRecord(options.pagination) && isRecord(options.pagination.pagination) ? options.pagination.pagination : null;
  if (pagination && str(pagination.paginationMode, 'off') !== 'off')
    throw new Unsupported(
      `pagination ("${String(pagination.paginationMode)}")`,
      'Fetch one page per run, or page through the results in a subworkflow called once per page.',
    );
  if (isRecord(options.batching)) batchingWarning(ctx);
  if (options.sendCredentialsOnCrossOriginRedirect === true)
    ctx.lossy(
      'unsupportedOption',
      'credentials are never sent on a redirect to another origin here ("send credentials on cross-origin redirect").',
    );

  const sendIf = (on: unknown, mode: unknown, block: unknown, json: unknown): Params | null => {
    if (on !== true) return null;
    if (mode === 'json') return typeof json === 'string' && json.trim() !== '' ? { kind: 'json', text: json } : null;
    const list = pairs(block, 'parameters');
    return list.length ? { kind: 'pairs', pairs: list } : null;
  };
  let body: RequestSpec['body'] = null;
  if (p.sendBody === true) {
    const contentType = str(p.contentType, 'json');
    if (contentType === 'binaryData')
      throw new Unsupported('a binary file as the body', 'Send JSON, form or raw text, or upload the file with a code node.');
    if (contentType === 'raw') {
      body = { type: 'raw', params: { kind: 'text', text: p.body ?? '' }, contentType: str(p.rawContentType, 'text/plain') };
    } else if (contentType === 'form-urlencoded' && p.specifyBody === 'string') {
      body = { type: 'raw', params: { kind: 'text', text: p.body ?? '' }, contentType: 'application/x-www-form-urlencoded' };
    } else if (contentType === 'json' || contentType === 'form-urlencoded' || contentType === 'multipart-form-data') {
      const params =
        contentType === 'json' && p.specifyBody === 'json'
          ? { kind: 'json' as const, text: typeof p.jsonBody === 'string' ? p.jsonBody : '{}' }
          : { kind: 'pairs' as const, pairs: pairs(p.bodyParameters, 'parameters') };
      body = { type: contentType === 'json' ? 'json' : contentType === 'form-urlencoded' ? 'form' : 'multipart', params };
    } else {
      throw new Unsupported(`a ${contentType} body`, 'Send a JSON, form-urlencoded, multipart or raw body.');
    }
  }
  const response = isRecord(options.response) && isRecord(options.response.response) ? options.response.response : {};
  const redirect = isRecord(options.redirect) && isRecord(options.redirect.redirect) ? options.redirect.redirect : null;
  const format = str(response.responseFormat, 'autodetect');
  return {
    method,
    url: p.url,
    auth,
    query: sendIf(p.sendQuery, p.specifyQuery, p.queryParameters, p.jsonQuery),
    headers: sendIf(p.sendHeaders, p.specifyHeaders, p.headerParameters, p.jsonHeaders),
    lowerHeaderNames: false,
    body,
    responseFormat: format === 'json' || format === 'text' || format === 'file' ? format : 'autodetect',
    outputProperty: str(response.outputPropertyName, 'data'),
    fullResponse: response.fullResponse === true,
    splitsArrays: response.fullResponse !== true && format !== 'text' && format !== 'file',
    neverError: response.neverError === true,
    timeoutMs: typeof options.timeout === 'number' ? options.timeout : undefined,
    // v3 follows redirects only when told to; v4 unless told not to.
    followRedirects: redirect ? redirect.followRedirects !== false : ctx.version >= 4,
    maxRedirects: redirect && typeof redirect.maxRedirects === 'number' ? redirect.maxRedirects : undefined,
  };
}

/** Name → string template from pairs, or from a JSON object (literal, or with `{{ }}` holes). */
function stringMap(ctx: MapContext, what: string, params: Params | null, lowerNames: boolean): Record<string, string> {
  if (!params) return {};
  if (params.kind === 'json') {
    const value = jsonTemplate(params.text, ctx.scope, what);
    if (!isRecord(value))
      throw new Unsupported(`${what} given as one JSON expression`, `Give the ${what} as name/value pairs, or as a JSON object.`);
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [k, typeof v === 'string' && v.startsWith('=') ? `=$string(${v.slice(1)})` : stringLiteral(v)]),
    );
  }
  const out: Record<string, string> = {};
  for (const { name: raw, value } of params.pairs) {
    const name = lowerNames ? raw.toLowerCase() : raw;
    if (name in out)
      throw new Unsupported(`${what} "${name}" is given twice`, 'Give each name once (join the values, or repeat them in the URL).');
    out[name] = toStringTemplate(value, ctx.scope);
  }
  return out;
}

function stringLiteral(v: unknown): string {
  const s = v === undefined || v === null ? '' : typeof v === 'string' ? v : JSON.stringify(v);
  return s.startsWith('=') ? `=${jsonLiteral(s)}` : s;
}

/** A JSON parameter: a literal object, text with `{{ }}` holes, or one whole expression. */
function jsonTemplate(text: unknown, scope: ExpressionScope, what: string): unknown {
  if (isRecord(text) || Array.isArray(text)) return toTemplate(text, scope);
  if (typeof text !== 'string') throw new Unsupported(`the ${what} JSON is not text`, `Give the ${what} as JSON.`);
  return jsonBodyTemplate(text, scope, what);
}

/**
 * A JSON body with `{{ }}` holes, as the external tool writes it (`={ "a": {{ $json.x }} }`):
 * each hole becomes an expression leaf; a hole inside a JSON string a concatenation.
 */
export function jsonBodyTemplate(text: string, scope: ExpressionScope, what = 'JSON body'): unknown {
  if (!isExtExpression(text)) {
    try {
      return escapeLiterals(JSON.parse(text));
    } catch {
      throw new Unsupported(`the ${what} is not valid JSON`, `Fix the ${what}.`);
    }
  }
  const body = text.slice(1);
  const trimmed = body.trim();
  const segments = splitTemplate(trimmed);
  const [only] = segments;
  if (segments.length === 1 && only && 'js' in only) return `=${toJsonata(`=${trimmed}`, scope)}`;
  const holes: string[] = [];
  let json = '';
  let inString = false;
  for (const seg of segments) {
    if ('lit' in seg) {
      for (let i = 0; i < seg.lit.length; i++) {
        const c = seg.lit[i];
        if (c === '"' && (i === 0 ? !json.endsWith('\\') : seg.lit[i - 1] !== '\\')) inString = !inString;
      }
      json += seg.lit;
    } else {
      // Outside a JSON string a hole is a whole value; inside one it is part of the text.
      const marker = inString ? `\uE002${holes.length}\uE003` : `\uE000${holes.length}\uE001`;
      holes.push(seg.js);
      json += inString ? marker : JSON.stringify(marker);
    }
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    throw new Unsupported(
      `the ${what} with {{ }} placeholders is not valid JSON once the placeholders are values`,
      `Fix the ${what}, or build it with a Set node.`,
    );
  }
  const fill = (v: unknown): unknown => {
    if (typeof v === 'string' && /[\uE000\uE002]/.test(v)) {
      const exact = /^\uE000(\d+)\uE001$/.exec(v);
      if (exact) return `=${toJsonata(`={{${holes[Number(exact[1])]}}}`, scope)}`;
      const parts = v.split(/[\uE000\uE002](\d+)[\uE001\uE003]/);
      const code = parts
        .map((p, i) => (i % 2 === 0 ? (p ? jsonLiteral(p) : '') : `$string(${toJsonata(`={{${holes[Number(p)]}}}`, scope)})`))
        .filter(Boolean);
      return `=(${code.join(' & ')})`;
    }
    if (typeof v === 'string' && v.startsWith('=')) return `=${jsonLiteral(v)}`;
    if (Array.isArray(v)) return v.map(fill);
    if (isRecord(v)) {
      if (Object.keys(v).some((k) => /[\uE000\uE002]/.test(k)))
        throw new Unsupported('a placeholder used as a JSON key', 'Use fixed keys.');
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, fill(x)]));
    }
    return v;
  };
  return fill(parsed);
}

function escapeLiterals(v: unknown): unknown {
  if (typeof v === 'string' && v.startsWith('=')) return `=${jsonLiteral(v)}`;
  if (Array.isArray(v)) return v.map(escapeLiterals);
  if (isRecord(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, escapeLiterals(x)]));
  return v;
}

/** A field's value as JSONata returning text: a converted expression, or a literal's text. */
function textCode(ctx: MapContext, value: unknown): string {
  if (typeof value === 'string' && value.startsWith('=') && !isExtExpression(value)) return jsonLiteral(value);
  if (isExtExpression(value)) return `$string(${toJsonata(value, ctx.scope)})`;
  return jsonLiteral(stringLiteral(value));
}

/** Name/value fields from pairs, or from a JSON object whose values are literals or expressions. */
function fieldsOf(ctx: MapContext, params: Params, what: string): Array<{ name: string; code: string; literal?: string }> {
  if (params.kind === 'pairs')
    return params.pairs.map(({ name, value }) => ({
      name,
      code: textCode(ctx, value),
      ...(isExtExpression(value) ? {} : { literal: stringLiteral(value) }),
    }));
  const value = jsonTemplate(params.text, ctx.scope, what);
  if (!isRecord(value)) throw new Unsupported(`the ${what} given as one JSON expression`, `Give the ${what} as name/value pairs.`);
  return Object.entries(value).map(([name, v]) =>
    typeof v === 'string' && v.startsWith('=')
      ? { name, code: `$string(${v.slice(1)})` }
      : { name, code: jsonLiteral(stringLiteral(v)), literal: stringLiteral(v) },
  );
}

function formBody(ctx: MapContext, params: Params): string {
  const fields = fieldsOf(ctx, params, 'form body');
  if (fields.every((f) => f.literal !== undefined)) {
    const text = fields.map((f) => `${encodeURIComponent(f.name)}=${encodeURIComponent(f.literal ?? '')}`).join('&');
    return text.startsWith('=') ? `=${jsonLiteral(text)}` : text;
  }
  const parts = fields.map((f, i) => `${jsonLiteral(`${i ? '&' : ''}${encodeURIComponent(f.name)}=`)} & $encodeUrlComponent(${f.code})`);
  return `=(${parts.join(' & ')})`;
}

/** multipart/form-data with text fields only (a file field is unsupported): one part per field. */
function multipartBody(ctx: MapContext, params: Params): string {
  const fields = fieldsOf(ctx, params, 'form body');
  const head = (name: string) =>
    `--${MULTIPART_BOUNDARY}\r\nContent-Disposition: form-data; name="${name.replace(/["\r\n]/g, '_')}"\r\n\r\n`;
  const close = `--${MULTIPART_BOUNDARY}--\r\n`;
  if (fields.every((f) => f.literal !== undefined)) {
    const text = fields.map((f) => `${head(f.name)}${f.literal}\r\n`).join('') + close;
    return text.startsWith('=') ? `=${jsonLiteral(text)}` : text;
  }
  const parts = fields.map((f) => `${jsonLiteral(head(f.name))} & ${f.code} & "\\r\\n"`);
  return `=(${[...parts, jsonLiteral(close)].join(' & ')})`;
}

/** Our credential type for the external tool's, or null when it has no equivalent. */
function ourCredentialType(auth: NonNullable<RequestSpec['auth']>): string | null {
  if (!auth.predefined) return GENERIC_AUTH[auth.type] ?? null;
  if (/OAuth2Api$/.test(auth.type)) return 'oauth2';
  return PREDEFINED_BEARER.has(auth.type) ? 'bearer' : null;
}

function mapAuth(ctx: MapContext, auth: RequestSpec['auth']): string | undefined {
  if (!auth) return undefined;
  if (!auth.predefined) {
    if (!(auth.type in GENERIC_AUTH))
      throw new Unsupported(
        `authentication "${auth.type || 'unknown'}"`,
        'Use header, query, custom (headers and query), basic, bearer or OAuth2 authentication, or send the secret in a header from a credential.',
      );
    return ctx.credential(auth.type, ourCredentialType(auth));
  }
  const type = ourCredentialType(auth);
  const alias = ctx.credential(auth.type, type);
  if (!type)
    ctx.warn(
      `The service credential type "${auth.type}" has no direct equivalent: create the credential "${alias}" as a bearer, api_key, basic, http_header, http_query, http_custom or oauth2 credential, as that service's API expects.`,
    );
  return alias;
}

/** Standard reason phrases, for the external tool's `statusMessage` (the server's phrase; servers send the standard one). */
const STATUS_MESSAGES = `{${Object.entries(STATUS_CODES)
  .map(([code, text]) => `${jsonLiteral(code)}: ${jsonLiteral(text)}`)
  .join(', ')}}`;

/** The JSONata turning the http node's `{ status, headers, body }` into the external tool's output item. */
function outputExpression(spec: RequestSpec): string {
  const prop = jsonLiteral(spec.outputProperty);
  // An empty answer is {} in the external tool (its null items become {}).
  const orEmpty = '($b = null ? {} : $b)';
  let value: string;
  if (spec.responseFormat === 'text') value = spec.fullResponse ? '$b' : `{${prop}: $b}`;
  else if (spec.responseFormat === 'json') value = orEmpty;
  else
    value = spec.fullResponse
      ? '($type($b) = "string" and $b = "" ? null : $b)'
      : `($type($b) = "string" ? ($b = "" ? {} : {${prop}: $b}) : ${orEmpty})`;
  if (spec.fullResponse) {
    const bodyKey = spec.responseFormat === 'text' ? prop : '"body"';
    value = `{${bodyKey}: ${value}, "headers": headers, "statusCode": status, "statusMessage": $lookup(${STATUS_MESSAGES}, $string(status))}`;
  }
  return `($b := body; ${value})`;
}

export const httpRequest: Mapper = (ctx) => {
  const spec = ctx.version < 3 ? readV1(ctx) : readV3(ctx);
  if (!METHODS.includes(spec.method)) throw new Unsupported(`HTTP method ${spec.method}`, 'Use GET, POST, PUT, PATCH, DELETE or HEAD.');
  const url = typeof spec.url === 'string' ? spec.url.trim() : '';
  if (!url || url === '=') throw new Unsupported('no URL', 'Set the URL.');
  if (spec.responseFormat === 'file')
    throw new Unsupported(
      'file (binary) answers',
      'Receive JSON or text, or store the file through the files API and pass its id; binary items are not carried between nodes here.',
    );
  const config: Record<string, unknown> = { method: spec.method, url: isExtExpression(url) ? toStringTemplate(url, ctx.scope) : url };
  const credentialId = mapAuth(ctx, spec.auth);
  if (credentialId) config.credentialId = credentialId;

  const query = stringMap(ctx, 'query parameters', spec.query, false);
  if (Object.keys(query).length) config.query = query;
  const headers = stringMap(ctx, 'headers', spec.headers, spec.lowerHeaderNames);
  const has = (name: string) => Object.keys(headers).some((h) => h.toLowerCase() === name);
  if (spec.accept && !has('accept')) headers.accept = spec.accept;
  if (spec.body) {
    const { type, params } = spec.body;
    if (type === 'raw') config.body = toStringTemplate(params.kind === 'text' ? params.text : '', ctx.scope);
    else if (params.kind === 'text') throw new Unsupported('a text body where fields are expected', 'Give the body as fields or JSON.');
    else if (type === 'form') config.body = formBody(ctx, params);
    else if (type === 'multipart') config.body = multipartBody(ctx, params);
    else if (params.kind === 'json') config.body = jsonTemplate(params.text, ctx.scope, 'JSON body');
    else config.body = Object.fromEntries(params.pairs.map(({ name, value }) => [name, toTemplate(value, ctx.scope)]));
    const contentType =
      spec.body.contentType ??
      (type === 'form'
        ? 'application/x-www-form-urlencoded'
        : type === 'multipart'
          ? `multipart/form-data; boundary=${MULTIPART_BOUNDARY}`
          : type === 'raw'
            ? 'text/plain'
            : undefined);
    if (contentType && !has('content-type')) headers['content-type'] = contentType;
    if (spec.method === 'GET' || spec.method === 'HEAD') {
      ctx.lossy('unsupportedOption', `a ${spec.method} request is sent without its body here.`);
      delete config.body;
    }
  }
  if (Object.keys(headers).length) config.headers = headers;

  // The external tool waits minutes by default (v1: an hour, v3+: five minutes); here an http node waits at most two.
  const timeout = spec.timeoutMs ?? MAX_TIMEOUT_MS;
  if (spec.timeoutMs !== undefined && spec.timeoutMs > MAX_TIMEOUT_MS)
    ctx.warn(`The timeout of ${spec.timeoutMs} ms is shortened to ${MAX_TIMEOUT_MS} ms, the longest an http node waits here.`);
  config.timeoutMs = Math.min(MAX_TIMEOUT_MS, Math.max(1, Math.round(timeout)));
  if (!spec.followRedirects) config.followRedirects = false;
  else if (spec.maxRedirects !== undefined && spec.maxRedirects !== MAX_REDIRECTS)
    ctx.warn(`Redirects are followed up to ${MAX_REDIRECTS} times here (the node allowed ${spec.maxRedirects}).`);
  if (spec.responseFormat === 'json' || (spec.responseFormat === 'text' && !spec.textParsesJson))
    config.responseFormat = spec.responseFormat;
  if (spec.neverError) config.acceptAnyStatus = true;

  const requestId = `${ctx.id}__request`;
  const pick = outputExpression(spec);
  const onError = ctx.node.onError ?? (ctx.node.continueOnFail ? 'continueRegularOutput' : undefined);
  const expression = onError === 'continueRegularOutput' ? `$exists(error) ? {"error": error.message} : ${pick}` : pick;
  const binaryAsText =
    spec.responseFormat === 'autodetect'
      ? 'a binary answer (an image, a PDF, an archive) arrives as text (the external tool makes it a file)'
      : null;
  if (ctx.itemLoop && spec.splitsArrays) {
    if (binaryAsText) ctx.warn(`${binaryAsText.charAt(0).toUpperCase()}${binaryAsText.slice(1)}.`);
  } else if (spec.responseFormat !== 'text')
    ctx.warn(
      `A JSON array answer stays one array value (the external tool splits it into items)${binaryAsText ? `; ${binaryAsText}` : ''}.`,
    );
  return {
    nodes: [ourNode(ctx, requestId, 'http', config, 1), ourNode(ctx, ctx.id, 'transform', { expression })],
    errorSource: requestId,
    splitsArrays: spec.splitsArrays,
  };
};
