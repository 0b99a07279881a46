import {
  NODE_CONFIG_SCHEMAS,
  NodeConfigError,
  collectExpressions,
  cronErrors,
  isJsonValue,
  isValidSourceHandle,
  outputHandles,
  parseNodeConfig,
} from '../../../engine/nodes';
import { TEMPLATES, findTemplate } from '../../../engine/templates';
import { NODE_TYPES, type ValidationReport, type WorkflowGraph } from '../../../engine/types';
import { deploymentReadiness, MAX_EXPRESSION_CHARS, topologicalOrder, validateGraph } from '../../../engine/validate';

const start = { id: 'start', type: 'start', config: {} };
const log = (id: string, extra: Record<string, unknown> = {}) => ({ id, type: 'log', config: { level: 'info', message: 'hi' }, ...extra });

function codes(report: ValidationReport): string[] {
  return report.errors.map((e) => e.code);
}

function expectOnly(report: ValidationReport, code: string) {
  expect(report.valid).toBe(false);
  expect(new Set(codes(report))).toEqual(new Set([code]));
}

describe('validateGraph: one minimal graph per problem', () => {
  test('a minimal valid graph', () => {
    const report = validateGraph({ nodes: [start, log('a')], edges: [{ source: 'start', target: 'a' }] });
    expect(report).toEqual({ valid: true, errors: [], warnings: [], nodeCount: 2, edgeCount: 1 });
  });

  test('unknown_type', () => {
    const report = validateGraph({ nodes: [start, { id: 'x', type: 'teleport', config: {} }], edges: [{ source: 'start', target: 'x' }] });
    expectOnly(report, 'unknown_type');
    expect(report.errors[0]).toMatchObject({ nodeId: 'x', severity: 'error' });
    expect(report.errors[0].message).toContain('teleport');
  });

  test('invalid_config names the field and keeps every zod issue', () => {
    const report = validateGraph({
      nodes: [start, { id: 'h', type: 'http', config: { method: 'FETCH', url: 'ftp://example.com', timeoutMs: 0, extra: 1 } }],
      edges: [{ source: 'start', target: 'h' }],
    });
    expectOnly(report, 'invalid_config');
    const messages = report.errors.map((e) => e.message).join('\n');
    expect(messages).toMatch(/config\.method/);
    expect(messages).toMatch(/config\.url: must be an http\(s\) URL/);
    expect(messages).toMatch(/config\.timeoutMs/);
    expect(messages).toMatch(/Unrecognized key.*extra/);
    expect(report.errors.every((e) => e.nodeId === 'h')).toBe(true);
  });

  test('invalid_config for a missing required field says "is required"', () => {
    const report = validateGraph({
      nodes: [start, { id: 'l', type: 'log', config: { message: 'm' } }],
      edges: [{ source: 'start', target: 'l' }],
    });
    expectOnly(report, 'invalid_config');
    expect(report.errors[0].message).toBe('node "l" (log): config.level: is required');
  });

  test('duplicate_node_id', () => {
    const report = validateGraph({ nodes: [start, log('a'), log('a')], edges: [{ source: 'start', target: 'a' }] });
    expectOnly(report, 'duplicate_node_id');
    expect(report.errors[0]).toMatchObject({ nodeId: 'a' });
    expect(report.errors[0].message).toContain('nodes[1]');
  });

  test.each(['__proto__', 'constructor', 'prototype'])('node id %s is reserved: it cannot be a key of $nodes', (id) => {
    const report = validateGraph({ nodes: [start, log(id)], edges: [{ source: 'start', target: id }] });
    expectOnly(report, 'invalid_config');
    expect(report.errors[0]).toMatchObject({ nodeId: id });
    expect(report.errors[0].message).toContain('nodes[1].id');
    expect(report.errors[0].message).toContain('reserved');
  });

  test('dangling_edge for a missing source and target, by edge id or index', () => {
    const report = validateGraph({
      nodes: [start],
      edges: [
        { id: 'e1', source: 'start', target: 'ghost' },
        { source: 'phantom', target: 'start' },
      ],
    });
    expect(codes(report)).toEqual(['dangling_edge', 'dangling_edge']);
    expect(report.errors[0]).toMatchObject({ edgeId: 'e1' });
    expect(report.errors[0].message).toContain('"ghost"');
    expect(report.errors[1]).toMatchObject({ edgeId: 'edges[1]' });
  });

  test('invalid_handle: unknown handle, and a branching node edge without handle', () => {
    const cond = { id: 'c', type: 'condition', config: { expression: 'x > 1' } };
    const report = validateGraph({
      nodes: [start, cond, log('a'), log('b')],
      edges: [
        { source: 'start', target: 'c' },
        { source: 'c', target: 'a', sourceHandle: 'maybe' },
        { source: 'c', target: 'b' },
      ],
    });
    expect(codes(report)).toEqual(['invalid_handle', 'invalid_handle']);
    expect(report.errors[0].message).toContain('"true", "false"');
    expect(report.errors[1].message).toContain('has no sourceHandle');
  });

  test('invalid_handle: "error" only exists with onError branch', () => {
    const edges = [
      { source: 'start', target: 'a' },
      { source: 'a', target: 'b', sourceHandle: 'error' },
    ];
    expectOnly(validateGraph({ nodes: [start, log('a'), log('b')], edges }), 'invalid_handle');
    expect(validateGraph({ nodes: [start, log('a', { onError: 'branch' }), log('b')], edges }).valid).toBe(true);
  });

  test('no_trigger', () => {
    const report = validateGraph({ nodes: [log('a')], edges: [] });
    expect(codes(report)).toEqual(['no_trigger']);
    expect(report.errors[0].nodeId).toBeUndefined();
  });

  test('unreachable_node', () => {
    const report = validateGraph({ nodes: [start, log('a'), log('island')], edges: [{ source: 'start', target: 'a' }] });
    expectOnly(report, 'unreachable_node');
    expect(report.errors[0]).toMatchObject({ nodeId: 'island' });
  });

  test("an expression over MAX_EXPRESSION_CHARS is refused without compiling it (validation runs on the API's event loop)", () => {
    const huge = '[' + Array(MAX_EXPRESSION_CHARS).fill('1').join(',') + ']';
    // A templated field (a transform's expression field has its own, lower cap in the config schema).
    const report = validateGraph({
      nodes: [start, { id: 'h', type: 'http', config: { method: 'POST', url: 'https://example.com', body: { items: [`=${huge}`] } } }],
      edges: [{ source: 'start', target: 'h' }],
    });
    expectOnly(report, 'invalid_expression');
    expect(report.errors[0].message).toMatch(/the limit is 65536/);
  });

  test('invalid_expression carries the path, for JSONata and "=" templated fields', () => {
    const report = validateGraph({
      nodes: [
        start,
        { id: 't', type: 'transform', config: { expression: '{"a": }' } },
        { id: 'h', type: 'http', config: { method: 'POST', url: 'https://example.com', body: { items: ['ok', '=$sum(('] } } },
      ],
      edges: [
        { source: 'start', target: 't' },
        { source: 't', target: 'h' },
      ],
    });
    expectOnly(report, 'invalid_expression');
    expect(report.errors[0].message).toMatch(/^node "t": config\.expression: Invalid expression: .*position/);
    expect(report.errors[1].message).toContain('config.body.items[1]');
  });

  test('cycle names the node ids', () => {
    const report = validateGraph({
      nodes: [start, { id: 'm', type: 'merge', config: {} }, log('a'), log('b')],
      edges: [
        { source: 'start', target: 'm' },
        { source: 'm', target: 'a' },
        { source: 'a', target: 'b' },
        { source: 'b', target: 'm' },
      ],
    });
    expectOnly(report, 'cycle');
    expect(report.errors[0]).toMatchObject({ nodeId: 'm' });
    expect(report.errors[0].message).toContain('m → a → b → m');
  });

  test('a self-loop is a cycle', () => {
    const report = validateGraph({
      nodes: [start, { id: 'm', type: 'merge', config: {} }],
      edges: [
        { source: 'start', target: 'm' },
        { source: 'm', target: 'm' },
      ],
    });
    expectOnly(report, 'cycle');
    expect(report.errors[0].message).toContain('m → m');
  });

  test('multiple_inputs for a non-merge node; merge nodes may join branches', () => {
    const cond = { id: 'c', type: 'condition', config: { expression: 'ok' } };
    const edges = [
      { source: 'start', target: 'c' },
      { source: 'c', target: 'a', sourceHandle: 'true' },
      { source: 'c', target: 'b', sourceHandle: 'false' },
      { source: 'a', target: 'join' },
      { source: 'b', target: 'join' },
    ];
    const report = validateGraph({ nodes: [start, cond, log('a'), log('b'), log('join')], edges });
    expectOnly(report, 'multiple_inputs');
    expect(report.errors[0]).toMatchObject({ nodeId: 'join' });
    expect(report.errors[0].message).toContain('use a merge node');
    expect(validateGraph({ nodes: [start, cond, log('a'), log('b'), { id: 'join', type: 'merge', config: {} }], edges }).valid).toBe(true);
  });

  test('a trigger with an incoming edge is invalid', () => {
    const report = validateGraph({
      nodes: [start, log('a'), { id: 'hook', type: 'webhook', config: {} }],
      edges: [
        { source: 'start', target: 'a' },
        { id: 'back', source: 'a', target: 'hook' },
      ],
    });
    expectOnly(report, 'multiple_inputs');
    expect(report.errors[0]).toMatchObject({ nodeId: 'hook', edgeId: 'back' });
    expect(report.errors[0].message).toContain('cannot have incoming edges');
  });

  test('several triggers and unused branch handles are fine, without warnings', () => {
    const report = validateGraph({
      nodes: [start, { id: 'hook', type: 'webhook', config: {} }, { id: 'c', type: 'condition', config: { expression: 'true' } }, log('a')],
      edges: [
        { source: 'start', target: 'c' },
        { source: 'hook', target: 'a' },
        { source: 'c', target: 'a', sourceHandle: 'true' },
      ],
    });
    // 'a' has two inputs; everything else is fine
    expect(codes(report)).toEqual(['multiple_inputs']);
    expect(report.warnings).toEqual([]);
  });

  test('disabled nodes are validated like enabled ones', () => {
    const report = validateGraph({
      nodes: [start, { id: 'off', type: 'log', disabled: true, config: { level: 'loud', message: 'x' } }],
      edges: [{ source: 'start', target: 'off' }],
    });
    expectOnly(report, 'invalid_config');
    expect(report.errors[0].nodeId).toBe('off');
  });

  test('edges with a null sourceHandle count as "no handle"', () => {
    expect(validateGraph({ nodes: [start, log('a')], edges: [{ id: 'e', source: 'start', target: 'a', sourceHandle: null }] }).valid).toBe(
      true,
    );
  });
});

