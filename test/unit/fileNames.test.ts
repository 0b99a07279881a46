/**
 * One naming convention for source files: camelCase (`runsClient.ts`, `f6SandboxFairness.test.ts`),
 * with dotted suffixes for roles (`.test.ts`, `.d.ts`). Migrations keep MikroORM's
 * `Migration<timestamp>_<name>.ts`, and fixtures are data named after what they hold. Names of
 * data files a process writes (`.data/temporal-dev-server.pid`) are not source files.
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';

const root = path.resolve(__dirname, '../..');
const CAMEL_CASE = /^[a-z][a-zA-Z0-9]*(\.[a-z][a-zA-Z0-9]*)*\.(ts|js)$/;
const EXEMPT = [/^db\/migrations\/Migration\d{14}_[a-z0-9_]+\.ts$/, /^test\/fixtures\//];

it('every TypeScript and JavaScript file of the repository is named in camelCase', () => {
  const files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '*.ts', '*.js'], {
    cwd: root,
    encoding: 'utf8',
  })
    .split('\n')
    .filter((f) => f !== '' && !EXEMPT.some((re) => re.test(f)));
  expect(files.length).toBeGreaterThan(100);
  expect(files.filter((f) => !CAMEL_CASE.test(path.basename(f)))).toEqual([]);
});
