/**
 * Raw SQL against the application database lives in one `store.ts` per area
 * (`services/<area>/store.ts`), so a route, an activity, a Temporal client or a use case never
 * writes SQL of its own. Read with TypeScript's own parser from every .ts file of the product
 * folders; db/migrations, scripts/ and test/ are not scanned.
 *
 * A raw SQL call is `.execute(…)` on an EntityManager, transaction or connection (`em`, `tx`,
 * `trx`, `fork`, `conn`, `connection`, reached through a path such as `opts.orm.em`, forked on the
 * spot as `em.fork()`, or anything reached through
 * `getConnection()`), and any `getKnex()` or `.raw(…)`. The pg client of services/databases
 * (`client.query`) is not counted: it runs the tenant's own database (their tables, their
 * queries), which is the product itself (docs/api/databases.md).
 */
import path from 'node:path';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import ts from 'typescript';

const root = path.resolve(__dirname, '../..');
const SCANNED = ['services', 'api', 'activities', 'temporal', 'main', 'engine', 'db'];
const EXEMPT = [/^db\/migrations\//, /^services\/[^/]+\/store\.ts$/];

// The handle may be reached through a path (`opts.orm.em`) or forked on the spot (`em.fork()`).
const DB_HANDLES = /(^|\.)(em|tx|trx|fork|conn|connection)$|\.fork\(\)$/;

const filesUnder = (dir: string): string[] =>
  readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    return statSync(full).isDirectory() ? filesUnder(full) : name.endsWith('.ts') ? [full] : [];
  });

/** `file:line what` for each raw SQL call of a source text. */
function rawSqlCalls(rel: string, text: string): string[] {
  const source = ts.createSourceFile(rel, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression)) {
      const method = node.expression.name.text;
      const receiver = node.expression.expression.getText(source).replace(/\s+/g, '').replace(/\?$/, '');
      const raw =
        method === 'getKnex' ||
        method === 'raw' ||
        (method === 'execute' && (DB_HANDLES.test(receiver) || /getConnection\(.*\)$/.test(receiver)));
      if (raw) {
        const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
        found.push(`${rel}:${line} ${receiver}.${method}(`);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

function scan(): Map<string, string[]> {
  const byFile = new Map<string, string[]>();
  for (const folder of SCANNED) {
    for (const file of filesUnder(path.join(root, folder))) {
      const rel = path.relative(root, file).split(path.sep).join('/');
      if (EXEMPT.some((re) => re.test(rel))) continue;
      const calls = rawSqlCalls(rel, readFileSync(file, 'utf8'));
      if (calls.length > 0) byFile.set(rel, calls);
    }
  }
  return byFile;
}

describe('raw SQL lives in services/<area>/store.ts', () => {
  const byFile = scan();

  test('the scanner recognises the raw SQL forms', () => {
    const sample = [
      'await em.execute("select 1");',
      'await tx.execute("select 1", [], "all");',
      'await em.getConnection().execute("select 1");',
      'await em\n  .getConnection()\n  .execute("select 1");',
      'const k = em.getKnex();',
      'em.getKnex().raw("now()");',
      'await tool.execute({ em }, args);',
      'await client.query("select 1");',
    ].join('\n');
    expect(rawSqlCalls('sample.ts', sample).map((c) => c.split(' ')[1])).toEqual([
      'em.execute(',
      'tx.execute(',
      'em.getConnection().execute(',
      'em.getConnection().execute(',
      'em.getKnex(',
      'em.getKnex().raw(',
      'em.getKnex(',
    ]);
  });

  test('no raw SQL outside a store', () => {
    expect([...byFile.values()].flat()).toEqual([]);
  });
});