test('one report lists every problem at once', () => {
  const report = validateGraph({
    nodes: [
      { id: 'bad id!', type: 'start', config: {} },
      { id: 'x', type: 'nope', config: {} },
      { id: 'l', type: 'log', config: { level: 'info' } },
      { id: 'l', type: 'log', config: { level: 'info', message: '' } },
      { id: 's', type: 'switch', config: { expression: 'kind', cases: [{ value: 1, handle: 'default' }] } },
      { id: 't', type: 'transform', config: { expression: ')' } },
    ],
    edges: [
      { source: 'bad id!', target: 's' },
      { source: 's', target: 'l', sourceHandle: 'zzz' },
      { source: 'l', target: 'nowhere' },
      { source: 't', target: 't' },
    ],
  });
  expect(report.valid).toBe(false);
  expect(new Set(codes(report))).toEqual(
    new Set([
      'invalid_config',
      'unknown_type',
      'duplicate_node_id',
      'invalid_expression',
      'invalid_handle',
      'dangling_edge',
      'unreachable_node',
      'cycle',
    ]),
  );
  expect(report.errors.find((e) => e.nodeId === 'bad id!')?.message).toContain('nodes[0].id');
  expect(report.nodeCount).toBe(6);
  expect(report.edgeCount).toBe(4);
});

