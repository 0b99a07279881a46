/**
 * The older Cron trigger node (n8n-nodes-base.cron, 110 nodes in the public corpus): each of its
 * trigger-time modes as the 5-field cron of a schedule node, the tool's defaults where a field is
 * left out, and what does not fit (several times, none, seconds) named.
 */
import { convertExtflowWorkflow } from '../../../../services/extflow/convert';

function convertCron(triggerTimes: unknown, settings: Record<string, unknown> = { timezone: 'Europe/Berlin' }) {
  return convertExtflowWorkflow({
    id: 'cron-1',
    name: 'Cron',
    settings,
    nodes: [
      { name: 'Cron', type: 'n8n-nodes-base.cron', typeVersion: 1, parameters: { triggerTimes } },
      { name: 'Done', type: 'n8n-nodes-base.noOp', typeVersion: 1, parameters: {} },
    ],
    connections: { Cron: { main: [[{ node: 'Done', type: 'main', index: 0 }]] } },
  } as never);
}
const cronOf = (item: Record<string, unknown>) => {
  const wf = convertCron({ item: [item] });
  expect(wf.conversion.unsupported).toEqual([]);
  return wf.nodes.find((n) => n.id === 'cron')?.config;
};

test.each([
  [{ mode: 'everyMinute' }, '* * * * *'],
  [{ mode: 'everyHour', minute: 15 }, '15 * * * *'],
  [{ mode: 'everyX', value: 10, unit: 'minutes' }, '*/10 * * * *'],
  [{ mode: 'everyX', value: 3, unit: 'hours' }, '0 */3 * * *'],
  [{ mode: 'everyDay', hour: 9, minute: 30 }, '30 9 * * *'],
  [{ mode: 'everyWeek', hour: 8, minute: 0, weekday: 5 }, '0 8 * * 5'],
  [{ mode: 'everyMonth', hour: 6, minute: 5, dayOfMonth: 15 }, '5 6 15 * *'],
  [{ mode: 'custom', cronExpression: '0 0 12 * * 1-5' }, '0 12 * * 1-5'],
  // The tool's defaults: every day at 14:00.
  [{}, '0 14 * * *'],
])('trigger time %j → %s in the workflow time zone', (item, cron) => {
  expect(cronOf(item)).toEqual({ cron, timezone: 'Europe/Berlin' });
});

test('several trigger times, none, and a seconds schedule are named unsupported with a way forward', () => {
  const reasons = [
    convertCron({ item: [{ mode: 'everyDay' }, { mode: 'everyWeek' }] }),
    convertCron({}),
    convertCron({ item: [{ mode: 'custom', cronExpression: '*/5 * * * * *' }] }),
  ].map((wf) => wf.conversion.unsupported.map((u) => [u.node, u.reason]));
  expect(reasons).toEqual([
    [['Cron', '2 trigger times on one Cron node']],
    [['Cron', 'a Cron node without trigger times (the tool never runs it)']],
    [['Cron', 'cron expression "*/5 * * * * *" with a seconds field']],
  ]);
});
