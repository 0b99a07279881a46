/**
 * The external tool's expressions evaluated as JavaScript (services/extflow/jsExpressions.ts,
 * jsRuntime.ts): the globals and the data-transformation methods, run in the QuickJS executor of
 * the code sandbox, against the behaviour the external tool documents; and how the converter
 * chooses between an exact JSONata translation and JavaScript.
 */
import { toJsonata } from '../../../../services/extflow/expressions';
import { JsBatch, type JsMode } from '../../../../services/extflow/jsExpressions';
import { expandJsRuntime, JS_RUNTIME_DIRECTIVE } from '../../../../services/extflow/jsRuntime';
import { Unsupported } from '../../../../services/extflow/types';
import { executeCode, SANDBOX_DEFAULTS } from '../../../../services/kernel/sandbox/sandboxEngine';

const IDS: Record<string, string> = { Fetch: 'fetch', 'Set A': 'set_a', Never: 'never' };
const idOf = (name: string) => IDS[name];
// Roomy: a loaded machine must not turn a correct evaluation into a timeout.
const LIMITS = { ...SANDBOX_DEFAULTS, timeoutMs: 20_000 };

interface Context {
  input?: unknown;
  nodes?: Record<string, unknown>;
}

/** Evaluates templates as the converted code step does; answers the values, or the error message. */
async function run(templates: Array<string | [string, JsMode]>, context: Context = {}) {
  const batch = new JsBatch('node', idOf);
  const keys = templates.map((t) => (typeof t === 'string' ? batch.add(t, 'value') : batch.add(t[0], t[1])));
  const [ctxNode, jsNode] = batch.nodes({ prevNode: 'Fetch', workflow: { id: 'wf1', name: 'Orders' } }, 'Node');
  const names = Object.keys(context.nodes ?? {});
  expect(ctxNode?.config.expression).toContain('"input": $');
  const input = {
    input: context.input ?? {},
    nodes: context.nodes ?? {},
    known: Object.fromEntries([...names, 'Never'].map((n) => [n, true])),
    prevNode: 'Fetch',
    workflow: { id: 'wf1', name: 'Orders' },
  };
  const result = await executeCode(expandJsRuntime((jsNode?.config as { source: string }).source), JSON.stringify(input), LIMITS);
  if (!result.ok) return { error: result.error.message };
  const values = (result.output as { values: Record<string, unknown> }).values;
  return { values: keys.map((k) => values[/values\.(\w+)$/.exec(k)![1]!]) };
}

const one = async (template: string, context: Context = {}) => {
  const r = await run([template], context);
  if ('error' in r) throw new Error(r.error);
  return r.values[0];
};