describe('validateGraph never throws', () => {
  const cyclic: Record<string, unknown> = { id: 'start', type: 'start' };
  cyclic.config = { inputSchema: cyclic };
  const throwing = {
    get nodes(): unknown {
      throw new Error('boom');
    },
  };
  const hostile = new Proxy(
    {},
    {
      get() {
        throw new Error('trap');
      },
      ownKeys() {
        throw new Error('trap');
      },
    },
  );
  const deep: Record<string, unknown> = {};
  let cursor = deep;
  for (let i = 0; i < 5000; i++) cursor = cursor.next = {};

  test.each<[string, unknown]>([
    ['null', null],
    ['undefined', undefined],
    ['a string', 'graph'],
    ['a number', 42],
    ['an array', []],
    ['an empty object', {}],
    ['nodes not an array', { nodes: 'a', edges: {} }],
    ['primitive nodes and edges', { nodes: [null, 1, 'x', [], true], edges: [null, 'e', 3, []] }],
    ['nodes without ids', { nodes: [{ type: 'start' }, { type: 'log', config: null }], edges: [{ source: 1, target: {} }] }],
    [
      'wrong field types',
      {
        nodes: [{ id: 5, type: 7, config: 'c', retry: 'r', position: 1, onError: 'x' }],
        edges: [{ source: 'a', target: 'b', sourceHandle: 7 }],
      },
    ],
    ['a cyclic config', { nodes: [cyclic], edges: [] }],
    ['a deep config', { nodes: [{ id: 'start', type: 'start', config: { inputSchema: deep } }], edges: [] }],
    ['a throwing getter', throwing],
    ['a hostile proxy', hostile],
    ['a proxy node', { nodes: [hostile], edges: [hostile] }],
    [
      'configs of every type set to garbage',
      { nodes: NODE_TYPES.map((type, i) => ({ id: `n${i}`, type, config: { expression: 5, cases: 'x', body: () => 1 } })), edges: [] },
    ],
  ])('%s', (_name, input) => {
    const report = validateGraph(input);
    expect(report.valid).toBe(false);
    expect(report.errors.length).toBeGreaterThan(0);
    for (const issue of report.errors) expect(typeof issue.message).toBe('string');
  });

  test('seeded random graphs', () => {
    let seed = 12345;
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const pick = <T>(xs: T[]): T => xs[Math.floor(rand() * xs.length)];
    const atoms: unknown[] = [
      null,
      undefined,
      0,
      -1,
      1e308,
      NaN,
      '',
      '=',
      '=$',
      '=(',
      'x',
      true,
      [],
      {},
      'start',
      'log',
      'error',
      'default',
    ];
    const value = (depth: number): unknown => {
      const r = rand();
      if (depth > 3 || r < 0.5) return pick(atoms);
      if (r < 0.75) return Array.from({ length: Math.floor(rand() * 4) }, () => value(depth + 1));
      return Object.fromEntries(
        Array.from({ length: Math.floor(rand() * 4) }, () => [
          pick(['id', 'type', 'config', 'expression', 'cases', 'url', 'body', 'source', 'target', 'sourceHandle']),
          value(depth + 1),
        ]),
      );
    };
    const ids = ['a', 'b', 'c', 'start'];
    for (let i = 0; i < 300; i++) {
      const nodes = Array.from({ length: Math.floor(rand() * 6) }, () =>
        rand() < 0.3
          ? value(0)
          : { id: pick(ids), type: pick([...NODE_TYPES, 'bogus']), config: value(1), onError: pick(['branch', 'stop', undefined]) },
      );
      const edges = Array.from({ length: Math.floor(rand() * 6) }, () =>
        rand() < 0.3
          ? value(0)
          : { source: pick(ids), target: pick(ids), sourceHandle: pick([undefined, 'true', 'error', 'default', null]) },
      );
      expect(() => validateGraph({ nodes, edges })).not.toThrow();
    }
  });

  test('a long chain beyond the size limit is reported, not overflowed', () => {
    const n = 20_000;
    const nodes = [start, ...Array.from({ length: n }, (_, i) => ({ id: `n${i}`, type: 'merge', config: {} }))];
    const edges = nodes.slice(1).map((node, i) => ({ source: nodes[i].id, target: node.id }));
    edges.push({ source: `n${n - 1}`, target: 'n0' });
    const report = validateGraph({ nodes, edges });
    expect(codes(report)).toEqual(['invalid_config', 'invalid_config', 'cycle']);
  });
});

