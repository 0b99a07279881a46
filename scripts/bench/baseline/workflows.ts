/**
 * The `baseline` of the benchmarks: the shapes the `steps`, `throughput`, `webhooks` and `parked` scenarios run
 * through the service, written as plain Temporal workflows, so every figure can be reported as
 * a ratio to bare Temporal on the same server in the same benchmark run.
 */
import { condition, defineSignal, defineUpdate, log, proxyActivities, proxyLocalActivities, setHandler, sleep } from '@temporalio/workflow';
import type { BaselineActivities } from './activities';

const durable = proxyActivities<BaselineActivities>({ startToCloseTimeout: '30 seconds' });
const local = proxyLocalActivities<BaselineActivities>({ startToCloseTimeout: '30 seconds' });

export type BaselineStepVariant = 'empty' | 'transform' | 'code' | 'http-get' | 'http-post';

/** N sequential steps of one kind: pure in the workflow, or the service's choice of local or regular activity. */
export async function baselineSteps(variant: BaselineStepVariant, steps: number, url: string): Promise<{ i: number }> {
  let state: { i: number } = { i: 0 };
  for (let s = 1; s <= steps; s++) {
    if (variant === 'transform') state = { i: state.i + 1 };
    else if (variant === 'code') state = { i: (await local.fib(state)).i };
    else if (variant === 'http-get') {
      await local.httpGet(`${url}/step?i=${s}`);
      state = { i: s };
    } else if (variant === 'http-post') {
      await durable.httpPost(`${url}/step`, { i: s });
      state = { i: s };
    }
  }
  return state;
}

/** The throughput shape: transform → durable POST → log. */
export async function baselineThroughput(url: string, i: number): Promise<unknown> {
  const shaped = { n: i };
  const body = await durable.httpPost(`${url}/record`, shaped);
  log.info(`done ${JSON.stringify(body)}`);
  return body;
}

/** The webhooks shape: webhook body → transform `{ "n": i }` → log; no activity, as in the service's run of it. */
export async function baselineWebhook(body: { i: number }): Promise<{ n: number }> {
  const shaped = { n: body.i };
  log.info(`got ${shaped.n}`);
  return shaped;
}

/** How a bare parked run waits: an update (approval), a signal (event), or a long sleep (timer). */
export type BaselineParkKind = 'approval' | 'event' | 'timer';

export const baselineApprove = defineUpdate<string, [string]>('approve');
export const baselineEvent = defineSignal<[number]>('event');

/**
 * The `parked` scenario's shape: waits like the service's approval, event and wait nodes (a
 * condition released by an update or a signal, a durable timer), then returns a string built
 * from what it waited for, so a resumed run proves it got its own answer.
 */
export async function baselineParked(kind: BaselineParkKind, name: string, sleepMs: number): Promise<string> {
  if (kind === 'timer') {
    await sleep(sleepMs);
    return `timer ${name}`;
  }
  let answer: string | undefined;
  setHandler(baselineApprove, (comment) => {
    answer ??= `approved ${name}: ${comment}`;
    return answer;
  });
  setHandler(baselineEvent, (amount) => {
    answer ??= `event ${name}: ${amount}`;
  });
  await condition(() => answer !== undefined);
  return answer!;
}
