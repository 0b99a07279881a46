/**
 * HTTP Request (v4) → http, followed by a transform that keeps only the response body (the
 * external tool's output), or `{ body, headers, statusCode }` with "full response". Query,
 * headers and bodies (JSON, form-urlencoded, raw) keep their expressions; the node's
 * credential becomes an alias (`credentialId`: the credential's name, resolved by name).
 */
import { isExtExpression, jsonLiteral, splitTemplate, toJsonata, toStringTemplate, toTemplate, type ExpressionScope } from '../expressions';
import { Unsupported } from '../types';
import { isRecord, ourNode, type MapContext, type Mapper } from './context';

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD'];

/** Generic credential types and ours. */
const GENERIC_AUTH: Record<string, string | null> = {
  httpHeaderAuth: 'http_header',
  httpBasicAuth: 'basic',
  httpBearerAuth: 'bearer',
  oAuth2Api: 'oauth2',
};

function pairs(block: unknown): Array<{ name: string; value: unknown }> {
  const list = isRecord(block) && Array.isArray(block.parameters) ? (block.parameters as Array<Record<string, unknown>>) : [];
  return list.map((p) => ({ name: String(p.name ?? ''), value: p.value ?? '' })).filter((p) => p.name !== '');
}

function stringMap(ctx: MapContext, what: string, mode: unknown, block: unknown, json: unknown): Record<string, string> {
  if (mode === 'json') {
    if (typeof json !== 'string' || isExtExpression(json))
      throw new Unsupported(`${what} given as a JSON expression`, `Give the ${what} as name/value pairs.`);
    try {
      const parsed = JSON.parse(json) as Record<string, unknown>;
      return Object.fromEntries(Object.entries(parsed).map(([k, v]) => [k, toStringTemplate(v, ctx.scope)]));
    } catch {
      throw new Unsupported(`the ${what} JSON is not valid`, 'Fix the JSON.');
    }
  }
  const out: Record<string, string> = {};
  for (const { name, value } of pairs(block)) {
    if (name in out) throw new Unsupported(`${what} "${name}" is given twice`, 'Give each name once.');
    out[name] = toStringTemplate(value, ctx.scope);
  }
  return out;
}

/**
 * A JSON body with `{{ }}` holes, as the external tool writes it (`={ "a": {{ $json.x }} }`):
 * each hole becomes an expression leaf; a hole inside a JSON string a concatenation.
 */