describe('node catalogue', () => {
  test('every node type has a config schema', () => {
    expect(Object.keys(NODE_CONFIG_SCHEMAS).sort()).toEqual([...NODE_TYPES].sort());
  });

  test('parseNodeConfig applies defaults and throws readable errors', () => {
    expect(parseNodeConfig('webhook', {})).toEqual({ method: 'ANY' });
    expect(parseNodeConfig('schedule', { cron: '0 9 * * 1-5' })).toEqual({ cron: '0 9 * * 1-5', timezone: 'UTC' });
    expect(parseNodeConfig('response', { body: null })).toEqual({ status: 200, body: null });
    expect(parseNodeConfig('http', { method: 'GET', url: '=$trigger.url' })).toEqual({
      method: 'GET',
      url: '=$trigger.url',
      timeoutMs: 30_000,
    });
    expect(parseNodeConfig('merge', undefined)).toEqual({});
    expect(() => parseNodeConfig('response', {})).toThrow(/config\.body: is required/);
    expect(() => parseNodeConfig('teleport', {})).toThrow(NodeConfigError);
    expect(() => parseNodeConfig('fail', { message: '   ' })).toThrow(/config\.message: must not be empty/);
  });

  test('wait takes exactly one of seconds and until', () => {
    expect(parseNodeConfig('wait', { seconds: 1.5 })).toEqual({ seconds: 1.5 });
    expect(parseNodeConfig('wait', { until: '2030-01-01T09:00:00+01:00' })).toEqual({ until: '2030-01-01T09:00:00+01:00' });
    expect(() => parseNodeConfig('wait', {})).toThrow(/exactly one/);
    expect(() => parseNodeConfig('wait', { seconds: 1, until: '2030-01-01T09:00:00Z' })).toThrow(/exactly one/);
    expect(() => parseNodeConfig('wait', { seconds: 0 })).toThrow();
    expect(() => parseNodeConfig('wait', { until: 'tomorrow' })).toThrow(/ISO 8601/);
  });

  test('switch cases: unique handles, "default" reserved, 1..50', () => {
    expect(() => parseNodeConfig('switch', { expression: 'x', cases: [] })).toThrow(/at least one case/);
    expect(() => parseNodeConfig('switch', { expression: 'x', cases: [{ value: 1, handle: 'default' }] })).toThrow(/reserved/);
    expect(() =>
      parseNodeConfig('switch', {
        expression: 'x',
        cases: [
          { value: 1, handle: 'a' },
          { value: 2, handle: 'a' },
        ],
      }),
    ).toThrow(/cases\[1\]\.handle: duplicate case handle "a"/);
    expect(() => parseNodeConfig('switch', { expression: 'x', cases: [{ handle: 'a' }] })).toThrow(/cases\[0\]\.value: is required/);
    expect(() => parseNodeConfig('switch', { expression: 'x', cases: [{ value: () => 1, handle: 'a' }] })).toThrow(
      /cases\[0\]\.value: expected a JSON value/,
    );
    const cases = Array.from({ length: 51 }, (_, i) => ({ value: i, handle: `h${i}` }));
    expect(() => parseNodeConfig('switch', { expression: 'x', cases })).toThrow(/at most 50/);
  });

  test.each([
    ['0 9 * * 1-5', []],
    ['*/15 0-6,18-23 1,15 jan-MAR mon-fri', []],
    ['0 0 * * 7', []],
    ['5/10 * * * SUN', []],
    ['@daily', [/expected 5 fields/]],
    ['* * * *', [/got 4/]],
    ['60 24 0 13 8', [/minute: 60/, /hour: 24/, /day of month: 0/, /month: 13/, /day of week: 8/]],
    ['*/0 5-1 * FOO *', [/minute: \*\/0 is not a valid/, /hour: 5-1 is not a valid/, /month: FOO is not a valid.*JAN-DEC/]],
    ['1,,2 * * * *', [/minute: 1,,2 is not a valid/]],
    ['1-2-3 * * * *', [/minute: 1-2-3 is not a valid/]],
    // The hand-written parser accepted a date that never exists.
    ['0 0 30 2 *', [/never fires/]],
    ['0 0 29 2 *', []],
  ])('cron %s', (cron, problems) => {
    const errors = cronErrors(cron);
    expect(errors).toHaveLength(problems.length);
    problems.forEach((p, i) => expect(errors[i]).toMatch(p));
  });

  test('schedule time zones are checked with Intl', () => {
    expect(parseNodeConfig('schedule', { cron: '* * * * *', timezone: 'Europe/Berlin' }).timezone).toBe('Europe/Berlin');
    expect(() => parseNodeConfig('schedule', { cron: '* * * * *', timezone: 'Mars/Olympus' })).toThrow(/IANA time zone/);
  });

  test('outputHandles and isValidSourceHandle', () => {
    const switchNode = {
      type: 'switch',
      config: {
        expression: 'x',
        cases: [
          { value: 1, handle: 'one' },
          { value: 2, handle: 'two' },
        ],
      },
    };
    expect(outputHandles({ type: 'log', config: {} })).toBeNull();
    expect(outputHandles({ type: 'log', config: {}, onError: 'branch' })).toEqual(['error']);
    expect(outputHandles({ type: 'condition', config: {} })).toEqual(['true', 'false']);
    expect(outputHandles({ type: 'approval', config: {}, onError: 'branch' })).toEqual(['approved', 'rejected', 'error']);
    expect(outputHandles(switchNode)).toEqual(['one', 'two', 'default']);
    expect(outputHandles({ type: 'switch', config: { cases: 'garbage' } })).toEqual(['default']);
    expect(isValidSourceHandle({ type: 'log', config: {} }, undefined)).toBe(true);
    expect(isValidSourceHandle({ type: 'log', config: {} }, 'default')).toBe(true);
    expect(isValidSourceHandle({ type: 'log', config: {}, onError: 'branch' }, 'error')).toBe(true);
    expect(isValidSourceHandle({ type: 'condition', config: {} }, undefined)).toBe(false);
    expect(isValidSourceHandle(switchNode, 'default')).toBe(true);
    expect(isValidSourceHandle(switchNode, 'three')).toBe(false);
  });

  test('collectExpressions follows the "=" convention per field', () => {
    expect(collectExpressions({ type: 'condition', config: { expression: 'a = 1' } })).toEqual([
      { path: 'config.expression', expression: 'a = 1' },
    ]);
    expect(
      collectExpressions({
        type: 'http',
        config: {
          method: 'GET',
          url: '=$u',
          headers: { 'X-Key': '=$k', plain: 'text' },
          query: { q: '=$q' },
          body: { list: ['=1', { 'a b': '=2' }] },
          credentialId: '=nope',
        },
      }),
    ).toEqual([
      { path: 'config.url', expression: '$u' },
      { path: 'config.headers["X-Key"]', expression: '$k' },
      { path: 'config.query.q', expression: '$q' },
      { path: 'config.body.list[0]', expression: '1' },
      { path: 'config.body.list[1]["a b"]', expression: '2' },
    ]);
    expect(collectExpressions({ type: 'log', config: { level: 'info', message: '="hi"' } })).toEqual([
      { path: 'config.message', expression: '"hi"' },
    ]);
    expect(collectExpressions({ type: 'subworkflow', config: { workflowId: '=id', input: { a: '=$' } } })).toEqual([
      { path: 'config.input.a', expression: '$' },
    ]);
    expect(collectExpressions({ type: 'code', config: { source: '=1' } })).toEqual([]);
    expect(collectExpressions({ type: 'bogus', config: { expression: 'x' } })).toEqual([]);
  });
});

