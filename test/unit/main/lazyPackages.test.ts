import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import lazyPackages from '../../../services/kernel/lazyPackages.json';

const ROOT = path.resolve(__dirname, '../../..');

/**
 * The packages a fresh Node.js process has loaded after requiring `entries` (under tsx, as
 * `npm run start:api` runs them). A child process, because jest's module registry is not
 * Node's: what matters is what the API and worker processes load at start-up.
 */
async function packagesLoadedBy(entries: string[]): Promise<string[]> {
  const script = `
    for (const entry of ${JSON.stringify(entries)}) require(require('node:path').resolve(entry));
    const names = Object.keys(require.cache).map((f) => (f.match(/node_modules\\/((?:@[^/]+\\/)?[^/]+)\\//g) ?? []).pop());
    process.stdout.write(JSON.stringify([...new Set(names.filter(Boolean).map((m) => m.slice('node_modules/'.length, -1)))]));
  `;
  const { stdout } = await promisify(execFile)(process.execPath, ['--require', 'tsx/cjs', '-e', script], {
    cwd: ROOT,
    maxBuffer: 16 * 1024 * 1024,
  });
  return JSON.parse(stdout) as string[];
}

// Issue 28 point 5 and issue 30 point 5: these load where they are used (services/kernel/lazyModule.ts).
test('starting the API and the worker loads none of the heavy packages', async () => {
  const loaded = await packagesLoadedBy(['main/api.ts', 'main/worker.ts', 'api/app.ts', 'main/wiring.ts', 'main/services.ts']);
  // The check sees packages at all (the ORM and Temporal's client are always loaded).
  expect(loaded).toEqual(expect.arrayContaining(['@mikro-orm/core', '@temporalio/client', 'zod']));
  expect(loaded.filter((name) => lazyPackages.some((lazy) => name === lazy || name.startsWith(`${lazy}/`)))).toEqual([]);
}, 120_000);
