/**
 * Triggers: Manual / Start → start + a transform giving `{}` for a run without input;
 * sub-workflow trigger → start; Webhook → webhook; Schedule Trigger → schedule.
 */
import { Unsupported } from '../types';
import { isRecord, ourNode, type Mapper } from './context';

export const manualTrigger: Mapper = (ctx) => {
  if (
    ctx.node.type.endsWith('executeWorkflowTrigger') &&
    isRecord(ctx.params) &&
    Array.isArray((ctx.params.workflowInputs as Record<string, unknown> | undefined)?.values)
  ) {
    ctx.warn("The declared sub-workflow inputs are not enforced: the start node passes the caller's input through.");
  }
  // The caller's items, as they came: an item list or one item's JSON.
  if (ctx.node.type.endsWith('executeWorkflowTrigger')) return { nodes: [ourNode(ctx, ctx.id, 'start', {})], items: 'same' };
  // The external tool's manual trigger emits one empty item: a run started without input passes `{}` on, not null.
  const itemId = `${ctx.id}__item`;
  return {
    nodes: [ourNode(ctx, ctx.id, 'start', {}), ourNode(ctx, itemId, 'transform', { expression: MANUAL_ITEM }, 1)],
    output: (i) => (i === 0 ? { source: itemId } : null),
  };
};

/** The run's input, or the manual trigger's empty item when the run was started without one. */
const MANUAL_ITEM = '$exists($) and $type($) != "null" ? $ : {}';

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

/** Webhook and Chat Trigger: "respond when last node finishes" where lastNodeReply.ts could not add the reply. */
const LAST_NODE_NOT_MAPPED =
  '"Respond when last node finishes" is mapped only where one node ends the workflow and the answer is its first item (or nothing): add a response node where the reply should come from; without one the caller gets 202 accepted.';

/**
 * The external tool's webhook item is `{ headers, params, query, body }`; our webhook run input
 * is the body's fields with the request under `_webhook`, or, for a body without fields (a JSON
 * array, text), `{ body }` with `_webhook.bodyWrapped`. A transform rebuilds the item, so
 * expressions such as `$json.body.name` and `$json.body[0]` keep their meaning.
 */
export const webhook: Mapper = (ctx) => {
  const method = typeof ctx.params.httpMethod === 'string' ? ctx.params.httpMethod.toUpperCase() : 'GET';
  if (!METHODS.includes(method)) throw new Unsupported(`webhook method ${method} is not supported`, 'Use GET, POST, PUT, PATCH or DELETE.');
  if (ctx.params.multipleMethods === true)
    throw new Unsupported('a webhook answering several methods', 'Split it into one webhook per method.');
  const mode = ctx.params.responseMode ?? 'onReceived';
  if (mode === 'lastNode') ctx.lossy('unsupportedOption', LAST_NODE_NOT_MAPPED);
  else if (mode === 'onReceived') ctx.warn('The caller gets 202 accepted (with the run id) instead of "Workflow was started".');
  if (typeof ctx.params.path === 'string')
    ctx.warn(`The webhook path "${ctx.params.path}" is replaced by the invoke URL that deploy returns.`);
  const options = isRecord(ctx.params.options) ? ctx.params.options : {};
  if (options.rawBody || options.binaryData || options.binaryPropertyName)
    throw new Unsupported('binary or raw webhook bodies', 'Receive JSON bodies instead.');
  for (const [option, value] of Object.entries(options)) {
    if (value === undefined || value === null || value === false || value === '' || !(option in WEBHOOK_OPTIONS)) continue;
    // With a response node, the response options are hidden in the external tool and unused.
    if (mode === 'responseNode' && /^(response|noResponseBody)/.test(option)) continue;
    ctx.lossy('unsupportedOption', `the webhook option "${option}" (${JSON.stringify(value)}) is dropped: ${WEBHOOK_OPTIONS[option]}.`);
  }
  const triggerId = `${ctx.id}__trigger`;
  const item =
    '{"headers": _webhook.headers, "params": {}, "query": _webhook.query, "body": _webhook.method in ["GET", "HEAD"] ? {} : (_webhook.bodyWrapped = true ? body : $sift($, function($v, $k) { $k != "_webhook" }))}';
  return {
    nodes: [ourNode(ctx, triggerId, 'webhook', { method }, 1), ourNode(ctx, ctx.id, 'transform', { expression: item })],
  };
};