describe('templates', () => {
  test.each(TEMPLATES.map((t) => [t.key, t] as const))('%s passes validation', (_key, template) => {
    expect(validateGraph({ nodes: template.nodes, edges: template.edges })).toMatchObject({ valid: true, errors: [] });
  });

  test('the expected templates exist and findTemplate returns copies', () => {
    expect(TEMPLATES.map((t) => t.key)).toEqual(['blank-start', 'webhook-echo', 'http-fetch', 'approval-flow', 'scheduled-report']);
    const copy = findTemplate('webhook-echo')!;
    copy.nodes[0].id = 'changed';
    expect(findTemplate('webhook-echo')!.nodes[0].id).toBe('webhook');
    expect(findTemplate('nope')).toBeNull();
  });
});

describe('topologicalOrder', () => {
  test('stable order: ties follow the node array', () => {
    const graph: WorkflowGraph = {
      nodes: ['d', 'b', 'start', 'c', 'a', 'm'].map((id) => ({
        id,
        type: id === 'start' ? 'start' : id === 'm' ? 'merge' : 'log',
        config: {},
      })),
      edges: [
        { source: 'start', target: 'c' },
        { source: 'start', target: 'a' },
        { source: 'a', target: 'm' },
        { source: 'c', target: 'm' },
        { source: 'm', target: 'b' },
        { source: 'ghost', target: 'b' },
      ],
    };
    expect(topologicalOrder(graph)).toEqual(['d', 'start', 'c', 'a', 'm', 'b']);
  });

  test('throws on a cycle', () => {
    const graph: WorkflowGraph = {
      nodes: [
        { id: 'a', type: 'merge', config: {} },
        { id: 'b', type: 'merge', config: {} },
      ],
      edges: [
        { source: 'a', target: 'b' },
        { source: 'b', target: 'a' },
      ],
    };
    expect(() => topologicalOrder(graph)).toThrow(/cycle.*a, b/);
  });
});

