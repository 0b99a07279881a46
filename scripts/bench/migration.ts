/**
 * `npm run bench -- migration`: how well n8n exports migrate, measured against n8n itself
 * (issue 29 point 7).
 *
 * 1. The corpus of scripts/bench/migrationCorpus.json (public exports, pinned by commit,
 *    materialized under ~/.cache/svc-n8n/corpus by scripts/lib/n8nCorpus.ts).
 * 2. Every export is previewed through our API (`POST /api/v1/workflows/import-preview` with
 *    `importJson`): accepted (200), ready (`conversion.ready`), node coverage (mapped nodes over
 *    nodes, sticky notes left out as the converter does), the unsupported node types.
 * 3. The exports runnable offline (scripts/lib/n8nCorpus.ts `runnableOffline`) get a reference
 *    run on n8n (scripts/lib/n8nReference.ts; recorded once per export and n8n version, in the
 *    cache; BENCH_N8N=off uses only what is recorded).
 * 4. Those that are also ready are imported (`POST /api/v1/workflows` with `importJson`),
 *    deployed and executed as live runs on Temporal, and each n8n node's items are compared with
 *    our node's output (scripts/lib/n8nParity.ts). Those whose every node mapped but that are not
 *    ready (readiness issues only) run too and are counted apart.
 *
 * Prints the table and writes it between the migration markers of docs/benchmarks.md (with
 * BENCH_DOCS=off it does not), and the details to bench-results/migration-<timestamp>.json.
 */
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { loadCorpus, runnableOffline, type CorpusEntry, type CorpusManifest } from '../lib/n8nCorpus';
import { N8N_VERSION, readReference, recordReferences, type StoredReference } from '../lib/n8nReference';
import { compareWorkflow, type OurStep, type WorkflowComparison } from '../lib/n8nParity';
import { benchEnvironment, envNumber, writeResults, type BenchContext } from './report';
import { pool } from './shared';
import { startBenchStack, type BenchStack } from './stack';

const ROOT = path.resolve(__dirname, '..', '..');
const MANIFEST = path.join(__dirname, 'migrationCorpus.json');
const DOCS = path.join(ROOT, 'docs', 'benchmarks.md');
const BEGIN = '<!-- migration:begin (written by npm run bench -- migration) -->';
const END = '<!-- migration:end -->';

interface Conversion {
  ready: boolean;
  nodeCount: number;
  mappedNodes: number;
  unsupported: Array<{ node: string; nodeType: string }>;
  readinessIssues: Array<{ kind: string }>;
}

interface Preview {
  key: string;
  status: number;
  accepted: boolean;
  ready: boolean;
  nodeCount: number;
  mappedNodes: number;
  unsupportedTypes: string[];
  error: string | null;
}

interface ParityResult {
  key: string;
  outcome: 'equal' | 'differs' | 'not-run';
  runStatus: string | null;
  n8nStatus: string;
  firstDifference: string | null;
  nodes: WorkflowComparison['nodes'];
}