export function jsonBodyTemplate(text: string, scope: ExpressionScope): unknown {
  if (!isExtExpression(text)) {
    try {
      return escapeLiterals(JSON.parse(text));
    } catch {
      throw new Unsupported('the JSON body is not valid JSON', 'Fix the JSON body.');
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
      'the JSON body with {{ }} placeholders is not valid JSON once the placeholders are values',
      'Fix the JSON body, or build it with a Set node.',
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

function formBody(ctx: MapContext, params: Array<{ name: string; value: unknown }>): string {
  if (params.every((p) => !isExtExpression(p.value))) {
    const text = params.map((p) => `${encodeURIComponent(p.name)}=${encodeURIComponent(String(p.value))}`).join('&');
    return text.startsWith('=') ? `=${jsonLiteral(text)}` : text;
  }
  const parts = params.map(
    (p, i) =>
      `${jsonLiteral(`${i ? '&' : ''}${encodeURIComponent(p.name)}=`)} & $encodeUrlComponent($string(${toJsonata(p.value, ctx.scope)}))`,
  );
  return `=(${parts.join(' & ')})`;
}

export const httpRequest: Mapper = (ctx) => {
  const p = ctx.params;
  if (ctx.version < 3)
    throw new Unsupported(
      `HTTP Request version ${ctx.version}`,
      'Upgrade the node to HTTP Request v4 in the external tool and export again, or rebuild it as an http node.',
    );
  const method = typeof p.method === 'string' ? p.method.toUpperCase() : 'GET';
  if (!METHODS.includes(method)) throw new Unsupported(`HTTP method ${method}`, 'Use GET, POST, PUT, PATCH, DELETE or HEAD.');
  const url = typeof p.url === 'string' ? p.url : '';
  if (!url) throw new Unsupported('no URL', 'Set the URL.');
  const config: Record<string, unknown> = { method, url: isExtExpression(url) ? toStringTemplate(url, ctx.scope) : url };
  if (p.provideSslCertificates === true) throw new Unsupported('client SSL certificates', 'Call the service without client certificates.');

  // Authentication → a credential alias.
  const auth = typeof p.authentication === 'string' ? p.authentication : 'none';
  if (auth === 'genericCredentialType') {
    const generic = typeof p.genericAuthType === 'string' ? p.genericAuthType : '';
    if (!(generic in GENERIC_AUTH))
      throw new Unsupported(
        `authentication "${generic}"`,
        'Use header, basic, bearer or OAuth2 authentication, or send the secret in a header from a credential.',
      );
    config.credentialId = ctx.credential(generic, GENERIC_AUTH[generic] ?? null); // present: checked above
  } else if (auth === 'predefinedCredentialType') {
    const kind = typeof p.nodeCredentialType === 'string' ? p.nodeCredentialType : 'unknown';
    config.credentialId = ctx.credential(kind, null);
    ctx.warn(
      `The service credential type "${kind}" has no direct equivalent: create the credential "${config.credentialId}" as a bearer, api_key, basic, httpHeader or oauth2 credential.`,
    );
  } else if (auth !== 'none') {
    throw new Unsupported(`authentication "${auth}"`, 'Use a generic credential type.');
  }

  if (p.sendQuery === true) {
    const query = stringMap(ctx, 'query parameters', p.specifyQuery, p.queryParameters, p.jsonQuery);
    if (Object.keys(query).length) config.query = query;
  }
  const headers: Record<string, string> =
    p.sendHeaders === true ? stringMap(ctx, 'headers', p.specifyHeaders, p.headerParameters, p.jsonHeaders) : {};
  if (p.sendBody === true) {
    const contentType = typeof p.contentType === 'string' ? p.contentType : 'json';
    if (contentType === 'json') {
      if (p.specifyBody === 'json') config.body = jsonBodyTemplate(typeof p.jsonBody === 'string' ? p.jsonBody : '{}', ctx.scope);
      else config.body = Object.fromEntries(pairs(p.bodyParameters).map(({ name, value }) => [name, toTemplate(value, ctx.scope)]));
    } else if (contentType === 'form-urlencoded') {
      if (p.specifyBody === 'string') config.body = toStringTemplate(p.body ?? '', ctx.scope);
      else config.body = formBody(ctx, pairs(p.bodyParameters));
      headers['content-type'] ??= 'application/x-www-form-urlencoded';
    } else if (contentType === 'raw') {
      config.body = toStringTemplate(p.body ?? '', ctx.scope);
      headers['content-type'] ??= typeof p.rawContentType === 'string' && p.rawContentType ? p.rawContentType : 'text/plain';
    } else {
      throw new Unsupported(`a ${contentType} body`, 'Send a JSON, form-urlencoded or raw body.');
    }
  }
  if (Object.keys(headers).length) config.headers = headers;

  const options = isRecord(p.options) ? p.options : {};
  if (typeof options.timeout === 'number') config.timeoutMs = Math.min(120_000, Math.max(1, Math.round(options.timeout)));
  if (isRecord(options.batching) || isRecord(options.pagination) || isRecord(p.pagination))
    throw new Unsupported('batching or pagination', 'Page through the results in a code node or subworkflow.');
  if (isRecord(options.proxy) || typeof options.proxy === 'string') throw new Unsupported('a proxy', 'Call the service directly.');
  if (options.allowUnauthorizedCerts === true)
    throw new Unsupported('ignoring TLS certificate errors', 'Give the service a valid certificate.');
  const response = isRecord(options.response) && isRecord(options.response.response) ? options.response.response : {};
  if (response.neverError === true)
    throw new Unsupported(
      '"never error" (4xx and 5xx answers as data)',
      'Set "On Error: continue" on the imported http node and read { error } instead, or check the status in a follow-up node.',
    );
  if (response.responseFormat === 'file') throw new Unsupported('file responses', 'Receive JSON or text.');
  if (response.responseFormat === 'text') ctx.warn('"Response format: text": the body is parsed as JSON when the answer says it is JSON.');
  const full = response.fullResponse === true;

  const requestId = `${ctx.id}__request`;
  const pick = full ? '{"body": body, "headers": headers, "statusCode": status}' : 'body';
  const onError = ctx.node.onError ?? (ctx.node.continueOnFail ? 'continueRegularOutput' : undefined);
  const expression = onError === 'continueRegularOutput' ? `$exists(error) ? {"error": error.message} : ${pick}` : pick;
  ctx.warn('A JSON array answer stays one array value (the external tool splits it into items).');
  return {
    nodes: [ourNode(ctx, requestId, 'http', config, 1), ourNode(ctx, ctx.id, 'transform', { expression })],
    errorSource: requestId,
  };
};