test('deploymentReadiness prefixes node and edge ids', () => {
  expect(deploymentReadiness(validateGraph(findTemplate('approval-flow')))).toEqual({ ready: true, blockers: [] });
  const report = validateGraph({ nodes: [log('a')], edges: [{ id: 'e', source: 'a', target: 'zz' }] });
  const readiness = deploymentReadiness(report);
  expect(readiness.ready).toBe(false);
  expect(readiness.blockers).toEqual([
    'edge "e": target "zz" is not a node of this graph',
    'the workflow has no trigger node (start, webhook or schedule)',
  ]);
  expect(deploymentReadiness(report)).toEqual(readiness);
});

describe('isJsonValue', () => {
  it('takes a plain object of another realm (a structuredClone under jest, a cached version graph)', () => {
    const cloned = structuredClone({ id: '=id', nested: [{ a: 1 }] });
    // Under jest the clone's prototype is the outer realm's Object.prototype, not this file's.
    expect(Object.getPrototypeOf(cloned)).not.toBe(Object.prototype);
    expect(isJsonValue(cloned)).toBe(true);
    expect(isJsonValue(Object.create(null))).toBe(true);
  });

  it('refuses class instances, dates, functions and non-finite numbers', () => {
    class Thing {
      a = 1;
    }
    for (const v of [new Thing(), new Date(0), () => 1, Number.NaN, Infinity, [undefined], { a: undefined }]) {
      expect(isJsonValue(v)).toBe(false);
    }
  });
});