describe('globals', () => {
  const input = { name: 'Ada', tags: ['a', 'b'], n: 4 };
  const nodes = { Fetch: { id: 7, rows: [{ v: 1 }, { v: 2 }] } };
  test.each([
    ['={{ $json.name }}', 'Ada'],
    ['={{ $binary }}', {}],
    ['={{ $input.item.json.n }}', 4],
    ['={{ $input.all().length }}', 1],
    ['={{ $input.first().json.name + $input.last().json.n }}', 'Ada4'],
    ["={{ $('Fetch').item.json.id }}", 7],
    ["={{ $('Fetch').first().json.rows[1].v }}", 2],
    ["={{ $('Fetch').last().json.id }}", 7],
    ["={{ $('Fetch').all().map(i => i.json.id) }}", [7]],
    ["={{ $('Fetch').itemMatching(0).json.id }}", 7],
    ["={{ $('Fetch').isExecuted }}", true],
    ['={{ $node["Fetch"].json.id }}', 7],
    ['={{ $items("Fetch")[0].json.id }}', 7],
    ['={{ $items()[0].json.name }}', 'Ada'],
    ['={{ $prevNode.name }}', 'Fetch'],
    ['={{ $runIndex + $itemIndex }}', 0],
    ['={{ $workflow.id + ":" + $workflow.name }}', 'wf1:Orders'],
    ['={{ $jmespath($json, "tags[0]") }}', 'a'],
    ['={{ $jmespath($("Fetch").first().json, "rows[*].v") }}', [1, 2]],
    ['={{ $if($json.n > 3, "big", "small") }}', 'big'],
    ['={{ $ifEmpty($json.missing, "default") }}', 'default'],
    ['={{ $ifEmpty([], "default") }}', 'default'],
    ['={{ $ifEmpty("x", "default") }}', 'x'],
    ['=Hello {{ $json.name }}, tags {{ $json.tags }}, none {{ $json.missing }}!', 'Hello Ada, tags ["a","b"], none !'],
    ['={{ `${$json.name}!` }}', 'Ada!'],
    ['={{ $json.tags.map((t) => t.toUpperCase()).join("-") }}', 'A-B'],
  ])('%s', async (template, expected) => {
    expect(await one(template, { input, nodes })).toEqual(expected);
  });

  test('$now and $today are DateTimes of the run, rendered as ISO text when they leave the expression', async () => {
    const r = await run(['={{ $now }}', '={{ $today }}', '={{ $now.startOf("day").toMillis() === $today.toMillis() }}']);
    if ('error' in r) throw new Error(r.error);
    const [n, t, same] = r.values as [string, string, boolean];
    expect(n).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(t).toMatch(/^\d{4}-\d\d-\d\dT00:00:00\.000Z$/);
    expect(same).toBe(true);
    expect(n.slice(0, 10)).toBe(t.slice(0, 10));
  });

  test('$env is refused with a message that says why and what to do', async () => {
    const r = await run(['={{ $env.API_KEY }}']);
    expect(r).toEqual({ error: expect.stringContaining('$env is refused: expressions cannot read environment variables here') });
  });

  test('$vars, $execution and $secrets fail saying they have no equivalent', async () => {
    for (const t of ['={{ $vars.region }}', '={{ $execution.id }}', '={{ $secrets.vault.key }}']) {
      const r = await run([t]);
      expect(r).toEqual({ error: expect.stringMatching(/\$(vars|execution|secrets) (has no equivalent|is not available)/) });
    }
  });

  test('a node that has not run answers as the external tool does', async () => {
    const r = await run(["={{ $('Never').first().json.x }}"]);
    expect(r).toEqual({ error: expect.stringContaining('Referenced node "Never" is unexecuted') });
    expect(await one("={{ $('Never').isExecuted }}")).toBe(false);
  });

  test('the failing expression is named in the error', async () => {
    const r = await run(['={{ $json.a.b.c }}']);
    expect(r).toEqual({ error: expect.stringContaining('Expression {{ $json.a.b.c }} failed: cannot read property') });
  });
});

