import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import lazyPackages from '../../../services/kernel/lazyPackages.json';

const ROOT = path.resolve(__dirname, '../../..');

/**
 * The packages one fresh Node.js process has loaded after requiring each of `entries` in turn
 * (cumulative, under tsx, as `npm run start:api` runs them). A child process, because jest's
 * module registry is not Node's: what matters is what the API and worker processes load.
 */
async function packagesLoadedAfter(entries: string[]): Promise<string[][]> {
  const script = `
    const loaded = () => {
      const names = Object.keys(require.cache).map((f) => (f.match(/node_modules\\/((?:@[^/]+\\/)?[^/]+)\\//g) ?? []).pop());
      return [...new Set(names.filter(Boolean).map((m) => m.slice('node_modules/'.length, -1)))];
    };
    const after = [];
    for (const entry of ${JSON.stringify(entries)}) {
      require(require('node:path').resolve(entry));
      after.push(loaded());
    }
    process.stdout.write(JSON.stringify(after));
  `;
  const { stdout } = await promisify(execFile)(process.execPath, ['--require', 'tsx/cjs', '-e', script], {
    cwd: ROOT,
    maxBuffer: 16 * 1024 * 1024,
  });
  return JSON.parse(stdout) as string[][];
}

const isLazy = (name: string) => lazyPackages.some((lazy) => name === lazy || name.startsWith(`${lazy}/`));

// Issue 28 point 5 and issue 30 point 5: these load where they are used (services/kernel/lazyModule.ts).
test('starting the API loads neither the heavy packages nor the Temporal worker; the worker loads no heavy package', async () => {
  const [api, both] = await packagesLoadedAfter(['main/api.ts', 'main/worker.ts']);
  // The check sees packages at all (the ORM and Temporal's client are always loaded).
  expect(api).toEqual(expect.arrayContaining(['@mikro-orm/core', '@temporalio/client', 'zod']));
  expect(both).toContain('@temporalio/worker');
  expect(api!.filter((name) => isLazy(name) || name === '@temporalio/worker' || name === '@temporalio/core-bridge')).toEqual([]);
  expect(both!.filter(isLazy)).toEqual([]);
}, 120_000);