/** Webhook options that change what the caller gets or who may call, and are not carried over: what happens instead. */
const WEBHOOK_OPTIONS: Record<string, string> = {
  responseData: 'the caller gets 202 accepted with the run id, not this response',
  responseCode: 'the caller gets 202 accepted (or what a response node sends)',
  responseHeaders: 'the answer carries no custom headers (a response node can set them)',
  responseContentType: 'the answer is JSON (a response node can set the content type)',
  responsePropertyName: 'a response node decides what is answered',
  noResponseBody: 'the answer has a body',
  ipWhitelist: 'calls are not filtered by IP address (the invoke URL carries its own secret)',
  allowedOrigins: 'cross-origin calls are not filtered',
  ignoreBots: 'calls from bots are not ignored',
};

const num = (v: unknown, d: number) =>
  typeof v === 'number' && Number.isFinite(v) ? v : typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v)) ? Number(v) : d;

/** One interval rule of the Schedule Trigger as a 5-field cron. */
function ruleToCron(rule: Record<string, unknown>): string {
  const field = typeof rule.field === 'string' ? rule.field : 'days';
  const minute = num(rule.triggerAtMinute, 0);
  const hour = num(rule.triggerAtHour, 0);
  switch (field) {
    case 'cronExpression': {
      const expr = typeof rule.expression === 'string' ? rule.expression.trim() : '';
      const parts = expr.split(/\s+/);
      if (parts.length === 5) return expr;
      if (parts.length === 6 && /^0+$/.test(parts[0] ?? '')) return parts.slice(1).join(' ');
      throw new Unsupported(`cron expression "${expr}" with a seconds field`, 'Use a 5-field cron expression (minute precision).');
    }
    case 'seconds':
      throw new Unsupported('a schedule every few seconds', 'Schedules run at most once a minute: use a minutes interval.');
    case 'minutes': {
      const n = num(rule.minutesInterval, 5);
      return n === 1 ? '* * * * *' : `*/${n} * * * *`;
    }
    case 'hours': {
      const n = num(rule.hoursInterval, 1);
      return `${minute} ${n === 1 ? '*' : `*/${n}`} * * *`;
    }
    case 'days': {
      const n = num(rule.daysInterval, 1);
      return `${minute} ${hour} ${n === 1 ? '*' : `*/${n}`} * *`;
    }
    case 'weeks': {
      if (num(rule.weeksInterval, 1) !== 1)
        throw new Unsupported('a schedule every several weeks', 'Use a weekly schedule or a cron expression.');
      const days =
        Array.isArray(rule.triggerAtDay) && rule.triggerAtDay.length ? (rule.triggerAtDay as unknown[]).map((d) => num(d, 0)) : [0];
      return `${minute} ${hour} * * ${days.join(',')}`;
    }
    case 'months': {
      const n = num(rule.monthsInterval, 1);
      return `${minute} ${hour} ${num(rule.triggerAtDayOfMonth, 1)} ${n === 1 ? '*' : `*/${n}`} *`;
    }
    default:
      throw new Unsupported(`schedule interval "${field}"`, 'Use a cron expression.');
  }
}

export const scheduleTrigger: Mapper = (ctx) => {
  const rule = isRecord(ctx.params.rule) ? ctx.params.rule : {};
  const intervals =
    Array.isArray(rule.interval) && rule.interval.length ? (rule.interval as Array<Record<string, unknown>>) : [{ field: 'days' }];
  if (intervals.length > 1)
    throw new Unsupported(
      `${intervals.length} schedule rules on one trigger`,
      'Keep one rule per trigger, or combine them into one cron expression.',
    );
  const cron = ruleToCron(intervals.at(0)!); // exactly one: never empty (the default), more refused above
  if (!ctx.timezone) ctx.warn('The workflow has no time zone setting: the schedule runs in UTC.');
  return { nodes: [ourNode(ctx, ctx.id, 'schedule', { cron, timezone: ctx.timezone ?? 'UTC' })] };
};

/** The Cron node's defaults, where a trigger time leaves a field out. */
const CRON_DEFAULTS = { mode: 'everyDay', hour: 14, minute: 0, weekday: 1, dayOfMonth: 1, value: 2, unit: 'hours' };

