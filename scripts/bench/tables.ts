/**
 * `npm run bench -- tables`: user tables through the API.
 * - insert: `POST /api/v1/databases/{id}/rows` with autocannon (child process) at rising
 *   concurrency, BENCH_RUNS runs of BENCH_DURATION_S each: rows/s and latency.
 * - import: `POST /api/v1/databases/import` of a CSV file just under the 5 MB limit (six
 *   columns: number, text, text, number, date, json), BENCH_RUNS times into new tables: MB/s.
 * - query: `POST /api/v1/databases/query` on a 100,000-row table (loaded by CSV imports), one
 *   query at a time, BENCH_QUERY_REPEATS times per query: p50 and p99 per query shape.
 */
import { performance } from 'node:perf_hooks';
import { apiCall } from './api';
import { benchEnvironment, envList, envNumber, writeResults, type BenchContext } from './report';
import { serverVersion, startLoadgen } from './shared';
import { startBenchStack, type BenchStack } from './stack';
import { fmtSpread, percentile, round, spread, textTable } from './stats';
import pg from 'pg';

const CSV_LIMIT = 5 * 1024 * 1024;
const STATUSES = ['open', 'paid', 'shipped', 'refunded'];

/** A CSV of `rows` orders (or, with `maxBytes`, as many as fit), deterministic. */
function ordersCsv(opts: { rows?: number; maxBytes?: number; from?: number }): { text: string; rows: number } {
  const lines = ['id,customer,email,amount,created,meta'];
  let bytes = lines[0].length + 1;
  let i = opts.from ?? 0;
  for (;;) {
    if (opts.rows !== undefined && i - (opts.from ?? 0) >= opts.rows) break;
    const day = String((i % 28) + 1).padStart(2, '0');
    const line = `${i},Customer ${i % 997},c${i % 997}@example.test,${((i * 37) % 10000) / 100},2024-0${(i % 9) + 1}-${day}T10:${String(i % 60).padStart(2, '0')}:00Z,"{""status"":""${STATUSES[i % 4]}"",""items"":${i % 7}}"`;
    if (opts.maxBytes !== undefined && bytes + line.length + 1 > opts.maxBytes) break;
    lines.push(line);
    bytes += line.length + 1;
    i++;
  }
  return { text: lines.join('\n') + '\n', rows: i - (opts.from ?? 0) };
}

async function importCsv(stack: BenchStack, fields: Record<string, string>, csv: string, fileName: string) {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  form.append('file', new Blob([csv], { type: 'text/csv' }), fileName);
  const started = performance.now();
  const res = await fetch(`${stack.apiUrl}/api/v1/databases/import`, {
    method: 'POST',
    headers: { authorization: `Bearer ${stack.workspace.apiKey}` },
    body: form,
  });
  const body = (await res.json()) as { table: { id: string; databaseId: string; rowCount: number }; stats: { rowsInserted: number } };
  if (res.status !== 201) throw new Error(`import answered ${res.status}: ${JSON.stringify(body)}`);
  return { ms: performance.now() - started, body };
}

const QUERIES: Array<{ name: string; sql: string }> = [
  { name: 'point lookup by rowIndex', sql: 'select * from orders where "rowIndex" = 54321' },
  { name: 'filter + order + limit 50', sql: 'select id, customer, amount from orders where amount > 90 order by amount desc, id limit 50' },
  {
    name: 'group by over all rows',
    sql: "select meta->>'status' as status, count(*), round(avg(amount)::numeric, 2) as avg from orders group by 1 order by 1",
  },
  { name: '1,000 rows (the row cap)', sql: 'select * from orders' },
];

