// Converter figures over the migration corpus, in a minute and without a stack: how many exports
// convert ready and how many nodes map, by calling the converter directly (no API, no Temporal,
// no n8n). Credentials are not judged here (the import judges them against a workspace), so
// "ready" is above what `npm run bench -- migration` reports for a workspace without credentials.
// The corpus comes from scripts/lib/n8nCorpus.ts (local mirrors; see docs/benchmarks.md, migration).
//   npx tsx scripts/extflowCoverage.ts [--top N]
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { convertExtflowWorkflow } from '../services/extflow/convert';
import type { ExtWorkflow } from '../services/extflow/types';
import { loadCorpus, type CorpusManifest } from './lib/n8nCorpus';

const MANIFEST = path.join(__dirname, 'bench', 'migrationCorpus.json');
const top = Number(process.argv[process.argv.indexOf('--top') + 1]) || 15;

function count<K>(map: Map<K, number>, key: K): void {
  map.set(key, (map.get(key) ?? 0) + 1);
}
const ranked = (map: Map<string, number>) =>
  [...map]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([k, n]) => `  ${n}\t${k}`)
    .join('\n');

async function main(): Promise<void> {
  const corpus = await loadCorpus(JSON.parse(await readFile(MANIFEST, 'utf8')) as CorpusManifest, (m) => process.stderr.write(`${m}\n`));
  for (const m of corpus.missing) process.stderr.write(`corpus: ${m}\n`);
  const seen = new Set<string>();
  let exports = 0;
  let ready = 0;
  let nodes = 0;
  let unmapped = 0;
  let refused = 0;
  const types = new Map<string, number>();
  const issues = new Map<string, number>();
  for (const entry of corpus.entries) {
    if (seen.has(entry.sha256)) continue;
    seen.add(entry.sha256);
    let parsed: unknown;
    try {
      parsed = JSON.parse(await readFile(entry.file, 'utf8'));
    } catch {
      continue;
    }
    if (!parsed || typeof parsed !== 'object' || !Array.isArray((parsed as { nodes?: unknown }).nodes)) continue;
    const wf = parsed as ExtWorkflow;
    exports++;
    try {
      const { conversion } = convertExtflowWorkflow(wf);
      if (conversion.ready) ready++;
      nodes += wf.nodes.filter((n) => n && n.type !== 'n8n-nodes-base.stickyNote').length;
      unmapped += conversion.unsupported.length;
      for (const u of conversion.unsupported) count(types, u.nodeType);
      for (const i of conversion.readinessIssues) count(issues, `${i.kind}: ${i.message.replace(/"[^"]*"/g, '"…"').slice(0, 100)}`);
    } catch {
      refused++; // invalid for the import too (two nodes of one name, say): a 4xx there
    }
  }
  const pct = (a: number, b: number) => `${((100 * a) / Math.max(1, b)).toFixed(1)} %`;
  process.stdout.write(
    [
      `exports ${exports}; ready (credentials not judged) ${ready} (${pct(ready, exports)}); refused as invalid ${refused}`,
      `nodes ${nodes}; mapped ${nodes - unmapped} (${pct(nodes - unmapped, nodes)})`,
      `unsupported node types:\n${ranked(types)}`,
      `readiness issues:\n${ranked(issues)}`,
      '',
    ].join('\n'),
  );
}

void main();
