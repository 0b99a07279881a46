/**
 * Respond to Webhook → response. The external node passes its input on; ours outputs the reply,
 * so when something follows it a transform after it gives the next nodes the input again.
 */
import { nodeRef, toStringTemplate, toTemplate } from '../expressions';
import { Unsupported } from '../types';
import { isRecord, ourNode, type Mapper } from './context';
import { jsonBodyTemplate } from './http';

export const respondToWebhook: Mapper = (ctx) => {
  const p = ctx.params;
  const options = isRecord(p.options) ? p.options : {};
  const respondWith = typeof p.respondWith === 'string' ? p.respondWith : 'firstIncomingItem';
  const headers: Record<string, string> = {};
  const entries =
    isRecord(options.responseHeaders) && Array.isArray(options.responseHeaders.entries)
      ? (options.responseHeaders.entries as Array<Record<string, unknown>>)
      : [];
  for (const e of entries) if (typeof e.name === 'string' && e.name) headers[e.name] = toStringTemplate(e.value ?? '', ctx.scope);
  let status = typeof options.responseCode === 'number' ? options.responseCode : 200;
  let body: unknown;
  switch (respondWith) {
    case 'firstIncomingItem':
    case 'allIncomingItems':
      body = respondWith === 'allIncomingItems' ? '=[$]' : '=$';
      break;
    case 'json': {
      const rb = p.responseBody ?? '{}';
      body = typeof rb === 'string' ? jsonBodyTemplate(rb, ctx.scope) : toTemplate(rb, ctx.scope);
      break;
    }
    case 'text':
      body = toStringTemplate(p.responseBody ?? '', ctx.scope);
      headers['content-type'] ??= 'text/plain; charset=utf-8';
      break;
    case 'noData':
      body = null;
      break;
    case 'redirect': {
      if (typeof p.redirectURL !== 'string' || !p.redirectURL) throw new Unsupported('a redirect without a URL', 'Set the redirect URL.');
      status = typeof options.responseCode === 'number' ? options.responseCode : 307;
      headers.location = toStringTemplate(p.redirectURL, ctx.scope);
      body = null;
      break;
    }
    default:
      throw new Unsupported(`responding with ${respondWith}`, 'Respond with JSON, text, the incoming item or no data.');
  }
  if (status < 100 || status > 599) throw new Unsupported(`response code ${status}`, 'Use a status between 100 and 599.');
  const config: Record<string, unknown> = { status, body };
  if (Object.keys(headers).length) config.headers = headers;
  const replyId = `${ctx.id}__response`;
  const [only] = ctx.inputs;
  const pass = ctx.inputs.length === 1 && only ? nodeRef(only.sourceId) : '$';
  if (ctx.inputs.length !== 1 && ctx.connectedOutputs.size > 0)
    ctx.warn('The nodes after this one see the reply { status, headers, body }, not its input.');
  return {
    nodes: [ourNode(ctx, replyId, 'response', config, 1), ourNode(ctx, ctx.id, 'transform', { expression: pass })],
  };
};
