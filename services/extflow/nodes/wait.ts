/** Wait → wait (time interval, specific time) or event (on webhook call). */
import { isExtExpression } from '../expressions';
import { Unsupported } from '../types';
import { isRecord, ourNode, type Mapper } from './context';

const UNIT_SECONDS: Record<string, number> = { seconds: 1, minutes: 60, hours: 3600, days: 86400 };

function seconds(amount: unknown, unit: unknown, defaultUnit: string): number {
  if (isExtExpression(amount)) throw new Unsupported('a wait time given by an expression', 'Use a fixed wait time.');
  const n = typeof amount === 'number' ? amount : 1;
  const u = typeof unit === 'string' ? unit : defaultUnit;
  const perUnit = UNIT_SECONDS[u];
  if (perUnit === undefined) throw new Unsupported(`wait unit "${u}"`, 'Use seconds, minutes, hours or days.');
  const s = n * perUnit;
  if (!(s > 0) || s > 31_536_000) throw new Unsupported(`a wait of ${s} seconds`, 'Wait between one second and one year.');
  return s;
}

/** A local date-time of the workflow's zone as an instant with offset. */
export function zonedInstant(local: string, timeZone: string): string {
  const m = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2}))?/.exec(local);
  if (!m) throw new Unsupported(`"${local}" is not a date-time`, 'Give an ISO date-time.');
  // Six groups, so six numbers: the defaults never apply.
  const [y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0] = m.slice(1).map((x) => Number(x ?? 0));
  const asUtc = Date.UTC(y, mo - 1, d, h, mi, s);
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  }).formatToParts(new Date(asUtc));
  const get = (t: string) => Number(parts.find((p) => p.type === t)?.value);
  const offset = Date.UTC(get('year'), get('month') - 1, get('day'), get('hour'), get('minute'), get('second')) - asUtc;
  return new Date(asUtc - offset).toISOString();
}

export const waitNode: Mapper = (ctx) => {
  const p = ctx.params;
  const resume = typeof p.resume === 'string' ? p.resume : 'timeInterval';
  if (resume === 'timeInterval') {
    return { nodes: [ourNode(ctx, ctx.id, 'wait', { seconds: seconds(p.amount, p.unit, ctx.version < 1.1 ? 'hours' : 'hours') })] };
  }
  if (resume === 'specificTime') {
    const dt = p.dateTime;
    if (typeof dt !== 'string' || dt === '' || isExtExpression(dt))
      throw new Unsupported('a wait until a time given by an expression', 'Use a fixed date-time.');
    let until: string;
    if (/(Z|[+-]\d{2}:?\d{2})$/.test(dt)) until = new Date(dt).toISOString();
    else {
      if (!ctx.timezone) ctx.warn(`"${dt}" has no time zone and the workflow none either: read as UTC.`);
      until = zonedInstant(dt, ctx.timezone ?? 'UTC');
    }
    return { nodes: [ourNode(ctx, ctx.id, 'wait', { until })] };
  }
  if (resume === 'webhook') {
    const config: Record<string, unknown> = {};
    if (p.limitWaitTime === true) {
      if (p.limitType === 'atSpecifiedTime')
        throw new Unsupported('a webhook wait limited to a specific time', 'Limit it by a time interval.');
      config.timeoutSeconds = Math.round(seconds(p.resumeAmount, p.resumeUnit, 'hours'));
    }
    const options = isRecord(p.options) ? p.options : {};
    if (typeof p.httpMethod === 'string' && p.httpMethod !== 'POST')
      ctx.warn(`The run resumes on a POST to its resume URL (not ${p.httpMethod}).`);
    if (options.webhookSuffix) ctx.warn('The webhook suffix is not used: each wait has its own resume URL.');
    ctx.warn(
      'The run resumes when its resume URL is called (listed in run.waits); the next nodes see { body } of that call, without headers or query.',
    );
    const eventId = `${ctx.id}__event`;
    return {
      nodes: [
        ourNode(ctx, eventId, 'event', config, 1),
        ourNode(ctx, ctx.id, 'transform', { expression: '{"headers": {}, "params": {}, "query": {}, "body": $}' }),
      ],
    };
  }
  throw new Unsupported(
    `waiting for "${resume}"`,
    resume === 'form'
      ? 'Use an approval node, or an event resumed by your form.'
      : 'Wait for a time interval, a specific time or a webhook call.',
  );
};