async function call(
  stack: BenchStack,
  method: string,
  url: string,
  body?: unknown,
): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(`${stack.apiUrl}${url}`, {
    method,
    headers: { authorization: `Bearer ${stack.workspace.apiKey}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = ((await res.json().catch(() => null)) ?? {}) as Record<string, unknown>;
  return { status: res.status, json };
}

async function preview(stack: BenchStack, entry: CorpusEntry, text: string): Promise<Preview> {
  const { status, json } = await call(stack, 'POST', '/api/v1/workflows/import-preview', { importJson: text });
  const conversion = (json.importReadiness as { conversion?: Conversion } | undefined)?.conversion;
  if (status !== 200 || !conversion) {
    return {
      key: entry.key,
      status,
      accepted: false,
      ready: false,
      nodeCount: 0,
      mappedNodes: 0,
      unsupportedTypes: [],
      error: typeof json.error === 'string' ? json.error : `status ${status}`,
    };
  }
  return {
    key: entry.key,
    status,
    accepted: true,
    ready: conversion.ready,
    nodeCount: conversion.nodeCount,
    mappedNodes: conversion.mappedNodes,
    unsupportedTypes: [...new Set(conversion.unsupported.map((u) => u.nodeType))],
    error: null,
  };
}

const TERMINAL = new Set(['succeeded', 'failed', 'canceled']);

/** Imports, deploys and runs one export live; compares with n8n's reference. */
async function runForParity(
  stack: BenchStack,
  entry: CorpusEntry,
  text: string,
  reference: StoredReference,
  drainMs: number,
): Promise<ParityResult> {
  const base = { key: entry.key, n8nStatus: reference.status };
  const notRun = (why: string): ParityResult => ({ ...base, outcome: 'not-run', runStatus: null, firstDifference: why, nodes: [] });
  const created = await call(stack, 'POST', '/api/v1/workflows', { importJson: text });
  const workflow = created.json.workflow as { id: string; nodes: Array<{ id: string; name?: string; type: string }> } | undefined;
  if (created.status !== 201 || !workflow)
    return notRun(`import answered ${created.status}: ${JSON.stringify(created.json).slice(0, 300)}`);
  const deployed = await call(stack, 'POST', `/api/v1/workflows/${workflow.id}/deploy`);
  if (deployed.status >= 300) return notRun(`deploy answered ${deployed.status}: ${JSON.stringify(deployed.json).slice(0, 300)}`);
  const executed = await call(stack, 'POST', `/api/v1/workflows/${workflow.id}/execute`, {});
  const runId = (executed.json.run as { id?: string } | undefined)?.id;
  if (executed.status !== 202 || !runId)
    return notRun(`execute answered ${executed.status}: ${JSON.stringify(executed.json).slice(0, 300)}`);
  const deadline = Date.now() + drainMs;
  let run: { status: string; steps?: OurStep[] } = { status: 'queued' };
  while (!TERMINAL.has(run.status)) {
    if (Date.now() > deadline) return { ...notRun(`run ${runId} not finished after ${drainMs} ms (${run.status})`), runStatus: run.status };
    await new Promise((r) => setTimeout(r, 250));
    const got = await call(stack, 'GET', `/api/v1/runs/${runId}`);
    run = (got.json.run as typeof run | undefined) ?? run;
  }
  const steps = new Map((run.steps ?? []).map((s) => [s.nodeId, s]));
  // Our node holding what an n8n node outputs: the node of its name with the plain id (no
  // `__role` suffix); for a manual trigger its `__item` transform, which emits the empty item.
  const plainIdByName = new Map(workflow.nodes.filter((n) => !n.id.includes('__') && n.name).map((n) => [n.name!, n.id]));
  const stepFor = (name: string): OurStep | undefined => {
    const id = plainIdByName.get(name);
    if (!id) return undefined;
    return steps.get(`${id}__item`) ?? steps.get(id);
  };
  const exported = JSON.parse(text) as { nodes?: Array<{ name?: string; type?: string }> };
  const ignore = new Set((exported.nodes ?? []).filter((n) => n.type === 'n8n-nodes-base.stickyNote').map((n) => String(n.name)));
  const comparison = compareWorkflow(reference, run.status, stepFor, ignore);
  return {
    ...base,
    outcome: comparison.equal ? 'equal' : 'differs',
    runStatus: run.status,
    firstDifference: comparison.firstDifference,
    nodes: comparison.nodes,
  };
}

const pct = (n: number, d: number) => (d === 0 ? 'n/a' : `${((100 * n) / d).toFixed(1)} %`);

export async function migrationScenario(ctx: BenchContext): Promise<void> {
  const { log } = ctx;
  const date = new Date();
  const manifest = JSON.parse(await readFile(MANIFEST, 'utf8')) as CorpusManifest;
  const corpus = await loadCorpus(manifest, log);
  for (const m of corpus.missing) log(`corpus: ${m}`);
  if (corpus.entries.length === 0) throw new Error('the corpus is empty: see the lines above');
  const texts = new Map<string, string>();
  for (const e of corpus.entries) texts.set(e.key, await readFile(e.file, 'utf8'));
  // A repository's other JSON files (package metadata, indexes) are not exports: an export is an
  // object with a nodes[] array, whatever else is wrong with it.
  const isExport = (text: string) => {
    try {
      const v = JSON.parse(text) as { nodes?: unknown };
      return v !== null && typeof v === 'object' && Array.isArray(v.nodes);
    } catch {
      return false;
    }
  };
  const jsonFiles = corpus.entries.length;
  // The same export published twice (in one repository or two) counts once.
  const seen = new Set<string>();
  const entries = corpus.entries.filter((e) => isExport(texts.get(e.key)!) && !seen.has(e.sha256) && seen.add(e.sha256));
  const offline = entries.filter((e) => {
    try {
      return runnableOffline(JSON.parse(texts.get(e.key)!)).ok;
    } catch {
      return false;
    }
  });
  log(`corpus: ${jsonFiles} JSON files, ${entries.length} exports, ${offline.length} runnable offline`);

  // n8n first: it needs no stack, and a failure to install it should not cost a stack start.
  let n8nProblem: string | null = null;
  const references = new Map<string, StoredReference>();
  const useN8n = (process.env.BENCH_N8N ?? 'on') !== 'off';
  const missingRefs: CorpusEntry[] = [];
  for (const e of offline) {
    const ref = await readReference(texts.get(e.key)!);
    if (ref) references.set(e.key, ref);
    else missingRefs.push(e);
  }
  if (missingRefs.length > 0 && useN8n) {
    try {
      const r = await recordReferences(
        missingRefs.map((e) => ({ key: e.key, text: texts.get(e.key)! })),
        log,
      );
      log(`n8n ${N8N_VERSION}: ${r.recorded} reference run(s) recorded, ${r.failed} failed on n8n, ${r.refused} refused by its import`);
      for (const e of missingRefs) {
        const ref = await readReference(texts.get(e.key)!);
        if (ref) references.set(e.key, ref);
      }
    } catch (err) {
      n8nProblem = err instanceof Error ? err.message : String(err);
      log(`n8n reference runs failed: ${n8nProblem}`);
    }
  } else if (missingRefs.length > 0) {
    n8nProblem = `BENCH_N8N=off and ${missingRefs.length} reference(s) not recorded`;
  }

  const environment = await benchEnvironment();
  let stack: BenchStack | null = null;
  try {
    stack = await startBenchStack(log);
    const s = stack;
    const concurrency = envNumber('BENCH_CONCURRENCY', 4);
    log(`previewing ${entries.length} exports (concurrency ${concurrency})`);
    const previews = await pool(entries, concurrency, (e) => preview(s, e, texts.get(e.key)!), ctx);
    const byKey = new Map(previews.map((p) => [p.key, p]));

    // Besides the ready ones, those whose every node mapped but that readiness holds back (a
    // lossy conversion, an option not carried over) run too, apart: whether they differ says
    // whether the readiness issue was worth raising.
    const fullyMapped = (p: Preview | undefined) => !!p && p.accepted && p.unsupportedTypes.length === 0 && p.mappedNodes === p.nodeCount;
    const parityCandidates = offline.filter((e) => references.has(e.key) && (byKey.get(e.key)?.ready || fullyMapped(byKey.get(e.key))));
    log(`running ${parityCandidates.length} offline workflows with an n8n reference (ready, or every node mapped)`);
    const drainMs = envNumber('BENCH_DRAIN_S', 120) * 1000;
    const allParity = await pool(parityCandidates, 2, (e) => runForParity(s, e, texts.get(e.key)!, references.get(e.key)!, drainMs), ctx);
    const parity = allParity.filter((p) => byKey.get(p.key)?.ready);
    const heldBack = allParity.filter((p) => !byKey.get(p.key)?.ready);
    const heldBackEqual = heldBack.filter((p) => p.outcome === 'equal').length;

    const accepted = previews.filter((p) => p.accepted).length;
    const ready = previews.filter((p) => p.ready).length;
    const nodes = previews.reduce((a, p) => a + p.nodeCount, 0);
    const mapped = previews.reduce((a, p) => a + p.mappedNodes, 0);
    const fiveXX = previews.filter((p) => p.status >= 500).length;
    const equal = parity.filter((p) => p.outcome === 'equal').length;
    const differs = parity.filter((p) => p.outcome === 'differs').length;
    const notRun = parity.filter((p) => p.outcome === 'not-run').length;
    const offlineReady = offline.filter((e) => byKey.get(e.key)?.ready).length;
    const unsupportedByType = new Map<string, number>();
    for (const p of previews) for (const t of p.unsupportedTypes) unsupportedByType.set(t, (unsupportedByType.get(t) ?? 0) + 1);
    const topUnsupported = [...unsupportedByType.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).slice(0, 10);

    const summary = {
      jsonFiles,
      exports: entries.length,
      accepted,
      ready,
      readyPercent: ready / Math.max(1, entries.length),
      nodes,
      mappedNodes: mapped,
      nodeCoverage: mapped / Math.max(1, nodes),
      fiveXX,
      runnableOffline: offline.length,
      runnableOfflineReady: offlineReady,
      references: references.size,
      parityRuns: parity.length,
      parityEqual: equal,
      parityDiffers: differs,
      parityNotRun: notRun,
      parity: equal / Math.max(1, parity.length),
      heldBackRuns: heldBack.length,
      heldBackEqual,
      topUnsupported,
      n8nVersion: N8N_VERSION,
      n8nProblem,
    };
    const sources = manifest.sources.map((src) => `${src.repo}@${src.commit.slice(0, 12)}${src.folder ? `:${src.folder}` : ''}`).join(', ');
    const table = [
      `Migration corpus, ${date.toISOString().slice(0, 10)}, commit ${environment.git.commit}${environment.git.dirtyWorkingTree ? ' (modified tree)' : ''}, ` +
        `${environment.machine.cpuCount} × ${environment.machine.cpuModel}, ${environment.machine.totalMemoryGiB} GiB, Node ${environment.node}, ` +
        `shared and loaded machine (figures here are counts, not timings). Sources: ${sources}. Reference: n8n ${N8N_VERSION}.`,
      '',
      '| measure | value |',
      '|---|---|',
      `| distinct exports previewed (JSON files with nodes[]) | ${entries.length} (of ${jsonFiles} JSON files) |`,
      `| accepted (200) | ${accepted} (${pct(accepted, entries.length)}) |`,
      `| ready | ${ready} (${pct(ready, entries.length)}) |`,
      `| node coverage (mapped / nodes, sticky notes excluded) | ${mapped} / ${nodes} (${pct(mapped, nodes)}) |`,
      `| 5xx answers | ${fiveXX} |`,
      `| runnable offline (manual trigger, offline node types, no credential, no clock) | ${offline.length} (ready: ${offlineReady}) |`,
      `| n8n reference runs | ${references.size}${n8nProblem ? ` (problem: ${n8nProblem.slice(0, 160).replace(/\|/g, '/')})` : ''} |`,
      `| parity of ready offline workflows (item for item) | ${equal} / ${parity.length} (${pct(equal, parity.length)}); differ ${differs}, not run ${notRun} |`,
      `| not ready but every node mapped (readiness issues only), run anyway: equal to n8n | ${heldBackEqual} / ${heldBack.length} |`,
      '',
      `Top unsupported node types (files): ${topUnsupported.map(([t, n]) => `${t.replace(/^n8n-nodes-base\./, '')} ${n}`).join(', ') || 'none'}.`,
    ].join('\n');

    process.stdout.write(`\n${table}\n\n`);
    const differences = allParity.filter((p) => p.outcome !== 'equal');
    if (differences.length > 0) {
      process.stdout.write('Parity differences:\n');
      for (const d of differences)
        process.stdout.write(`  ${byKey.get(d.key)?.ready ? '' : '(not ready) '}${d.key}: ${d.firstDifference}\n`);
    }
    const out = await writeResults('migration', date, { environment, summary, previews, parity: allParity, missing: corpus.missing });
    log(`results: ${out}`);
    if ((process.env.BENCH_DOCS ?? 'on') !== 'off') await writeDocsTable(table, log);
  } finally {
    await stack?.stop();
  }
}

/** Replaces the text between the migration markers of docs/benchmarks.md (appends them once). */
async function writeDocsTable(table: string, log: (m: string) => void): Promise<void> {
  if (!existsSync(DOCS)) return;
  const doc = await readFile(DOCS, 'utf8');
  const block = `${BEGIN}\n${table}\n${END}`;
  const start = doc.indexOf(BEGIN);
  const end = doc.indexOf(END);
  const next =
    start >= 0 && end > start
      ? doc.slice(0, start) + block + doc.slice(end + END.length)
      : `${doc.trimEnd()}\n\n### migration\n\n${block}\n`;
  await writeFile(DOCS, next);
  log(`table written to ${path.relative(process.cwd(), DOCS)}`);
}
