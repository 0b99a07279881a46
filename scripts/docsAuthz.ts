/**
 * Writes docs/authorization.md from the routes' access declarations (`npm run docs:authz`).
 * `--check` exits 1 when the committed file is stale instead of writing it.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { allRoutes } from '../api/app';
import { renderAuthorizationDoc } from '../api/http/authorization';

export const AUTHORIZATION_DOC = join(__dirname, '..', 'docs', 'authorization.md');

async function main(): Promise<void> {
  const text = renderAuthorizationDoc(allRoutes);
  if (process.argv.includes('--check')) {
    const current = await readFile(AUTHORIZATION_DOC, 'utf8').catch(() => '');
    if (current !== text) {
      process.stderr.write('docs/authorization.md is stale: run npm run docs:authz\n');
      process.exit(1);
    }
    return;
  }
  await writeFile(AUTHORIZATION_DOC, text);
}

if (require.main === module) void main();
