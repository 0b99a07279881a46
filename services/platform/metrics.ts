import type { MikroORM } from '@mikro-orm/postgresql';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { PROCESS_RESTARTS_MESSAGE, PROCESS_RESTARTS_REQUEST, isSupervised, type ProcessRestartsMessage } from '../kernel/lifecycle';
import { userSqlStats } from '../databases/userSql';
import { pendingOutboxCount, runCountsByStatusAndTrigger } from './store';
import { sandboxHostStats } from '../kernel/sandbox/sandboxHost/client';
import type { GroupCommitStats } from '../kernel/groupCommit';

/** Prometheus text from somewhere else in this process (e.g. the Temporal SDK's exporter); null when it has none. */
export type ExternalMetricsSource = () => Promise<string | null>;

/**
 * Prometheus metrics of one API process. Run and outbox gauges are read from PostgreSQL at
 * scrape time, so every instance reports the same totals: sum them per instance in queries
 * with `max by` rather than `sum by`. `external` sources are appended as they are (their
 * metric names must not collide with ours: the Temporal SDK's all start with `temporal_`).
 */
export function createMetrics(
  orm: MikroORM,
  external: ExternalMetricsSource[] = [],
  /** Group-commit writers of this process by name (services/kernel/groupCommit.ts), read at each scrape. */
  groupCommits: Record<string, () => GroupCommitStats> = {},
) {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'svc_' });

  const httpRequests = new Counter({
    name: 'svc_http_requests_total',
    help: 'HTTP requests by route template, method and status',
    labelNames: ['route', 'method', 'status'] as const,
    registers: [registry],
  });
  const httpDuration = new Histogram({
    name: 'svc_http_request_duration_seconds',
    help: 'HTTP request latency by route template and method',
    labelNames: ['route', 'method'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  new Gauge({
    name: 'svc_runs',
    help: 'Workflow runs by status and trigger (all workspaces)',
    labelNames: ['status', 'trigger'] as const,
    registers: [registry],
    async collect() {
      const rows = await runCountsByStatusAndTrigger(orm.em.fork());
      this.reset();
      for (const r of rows) this.set({ status: r.status, trigger: r.trigger }, Number(r.count));
    },
  });
  new Gauge({
    name: 'svc_webhook_outbox_depth',
    help: 'Webhook outbox entries waiting to be handed to Temporal',
    registers: [registry],
    async collect() {
      this.set(await pendingOutboxCount(orm.em.fork()));
    },
  });
  const userSql = () => userSqlStats(orm.em);
  for (const [name, help, read] of [
    [
      'svc_user_sql_received_bytes_total',
      'Bytes PostgreSQL sent on user-SQL connections (after the server-side byte budget)',
      () => userSql().bytesReceived,
    ],
    ['svc_user_sql_rejected_total', "User-SQL queries refused because their workspace's queue was full (429)", () => userSql().rejected],
    [
      'svc_user_sql_destroyed_connections_total',
      'User-SQL connections destroyed after a failure instead of being reused',
      () => userSql().destroyed,
    ],
  ] as const) {
    new Counter({
      name,
      help,
      registers: [registry],
      collect() {
        this.reset();
        this.inc(read());
      },
    });
  }
  new Gauge({
    name: 'svc_user_sql_queries',
    help: 'User-SQL queries running or waiting for their turn in this process',
    labelNames: ['state'] as const,
    registers: [registry],
    collect() {
      const { running, waiting } = userSql();
      this.set({ state: 'running' }, running);
      this.set({ state: 'waiting' }, waiting);
    },
  });

  if (isSupervised()) {
    const restarts = supervisorRestarts();
    mirroredCounter(registry, {
      name: 'svc_process_restarts_total',
      help: 'Restarts of the API and worker processes by the supervisor of npm start (main/supervisor.ts), by role',
      label: 'role',
      counts: restarts,
    });
  }
  mirroredCounter(registry, {
    name: 'svc_sandbox_host_events_total',
    help: "This process's sandbox host: starts, restarts (after any exit), kills at a call's outer deadline, kills for not answering pings",
    label: 'event',
    counts: sandboxHostStats,
  });
  for (const [stat, name, help] of [
    ['rows', 'svc_group_commit_rows_total', 'Rows enqueued to a group-commit writer of this process, by writer'],
    ['commits', 'svc_group_commit_commits_total', 'Statements (each one commit) a group-commit writer of this process wrote, by writer'],
    [
      'failedStatements',
      'svc_group_commit_failed_statements_total',
      'Group-commit statements that failed (and were retried by halves when a row caused it)',
    ],
    [
      'failedRows',
      'svc_group_commit_failed_rows_total',
      'Rows a group-commit writer rejected (their own error, or a failure of the whole batch)',
    ],
  ] as const) {
    new Counter({
      name,
      help,
      labelNames: ['writer'],
      registers: [registry],
      collect() {
        this.reset();
        for (const [writer, stats] of Object.entries(groupCommits)) this.inc({ writer }, stats()[stat]);
      },
    });
  }

  return {
    registry,
    contentType: registry.contentType,
    /** Our registry, then every external source that answered. */
    async render(): Promise<string> {
      const parts = [await registry.metrics(), ...(await Promise.all(external.map((source) => source().catch(() => null))))];
      return parts
        .filter((p): p is string => !!p)
        .map((p) => (p.endsWith('\n') ? p : `${p}\n`))
        .join('');
    },
    /** Records one finished request; `route` is the matched template (never the raw path, which would explode cardinality). */
    observeRequest(route: string, method: string, status: number, seconds: number): void {
      httpRequests.inc({ route, method, status: String(status) });
      httpDuration.observe({ route, method }, seconds);
    },
  };
}

export type Metrics = ReturnType<typeof createMetrics>;

/** A counter that reads, at each scrape, the totals another part of the process keeps by label value. */
function mirroredCounter(registry: Registry, c: { name: string; help: string; label: string; counts: Record<string, number> }): void {
  new Counter({
    name: c.name,
    help: c.help,
    labelNames: [c.label],
    registers: [registry],
    collect() {
      this.reset();
      for (const [value, n] of Object.entries(c.counts)) this.inc({ [c.label]: value }, n);
    },
  });
}

let restartTotals: Record<string, number> | null = null;

/**
 * The supervisor's restart totals, kept up to date from its IPC messages (main/supervisor.ts
 * answers the request sent here, and sends them again after every restart). The object is
 * updated in place; the listener is installed once per process.
 */
function supervisorRestarts(): Record<string, number> {
  if (restartTotals) return restartTotals;
  const totals: Record<string, number> = { api: 0, worker: 0 };
  restartTotals = totals;
  process.on('message', (message: unknown) => {
    const m = message as Partial<ProcessRestartsMessage> | null;
    if (m?.type !== PROCESS_RESTARTS_MESSAGE || !m.restarts) return;
    for (const [role, n] of Object.entries(m.restarts)) if (Number.isSafeInteger(n) && n >= 0) totals[role] = n;
  });
  process.send?.({ type: PROCESS_RESTARTS_REQUEST });
  return totals;
}