describe('data-transformation methods', () => {
  test.each([
    // strings
    ['={{ "".isEmpty() }}', true],
    ['={{ "a".isNotEmpty() }}', true],
    ['={{ "https://www.example.com/path?q=1".extractDomain() }}', 'www.example.com'],
    ['={{ "ada@example.org".extractDomain() }}', 'example.org'],
    ['={{ "write to ada@example.org today".extractEmail() }}', 'ada@example.org'],
    ['={{ "see https://example.com/a and more".extractUrl() }}', 'https://example.com/a'],
    ['={{ "https://example.com/a/b?c=1".extractUrlPath() }}', '/a/b'],
    ['={{ "ada@example.org".isEmail() }}', true],
    ['={{ "not an email".isEmail() }}', false],
    ['={{ "https://example.com".isUrl() }}', true],
    ['={{ "example.com".isDomain() }}', true],
    ['={{ "12.5".isNumeric() }}', true],
    ['={{ "12.5".toNumber() + 1 }}', 13.5],
    ['={{ "hello big world".toTitleCase() }}', 'Hello Big World'],
    ['={{ "HELLO world".toSentenceCase() }}', 'Hello world'],
    ['={{ "Hello Big World".toSnakeCase() }}', 'hello_big_world'],
    ['={{ "hello big world".toCamelCase() }}', 'helloBigWorld'],
    ['={{ "<p>Hi <b>there</b></p>".removeTags() }}', 'Hi there'],
    ['={{ "**bold** and [a link](https://x.y)".removeMarkdown() }}', 'bold and a link'],
    ['={{ "Crème brûlée".replaceSpecialChars() }}', 'Creme brulee'],
    ['={{ "a b&c".urlEncode(true) }}', 'a%20b%26c'],
    ['={{ "héllo".base64Encode() }}', 'aMOpbGxv'],
    ['={{ "aMOpbGxv".base64Decode() }}', 'héllo'],
    ['={{ "true".toBoolean() && !"0".toBoolean() }}', true],
    ['={{ \'{"a":1}\'.parseJson().a }}', 1],
    ['={{ "2024-03-05T10:20:30Z".toDateTime().toFormat("yyyy-MM-dd HH:mm") }}', '2024-03-05 10:20'],
    ['={{ "05/03/2024".toDateTime("dd/MM/yyyy").toISODate() }}', '2024-03-05'],
    // numbers
    ['={{ (1.2345).round(2) }}', 1.23],
    ['={{ (4).isEven() && (3).isOdd() }}', true],
    ['={{ (1.5).floor() + (1.5).ceil() }}', 3],
    ['={{ (1709634030).toDateTime("s").toISO() }}', '2024-03-05T10:20:30.000Z'],
    ['={{ (1234567).format() }}', '1,234,567'],
    // arrays
    ['={{ [1, 2, 3].sum() }}', 6],
    ['={{ [1, 2, 3].average() }}', 2],
    ['={{ [4, 1, 9].max() - [4, 1, 9].min() }}', 8],
    ['={{ [].isEmpty() && [1].isNotEmpty() }}', true],
    ['={{ [1, 2, 3].first() + [1, 2, 3].last() }}', 4],
    ['={{ [1, 1, 2, { a: 1 }, { a: 1 }].removeDuplicates() }}', [1, 2, { a: 1 }]],
    ['={{ [{ id: 1, n: "a" }, { id: 1, n: "b" }].removeDuplicates("id") }}', [{ id: 1, n: 'a' }]],
    ['={{ [0, null, "", 1, undefined].compact() }}', [0, 1]],
    ['={{ [{ a: 1, b: 2 }, { a: 3 }].pluck("a") }}', [1, 3]],
    ['={{ [1, 2, 3, 4, 5].chunk(2) }}', [[1, 2], [3, 4], [5]]],
    ['={{ [1, 2, 3].difference([2]) }}', [1, 3]],
    ['={{ [1, 2, 3].intersection([2, 3, 4]) }}', [2, 3]],
    ['={{ [1, 2].union([2, 3]) }}', [1, 2, 3]],
    ['={{ [{ a: 1 }, { b: 2 }].merge() }}', { a: 1, b: 2 }],
    ['={{ [{ k: "x", v: 1 }, { k: "y", v: 2 }].smartJoin("k", "v") }}', { x: 1, y: 2 }],
    // objects
    ['={{ ({}).isEmpty() && ({ a: 1 }).isNotEmpty() }}', true],
    ['={{ ({ a: 1 }).hasField("a") }}', true],
    ['={{ ({ a: 1, b: 2 }).removeField("a") }}', { b: 2 }],
    ['={{ ({ a: 1, b: null, c: "" }).compact() }}', { a: 1 }],
    ['={{ ({ a: 1, b: "x y" }).urlEncode() }}', 'a=1&b=x%20y'],
    ['={{ ({ a: 1 }).keys().concat(({ a: 1 }).values()) }}', ['a', 1]],
    ['={{ ({ a: 1 }).toJsonString() }}', '{"a":1}'],
    // dates (Luxon)
    ['={{ DateTime.fromISO("2024-01-31T12:00:00Z").plus({ months: 1 }).toISODate() }}', '2024-02-29'],
    ['={{ DateTime.fromISO("2024-03-05T10:20:30Z").minus(2, "days").toISO() }}', '2024-03-03T10:20:30.000Z'],
    ['={{ DateTime.fromISO("2024-03-05T10:20:30Z").startOf("month").toISO() }}', '2024-03-01T00:00:00.000Z'],
    ['={{ DateTime.fromISO("2024-03-05T10:20:30Z").endOf("day").toISO() }}', '2024-03-05T23:59:59.999Z'],
    ['={{ DateTime.fromISO("2024-03-05T10:20:30Z").startOf("week").toISODate() }}', '2024-03-04'],
    ['={{ DateTime.fromISO("2024-03-05T10:20:30Z").toFormat("EEEE d LLLL yyyy, h:mm a") }}', 'Tuesday 5 March 2024, 10:20 AM'],
    ['={{ DateTime.fromISO("2024-03-05T10:20:30+02:00").toISO() }}', '2024-03-05T10:20:30.000+02:00'],
    ['={{ DateTime.fromISO("2024-03-05T10:20:30Z").setZone("+05:30").toFormat("HH:mm ZZ") }}', '15:50 +05:30'],
    ['={{ DateTime.fromISO("2024-03-10").diff(DateTime.fromISO("2024-03-05"), "days").days }}', 5],
    ['={{ DateTime.fromISO("2024-03-05").weekday }}', 2],
    ['={{ DateTime.fromISO("2024-03-09").isWeekend() }}', true],
    ['={{ DateTime.fromISO("2024-03-05").isBetween("2024-03-01", "2024-03-31") }}', true],
    ['={{ DateTime.fromISO("2024-03-05").extract("month") }}', 3],
    ['={{ DateTime.fromISO("2024-03-05").toLocaleString(DateTime.DATE_MED) }}', 'Mar 5, 2024'],
    ['={{ DateTime.fromISO("not a date").isValid }}', false],
  ])('%s', async (template, expected) => {
    expect(await one(template)).toEqual(expected);
  });

  test('a named time zone is refused rather than guessed', async () => {
    const r = await run(['={{ $now.setZone("Europe/Berlin").hour }}']);
    expect(r).toEqual({ error: expect.stringContaining('Time zone "Europe/Berlin" is not available here') });
  });
});

