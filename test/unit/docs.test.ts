/**
 * The documentation a newcomer reads: the README fits on a screen, no link leaves the
 * repository (the clone is all a reader has), every relative link resolves, and every API area
 * (one file in api/routes/) has its page under docs/api/.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

const ROOT = resolve(__dirname, '..', '..');

function markdownUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return markdownUnder(path);
    return name.endsWith('.md') ? [path] : [];
  });
}

const DOCS = [join(ROOT, 'README.md'), join(ROOT, 'CONTRIBUTING.md'), ...markdownUnder(join(ROOT, 'docs'))];
const rel = (path: string) => relative(ROOT, path).split(sep).join('/');

/** Text outside fenced code blocks and inline code spans, where a link is a link. */
function prose(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '').replace(/`[^`\n]*`/g, '');
}

/** Targets of inline links `[text](target)`, images and autolinks `<scheme:…>`. */
function linkTargets(markdown: string): string[] {
  const text = prose(markdown);
  const targets: string[] = [];
  for (const m of text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) targets.push(m[1]);
  for (const m of text.matchAll(/<([a-z][a-z0-9+.-]*:[^>\s]+)>/gi)) targets.push(m[1]);
  return targets;
}

const isWeb = (target: string) => /^https?:\/\//i.test(target) || /^mailto:/i.test(target);

test('README.md fits in 8 KB', () => {
  expect(readFileSync(join(ROOT, 'README.md')).length).toBeLessThanOrEqual(8192);
});

test('no document points at files outside the repository', () => {
  const outside: string[] = [];
  for (const file of DOCS) {
    const text = readFileSync(file, 'utf8');
    // Sibling folders of a checkout (the contract, the design notes) and machine paths are not in a clone.
    for (const m of text.matchAll(
      /(?:\.\.\/)+(?:shared|\.library)\b[^\s)`'"]*|(?<![\w.~-])\/(?:work|root|home|Users|tmp\/bash_jobs)\/[^\s)`'"]*/g,
    )) {
      outside.push(`${rel(file)}: ${m[0]}`);
    }
    for (const target of linkTargets(text)) {
      if (isWeb(target) || target.startsWith('#')) continue;
      const path = decodeURIComponent(target.split('#')[0]);
      if (/^[a-z][a-z0-9+.-]*:/i.test(path) || path.startsWith('/')) {
        outside.push(`${rel(file)}: ${target}`);
        continue;
      }
      const resolved = resolve(dirname(file), path);
      if (resolved !== ROOT && !resolved.startsWith(ROOT + sep)) outside.push(`${rel(file)}: ${target}`);
    }
  }
  expect(outside).toEqual([]);
});

test('every relative link resolves to a file or folder of the repository', () => {
  const broken: string[] = [];
  for (const file of DOCS) {
    for (const target of linkTargets(readFileSync(file, 'utf8'))) {
      if (isWeb(target) || target.startsWith('#') || /^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
      const path = decodeURIComponent(target.split('#')[0]);
      if (!existsSync(resolve(dirname(file), path))) broken.push(`${rel(file)}: ${target}`);
    }
  }
  expect(broken).toEqual([]);
});

test('every source file the documents name exists (benchmarks.md keeps historical names)', () => {
  // A path such as `services/runs/execute.ts` in prose is a promise to the reader; a rename must update it.
  const sourcePath = /(?<![\w/.-])((?:api|services|db|engine|temporal|activities|main|scripts|test)\/[\w./-]*\.ts)\b/g;
  const stale: string[] = [];
  for (const file of DOCS.filter((f) => !f.endsWith(`${sep}benchmarks.md`))) {
    for (const m of readFileSync(file, 'utf8').matchAll(sourcePath)) {
      if (!existsSync(join(ROOT, m[1]))) stale.push(`${rel(file)}: ${m[1]}`);
    }
  }
  expect(stale).toEqual([]);
});

describe('docs/api', () => {
  const areas = readdirSync(join(ROOT, 'api', 'routes'))
    .filter((name) => name.endsWith('.ts'))
    .map((name) => name.slice(0, -'.ts'.length));
  const apiDir = join(ROOT, 'docs', 'api');
  const pages = readdirSync(apiDir).filter((name) => name.endsWith('.md') && name !== 'README.md');
  const index = readFileSync(join(apiDir, 'README.md'), 'utf8');

  test('the route areas are found', () => {
    expect(areas).toEqual(expect.arrayContaining(['workflows', 'runs', 'health']));
  });

  test.each(areas)('area %s has a page naming its route file, listed in the index', (area) => {
    const page = pages.find((name) => readFileSync(join(apiDir, name), 'utf8').includes(`api/routes/${area}.ts`));
    expect({ area, page }).toEqual({ area, page: expect.any(String) });
    expect(index).toContain(`\`${area}\``);
    expect(index).toContain(`](${page})`);
  });

  test('every page is linked from the index', () => {
    for (const page of pages) expect({ page, linked: index.includes(`](${page})`) }).toEqual({ page, linked: true });
  });
});
