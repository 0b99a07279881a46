/**
 * Issue 26, F3: dry runs evaluate a tenant's JSONata. On the API's event loop, `$sort` of
 * 100,000 numbers ran the heap out of memory, and `$distinct`, a `$replace` over a million
 * characters, a `$toMillis` picture and a lambda signature (both compiled to a backtracking
 * RegExp) stalled the whole API. Contract: each dry run answers (a 4xx, or 201 with the node
 * failed naming the limit, or the right result), /healthz answers meanwhile, B keeps running.
 */
import { F3_ACCEPTED, F3_EXPRESSIONS, f3Result } from './attacks';
import { expectDryRunEnded, abuseStackPerFile, transformNode } from './kit';

const kit = abuseStackPerFile();

describe.each(Object.entries(F3_EXPRESSIONS) as Array<[keyof typeof F3_EXPRESSIONS, string]>)('a dry run of %s', (name, expression) => {
  test('answers with the node failed naming the limit (or the right result); B probes meanwhile and after', async () => {
    const accepted = F3_ACCEPTED[name];
    await kit.survives(async () => {
      const res = await kit.dryRun(kit.a, [transformNode(expression)]);
      expectDryRunEnded(res, accepted.message, f3Result(name));
      if (res.status === 201 && res.body.run.status === 'failed') expect(res.body.run.errorNodeId).toBe('expr');
    });
  });
});

test('all five at once, twice each: every dry run answers, B probes meanwhile', async () => {
  await kit.survives(async () => {
    const entries = [...Object.entries(F3_EXPRESSIONS), ...Object.entries(F3_EXPRESSIONS)] as Array<[keyof typeof F3_EXPRESSIONS, string]>;
    const answers = await Promise.all(entries.map(([, expression]) => kit.dryRun(kit.a, [transformNode(expression)])));
    answers.forEach((res, i) => {
      expectDryRunEnded(res, F3_ACCEPTED[entries[i][0]].message, f3Result(entries[i][0]));
    });
  });
});
