/**
 * Abuse class F3/F4 (issue 26): JSONata expressions whose built-in functions, regexes or lambda
 * signatures did unbounded work (heap exhaustion, minutes of backtracking, a process abort in a
 * live run). engine/expressionBounds.ts bounds each; here A runs each one live and as a dry run
 * while B's probe keeps succeeding. Each expression either finishes with JSONata's result or
 * fails its node with a message naming the limit; none fails a workflow task.
 */
import { chain, expect4xx, expectFailedNode, startAbuseStack, transformNode, type AbuseStack } from './kit';

let kit: AbuseStack;
beforeAll(async () => {
  kit = await startAbuseStack();
}, 120_000);
afterAll(() => kit?.close());

const BACKTRACKING_PICTURE = `$toMillis("${'1'.repeat(40)}x", "[f][f][f][f][f][f][f][f][f][f]")`;
const BACKTRACKING_SIGNATURE = `(function($x)<${'n+'.repeat(12)}:n>{ $x })(${Array.from({ length: 30 }, () => 1).join(', ')}, "x")`;

const CASES = [
  { name: '$sort of 100,000 numbers (heap exhaustion)', expression: '$count($sort([1..100000]))', output: 100_000 },
  { name: '$distinct of 60,000 numbers (17 s)', expression: '$count($distinct([1..60000]))', output: 60_000 },
  { name: 'a million regex matches in $replace (12 s)', expression: '$length($replace($pad("", 1000000, "a"), /a/, "b"))', message: /exceeded 10000 steps in regular expression matching/ },
  { name: 'a backtracking $toMillis picture (process abort, F4)', expression: `$exists(${BACKTRACKING_PICTURE})`, output: false },
  { name: 'a backtracking lambda signature, through $eval (56 s)', expression: `$eval(${JSON.stringify(BACKTRACKING_SIGNATURE)})`, message: /Function signature <n\+.* is too complex/ },
] as const;

/** A dry run of the draft (kit.dryRun executes the deployed version, which a fresh workflow lacks). */
async function dryRunOutcome(expression: string): Promise<any> {
  const id = await kit.createWorkflow(kit.a, chain([transformNode(expression)]));
  const res = await kit.request(kit.a, 'POST', `/api/v1/workflows/${id}/execute`, { input: {}, dryRun: true, target: 'candidate' });
  expect([res.status, res.text.slice(0, 300)]).toEqual([201, expect.anything()]);
  return res.body.run;
}

test.each(CASES)('A runs $name live and dry: bounded outcome, B keeps probing', async (attack) => {
  await kit.survives(async () => {
    const live = await kit.runLive(kit.a, [transformNode(attack.expression)]);
    const dry = await dryRunOutcome(attack.expression);
    for (const run of [live, dry]) {
      if ('message' in attack) expectFailedNode(run, attack.message, 'expr');
      else expect({ status: run.status, output: run.output }).toEqual({ status: 'succeeded', output: attack.output });
    }
  });
}, 240_000);

test('A deploys a backtracking lambda signature: refused with a 4xx naming it, B keeps probing', async () => {
  await kit.survives(async () => {
    const id = await kit.createWorkflow(kit.a, { nodes: [{ id: 'start', type: 'start', config: {} }, transformNode(BACKTRACKING_SIGNATURE)], edges: [{ source: 'start', target: 'expr' }] });
    expect4xx(await kit.request(kit.a, 'POST', `/api/v1/workflows/${id}/deploy`), /Function signature <n\+.* is too complex/);
  });
}, 240_000);