describe('modes', () => {
  test('boolean mode uses JavaScript truthiness (an empty array is true)', async () => {
    expect(
      await run([
        ['={{ [] }}', 'boolean'],
        ['={{ "" }}', 'boolean'],
      ]),
    ).toEqual({ values: [true, false] });
  });
  test('json mode renders the template, then parses it (raw-mode Set)', async () => {
    const r = await run([['={ "name": "{{ $json.name.toUpperCase() }}", "n": {{ $json.n * 2 }} }', 'json']], {
      input: { name: 'ada', n: 2 },
    });
    expect(r).toEqual({ values: [{ name: 'ADA', n: 4 }] });
  });
  test('json mode fails clearly on text that is not JSON', async () => {
    const r = await run([['={ "name": {{ $json.name }} }', 'json']], { input: { name: 'ada' } });
    expect(r).toEqual({ error: expect.stringContaining('the JSON output is not valid JSON') });
  });
});

describe('choosing between JSONata and JavaScript', () => {
  const scopeWith = () => {
    const batch = new JsBatch('node', idOf);
    return { batch, scope: { idOf, js: (t: string, m: JsMode) => batch.add(t, m) } };
  };

  test('an exact translation stays JSONata; an untranslatable one reads the code step', () => {
    const { batch, scope } = scopeWith();
    expect(toJsonata('={{ $json.name }}', scope)).toBe('$input.name');
    expect(toJsonata('={{ $json.name.isEmpty() }}', scope)).toBe('$nodes.node__js.values.e0');
    expect(toJsonata("={{ $('Fetch').first().json.x.extractDomain() }}", scope)).toBe('$nodes.node__js.values.e1');
    // The same template twice is evaluated once.
    expect(toJsonata('={{ $json.name.isEmpty() }}', scope)).toBe('$nodes.node__js.values.e0');
    expect(batch.size).toBe(2);
    const [ctxNode, jsNode] = batch.nodes({ prevNode: undefined, workflow: { id: null, name: 'W' } }, 'Node');
    expect(ctxNode?.config.expression).toContain('"Fetch": $nodes.fetch');
    // The graph names the runtime rather than carrying it: runs and graphs stay small.
    const source = String(jsNode?.config.source);
    expect(source.startsWith(`${JS_RUNTIME_DIRECTIVE}\n`)).toBe(true);
    expect(source.length).toBeLessThan(3000);
    expect(expandJsRuntime(source)).toContain('const __rt = ');
    expect(expandJsRuntime('return 1;')).toBe('return 1;');
  });

  test('without a JavaScript scope the old refusal stands', () => {
    expect(() => toJsonata('={{ $json.name.isEmpty() }}', { idOf })).toThrow(Unsupported);
  });

  test('a node name that is not in the workflow, a computed one, or a syntax error is refused at import', () => {
    const { scope } = scopeWith();
    expect(() => toJsonata("={{ $('Nope').first().json.x.isEmpty() }}", scope)).toThrow(/references node "Nope"/);
    expect(() => toJsonata('={{ $($json.node).first().json.x }}', scope)).toThrow(/computed value/);
    expect(() => toJsonata('={{ $json.a + }}', scope)).toThrow(/not a JavaScript expression/);
  });

  test('nesting past the translator goes to JavaScript; past any parser it is refused, not a crash', () => {
    const { batch, scope } = scopeWith();
    expect(toJsonata(`={{ ${'['.repeat(150)}1${']'.repeat(150)} }}`, scope)).toBe('$nodes.node__js.values.e0');
    expect(batch.size).toBe(1);
    expect(() => toJsonata(`={{ ${'['.repeat(20_000)}${']'.repeat(20_000)} }}`, scope)).toThrow(/nested too deeply/);
    // Without JavaScript the translator refuses it instead of overflowing its stack.
    expect(() => toJsonata(`={{ ${'['.repeat(3000)}${']'.repeat(3000)} }}`, { idOf })).toThrow(/nested deeper than 100 levels/);
  });

  test('refused globals are named for the report', () => {
    const { batch, scope } = scopeWith();
    toJsonata('={{ $env.TOKEN }}', scope);
    expect(batch.refusals).toEqual([expect.stringContaining('$env is refused')]);
  });
});