/** One trigger time of the older Cron node as a 5-field cron (the tool adds a seconds field; minutes are the finest here). */
function triggerTimeToCron(item: Record<string, unknown>): string {
  const mode = typeof item.mode === 'string' ? item.mode : CRON_DEFAULTS.mode;
  const minute = num(item.minute, CRON_DEFAULTS.minute);
  const hour = num(item.hour, CRON_DEFAULTS.hour);
  switch (mode) {
    case 'everyMinute':
      return '* * * * *';
    case 'everyHour':
      return `${minute} * * * *`;
    case 'everyX': {
      const value = num(item.value, CRON_DEFAULTS.value);
      const unit = typeof item.unit === 'string' ? item.unit : CRON_DEFAULTS.unit;
      if (unit === 'minutes') return value === 1 ? '* * * * *' : `*/${value} * * * *`;
      if (unit === 'hours') return `0 ${value === 1 ? '*' : `*/${value}`} * * *`;
      throw new Unsupported(`a Cron interval in "${unit}"`, 'Use minutes or hours, or a cron expression.');
    }
    case 'everyDay':
      return `${minute} ${hour} * * *`;
    case 'everyWeek':
      return `${minute} ${hour} * * ${num(item.weekday, CRON_DEFAULTS.weekday)}`;
    case 'everyMonth':
      return `${minute} ${hour} ${num(item.dayOfMonth, CRON_DEFAULTS.dayOfMonth)} * *`;
    case 'custom':
      return ruleToCron({ field: 'cronExpression', expression: item.cronExpression ?? '* * * * * *' });
    default:
      throw new Unsupported(`Cron mode "${mode}"`, 'Use a Schedule Trigger with a cron expression.');
  }
}

/** The older Cron trigger (v1) → schedule, from its one trigger time. */
export const cronTrigger: Mapper = (ctx) => {
  const times = isRecord(ctx.params.triggerTimes) && Array.isArray(ctx.params.triggerTimes.item) ? ctx.params.triggerTimes.item : [];
  const items = times.filter(isRecord);
  if (items.length === 0)
    throw new Unsupported(
      'a Cron node without trigger times (the tool never runs it)',
      'Give it one trigger time, or use a Schedule Trigger.',
    );
  if (items.length > 1)
    throw new Unsupported(
      `${items.length} trigger times on one Cron node`,
      'Keep one trigger time per trigger, or combine them into one cron expression.',
    );
  const cron = triggerTimeToCron(items.at(0) ?? {});
  if (!ctx.timezone) ctx.warn('The workflow has no time zone setting: the schedule runs in UTC.');
  return { nodes: [ourNode(ctx, ctx.id, 'schedule', { cron, timezone: ctx.timezone ?? 'UTC' })] };
};

/**
 * The Chat Trigger (`@n8n/n8n-nodes-langchain.chatTrigger`) → a POST webhook and a transform
 * giving its item, `{ sessionId, action, chatInput }`, from the posted body: a chat client posts
 * `{ sessionId, chatInput }` to the invoke URL. Its answer: "when last node finishes" as the
 * Webhook's (lastNodeReply.ts), or a response node.
 */
export const chatTrigger: Mapper = (ctx) => {
  const options = isRecord(ctx.params.options) ? ctx.params.options : {};
  if (ctx.params.public === true || ctx.params.mode === 'hostedChat')
    ctx.warn(
      'The hosted chat page is not served here: a chat client posts { sessionId, chatInput } to the invoke URL that deploy returns.',
    );
  const auth = typeof ctx.params.authentication === 'string' ? ctx.params.authentication : 'none';
  if (auth !== 'none')
    ctx.lossy('unsupportedOption', `the chat's "${auth}" authentication is dropped: the invoke URL carries its own secret instead.`);
  if (typeof options.allowedOrigins === 'string' && options.allowedOrigins !== '*' && options.allowedOrigins !== '')
    ctx.lossy(
      'unsupportedOption',
      `the chat option "allowedOrigins" (${JSON.stringify(options.allowedOrigins)}) is dropped: cross-origin calls are not filtered.`,
    );
  if (options.allowFileUploads === true) throw new Unsupported('file uploads in the chat', 'Send text messages only.');
  if ((options.responseMode ?? 'lastNode') === 'lastNode') ctx.lossy('unsupportedOption', LAST_NODE_NOT_MAPPED);
  const triggerId = `${ctx.id}__trigger`;
  const item = '{"sessionId": sessionId, "action": $exists(action) ? action : "sendMessage", "chatInput": chatInput}';
  return { nodes: [ourNode(ctx, triggerId, 'webhook', { method: 'POST' }, 1), ourNode(ctx, ctx.id, 'transform', { expression: item })] };
};