export async function tablesScenario(ctx: BenchContext): Promise<void> {
  const { log } = ctx;
  const durationS = envNumber('BENCH_DURATION_S', 5);
  const runs = envNumber('BENCH_RUNS', 5);
  const concurrency = envList('BENCH_CONCURRENCY', [1, 10, 50]);
  const repeats = envNumber('BENCH_QUERY_REPEATS', 200);
  const date = new Date();
  const environment = await benchEnvironment();
  let stack: BenchStack | null = null;
  const loadgen = startLoadgen();
  try {
    stack = await startBenchStack(log);
    const db = new pg.Client({ connectionString: stack.databaseUrl });
    await db.connect();
    const postgres = await serverVersion(db);
    await db.end();

    // Insert rows/s through the API.
    const created = await apiCall<{ table: { id: string } }>(stack, 'POST', '/api/v1/databases', {
      databaseName: 'bench',
      tableName: 'inserts',
      columns: [
        { name: 'n', type: 'number' },
        { name: 'label', type: 'text' },
        { name: 'meta', type: 'json' },
      ],
    });
    const rowsUrl = `${stack.apiUrl}/api/v1/databases/${created.table.id}/rows`;
    const headers = { authorization: `Bearer ${stack.workspace.apiKey}` };
    log('insert: warm-up');
    await loadgen.run({ url: rowsUrl, connections: 5, durationS: 2, headers, wrapInValues: true });
    const insert = [];
    for (const c of concurrency) {
      const measured = [];
      for (let r = 0; r < runs; r++) {
        ctx.throwIfInterrupted();
        const result = await loadgen.run({ url: rowsUrl, connections: c, durationS, headers, wrapInValues: true });
        if (result.non2xx > 0 || result.errors > 0)
          throw new Error(`insert at ${c}: ${JSON.stringify(result.statusCodes)} errors ${result.errors}`);
        measured.push(result);
      }
      const row = {
        concurrency: c,
        rowsPerSec: spread(measured.map((m) => m.acceptedPerSec)),
        p50Ms: spread(measured.map((m) => m.latencyMs.p50)),
        p99Ms: spread(measured.map((m) => m.latencyMs.p99)),
        runs: measured,
      };
      log(`insert c=${c}: ${fmtSpread(row.rowsPerSec)} rows/s, p50 ${fmtSpread(row.p50Ms)} ms, p99 ${fmtSpread(row.p99Ms)} ms`);
      insert.push(row);
    }

    // CSV import MB/s of a file just under 5 MB.
    const file = ordersCsv({ maxBytes: CSV_LIMIT - 1024 });
    const fileBytes = Buffer.byteLength(file.text);
    log(`import: ${fileBytes} bytes, ${file.rows} rows; warm-up`);
    await importCsv(stack, { databaseName: 'bench', tableName: 'import_warmup' }, file.text, 'orders.csv');
    const imports = [];
    for (let r = 0; r < runs; r++) {
      ctx.throwIfInterrupted();
      const { ms, body } = await importCsv(stack, { databaseName: 'bench', tableName: `import_${r}` }, file.text, 'orders.csv');
      if (body.stats.rowsInserted !== file.rows) throw new Error(`import inserted ${body.stats.rowsInserted} of ${file.rows} rows`);
      imports.push({ ms, mbPerSec: fileBytes / (1024 * 1024) / (ms / 1000), rowsPerSec: file.rows / (ms / 1000) });
      log(`import ${r + 1}: ${round(ms, 0)} ms, ${round(imports[r].mbPerSec, 2)} MB/s`);
    }

    // Query latency on a 100,000-row table.
    const tableRows = 100_000;
    let databaseId = '';
    for (let from = 0; from < tableRows; from += 25_000) {
      const part = ordersCsv({ rows: 25_000, from });
      const { body } = await importCsv(stack, { databaseName: 'querybench', tableName: 'orders' }, part.text, 'orders.csv');
      databaseId = body.table.databaseId;
    }
    const queries = [];
    for (const q of QUERIES) {
      const ms: number[] = [];
      let truncated = false;
      for (let i = 0; i < 10 + repeats; i++) {
        ctx.throwIfInterrupted();
        const started = performance.now();
        const out = await apiCall<{ rows: unknown[]; truncated: boolean }>(stack, 'POST', '/api/v1/databases/query', {
          databaseId,
          sql: q.sql,
        });
        if (i >= 10) ms.push(performance.now() - started);
        truncated = out.truncated;
      }
      ms.sort((a, b) => a - b);
      const row = {
        name: q.name,
        sql: q.sql,
        p50Ms: round(percentile(ms, 50), 2),
        p99Ms: round(percentile(ms, 99), 2),
        maxMs: round(ms[ms.length - 1], 2),
        truncated,
      };
      log(`query ${q.name}: p50 ${row.p50Ms} ms, p99 ${row.p99Ms} ms`);
      queries.push(row);
    }

    const results = {
      scenario: 'tables',
      date: date.toISOString(),
      ...environment,
      postgres,
      settings: { durationS, runs, concurrency, queryRepeats: repeats, warmupQueries: 10 },
      insert,
      import: {
        fileBytes,
        rows: file.rows,
        runs: imports,
        mbPerSec: spread(imports.map((i) => i.mbPerSec)),
        ms: spread(imports.map((i) => i.ms)),
      },
      query: { tableRows, queries },
    };
    const out = await writeResults('tables', date, results);
    const lines = [
      `tables — ${environment.machine.cpuCount} × ${environment.machine.cpuModel}, ${environment.node}, PostgreSQL ${postgres}, commit ${environment.git.commit}${environment.git.dirtyWorkingTree ? ' (dirty)' : ''}, ${date.toISOString()}`,
      '',
      'insert rows through the API (POST /databases/{id}/rows), median [min–max] of runs:',
      ...textTable(
        ['concurrency', 'rows/s', 'p50 ms', 'p99 ms'],
        insert.map((r) => [String(r.concurrency), fmtSpread(r.rowsPerSec), fmtSpread(r.p50Ms), fmtSpread(r.p99Ms)]),
      ),
      '',
      `CSV import of ${round(fileBytes / (1024 * 1024), 2)} MB (${file.rows} rows): ${fmtSpread(results.import.mbPerSec, 2)} MB/s, ${fmtSpread(results.import.ms, 0)} ms`,
      '',
      `read-only SQL on a ${tableRows}-row table, ${repeats} queries each, one at a time:`,
      ...textTable(
        ['query', 'p50 ms', 'p99 ms', 'max ms'],
        queries.map((q) => [q.name, String(q.p50Ms), String(q.p99Ms), String(q.maxMs)]),
      ),
      '',
      `results: ${out}`,
    ];
    process.stdout.write(lines.join('\n') + '\n');
  } finally {
    loadgen.stop();
    await stack?.stop();
  }
}
