/**
 * Configuration packages (schema `svc.configuration-artifact.v1`): export declared tables of a
 * workspace, validate a package without touching destination rows, preview what applying it
 * would do (actions and blockers), prepare a proposal for a person to confirm in a session, and
 * apply a confirmed proposal: package tables, baseline and receipt in one transaction.
 *
 * Preview and apply compare three things per row: the package (P), the destination (D) and the
 * baseline the last successful apply of this package left (B). D = P: unchanged (convergence).
 * No D and no B: create. D ≠ P and D = B: update. Anything else is drift and blocks: a row
 * changed since the last apply (`changed`), one the baseline had and the destination lost
 * (`missing`), one no apply explains (`unexpected`); and per table: no declared table for the
 * key (`missing`), a table of that name that is not declared (`classification`), other columns
 * (`schema`), a table another package owns (`ownership`). No override, delete or ignore flag.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { canonicalJson } from '../../engine/canonicalJson';
import type { TableColumn } from '../../db/entities';
import { conflict, invalidInput, notFound, preconditionFailed, unavailable } from '../kernel/errors';
import { newId, sha256Hex } from '../kernel/ids';
import { cellToSql, checkColumns, ident } from './columns';
import {
  declaredTables,
  KEY_COLUMN,
  LIFECYCLE_COLUMNS,
  MAX_KEY_LENGTH,
  MANAGED_TABLE_NOT_FOUND,
  readManagedRows,
  REVISION_COLUMN,
  type DeclaredTable,
} from './managed';
import { scanForSecrets } from './secretScan';
import { asValueError, inTransaction, isPgError, queryRows, withClient, type PgClient } from './storage';
import { loadTable, qualified } from './tables';

export const ARTIFACT_SCHEMA = 'svc.configuration-artifact.v1';
export const PACKAGE_LIMITS = {
  tables: 20,
  rowsPerTable: 500,
  rowsTotal: 1000,
  bytes: 1024 * 1024,
  exportReadBytes: 32 * 1024 * 1024,
} as const;
export const PROPOSAL_TTL_MS = 15 * 60 * 1000;
const PACKAGE_KEY = /^[a-z0-9][a-z0-9_.-]{0,99}$/;

export interface PackageRow {
  key: string;
  values: Record<string, unknown>;
}
export interface PackageTable {
  tableKey: string;
  name: string;
  columns: TableColumn[];
  rows: PackageRow[];
}
export interface ConfigurationPackage {
  schema: typeof ARTIFACT_SCHEMA;
  packageKey: string;
  tables: PackageTable[];
}

export interface Blocker {
  tableKey: string;
  /** The row's key, cut to 256 characters; null for table-level blockers. */
  rowKey: string | null;
  kind: 'schema' | 'ownership' | 'classification' | 'missing' | 'unexpected' | 'changed' | 'reference';
  reason: string;
}

export interface PlannedAction {
  id: string;
  tableKey: string;
  rowKey: string;
  action: 'create' | 'update' | 'unchanged';
}

export interface Plan {
  packageKey: string;
  applyable: boolean;
  actions: PlannedAction[];
  blockers: Blocker[];
}

const rowKeyOf = (key: string) => key.slice(0, MAX_KEY_LENGTH);

// ---------------------------------------------------------------------------------------------
// Export

/**
 * A package of declared tables (all of the workspace's, or `tableIds`). Reference cells become
 * the referenced table's key; a reference to a table outside the package is a conflict listing
 * `details.blockers`. Over a limit (tables, rows, bytes, or the 32 MiB read budget): a 400.
 */
export async function exportPackage(
  em: EntityManager,
  workspaceId: string,
  input: { packageKey: string; tableIds?: string[] },
): Promise<{ package: ConfigurationPackage; stats: { tables: number; rows: number; bytes: number } }> {
  if (!PACKAGE_KEY.test(input.packageKey))
    throw invalidInput('packageKey must be 1 to 100 characters of lowercase letters, digits, ".", "_" or "-".', {
      details: { field: 'packageKey' },
    });
  return inTransaction(
    em,
    async (client) => {
      const all = await declaredTables(client, workspaceId);
      let chosen = all;
      if (input.tableIds) {
        chosen = input.tableIds.map(
          (id) =>
            all.find((t) => t.tableId === id) ??
            (() => {
              throw notFound(MANAGED_TABLE_NOT_FOUND);
            })(),
        );
      }
      if (chosen.length === 0) throw invalidInput('Nothing to export: the workspace has no declared configuration tables.');
      if (chosen.length > PACKAGE_LIMITS.tables)
        throw invalidInput(`A package holds at most ${PACKAGE_LIMITS.tables} tables; ${chosen.length} were chosen.`, {
          code: 'package_too_large',
        });
      let readBytes = 0;
      for (const t of chosen) {
        const { table, db } = await loadTable(client, workspaceId, t.tableId);
        // An aggregate without `group by` yields one row.
        const [{ n } = { n: 0 }] = await queryRows<{ n: number }>(
          client,
          `select coalesce(sum(length(row_to_json(r)::text)), 0)::bigint::float8 as n from ${qualified(db, table)} r`,
        );
        readBytes += n;
      }
      if (readBytes > PACKAGE_LIMITS.exportReadBytes)
        throw invalidInput(`The chosen tables hold ${readBytes} bytes of JSON, over the export read budget of 32 MiB.`, {
          code: 'export_budget_exceeded',
        });
      const keyOfId = new Map(all.map((t) => [t.tableId, t.tableKey]));
      const chosenIds = new Set(chosen.map((t) => t.tableId));
      const blockers: Blocker[] = [];
      const tables: PackageTable[] = [];
      let total = 0;
      for (const t of chosen) {
        const loaded = await loadTable(client, workspaceId, t.tableId);
        const rows = await readManagedRows(client, loaded);
        if (rows.length > PACKAGE_LIMITS.rowsPerTable)
          throw invalidInput(
            `Table "${t.tableKey}" has ${rows.length} rows; a package holds at most ${PACKAGE_LIMITS.rowsPerTable} per table.`,
            { code: 'package_too_large' },
          );
        total += rows.length;
        const refs = t.columns.filter((c) => c.tableReference).map((c) => c.name);
        tables.push({
          tableKey: t.tableKey,
          name: t.name,
          columns: t.columns,
          rows: rows.map((r) => {
            const values = { ...r.values };
            for (const col of refs) {
              const id = values[col];
              if (id === null || id === undefined) continue;
              if (typeof id === 'string' && chosenIds.has(id)) values[col] = keyOfId.get(id)!;
              else
                blockers.push({
                  tableKey: t.tableKey,
                  rowKey: rowKeyOf(r.key),
                  kind: 'reference',
                  reason: keyOfId.has(String(id))
                    ? `column "${col}" references table "${keyOfId.get(String(id))}", which is not in the package`
                    : `column "${col}" references a table that is not a managed table of this workspace`,
                });
            }
            return { key: r.key, values };
          }),
        });
      }
      if (total > PACKAGE_LIMITS.rowsTotal)
        throw invalidInput(`The chosen tables have ${total} rows; a package holds at most ${PACKAGE_LIMITS.rowsTotal}.`, {
          code: 'package_too_large',
        });
      if (blockers.length > 0)
        throw conflict('The package references tables outside it; add them or clear the references.', {
          code: 'export_reference_conflict',
          details: { blockers },
        });
      const pkg: ConfigurationPackage = { schema: ARTIFACT_SCHEMA, packageKey: input.packageKey, tables };
      const bytes = Buffer.byteLength(JSON.stringify(pkg));
      if (bytes > PACKAGE_LIMITS.bytes) throw invalidInput(`The package is ${bytes} bytes; at most 1 MiB.`, { code: 'package_too_large' });
      return { package: pkg, stats: { tables: tables.length, rows: total, bytes } };
    },
    'begin isolation level repeatable read read only',
  );
}

// ---------------------------------------------------------------------------------------------
// Validate (no destination reads)

const packageSchema = z.object({
  schema: z.literal(ARTIFACT_SCHEMA, { error: `schema must be "${ARTIFACT_SCHEMA}"` }),
  packageKey: z.string().regex(PACKAGE_KEY, 'packageKey must be 1 to 100 characters of lowercase letters, digits, ".", "_" or "-"'),
  tables: z.array(
    z.object({
      tableKey: z.string().min(1).max(100),
      name: z.string().min(1).max(63),
      columns: z.array(z.unknown()),
      rows: z.array(z.object({ key: z.string(), values: z.record(z.string(), z.unknown()) })),
    }),
  ),
});

/** Normalized cells of a row over the table's non-key columns (absent = null), for comparison and writing. */
function normalizeValues(columns: TableColumn[], values: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const c of columns) {
    if (c.name === KEY_COLUMN) continue;
    const v = values[c.name];
    if (v === undefined || v === null) out[c.name] = null;
    else if (c.type === 'json') out[c.name] = v;
    else {
      const cell = cellToSql(c, v);
      out[c.name] = c.type === 'number' ? Number(cell) : cell;
    }
  }
  return out;
}

/**
 * Checks a package on its own: shape and schema id, limits, columns, keys (1 to 256 characters,
 * unique per table), cells against their columns, references naming tables of the package, and
 * no secret in lifecycle values. Reads nothing of the destination. Returns the issues found.
 */
export function validatePackage(raw: unknown): { package: ConfigurationPackage | null; issues: string[]; bytes: number } {
  const bytes = Buffer.byteLength(JSON.stringify(raw ?? null));
  const parsed = packageSchema.safeParse(raw);
  if (!parsed.success)
    return { package: null, issues: parsed.error.issues.map((i) => `${i.path.join('.') || 'package'}: ${i.message}`), bytes };
  const issues: string[] = [];
  const pkg = parsed.data;
  if (bytes > PACKAGE_LIMITS.bytes) issues.push(`The package is ${bytes} bytes; at most 1 MiB.`);
  if (pkg.tables.length > PACKAGE_LIMITS.tables)
    issues.push(`At most ${PACKAGE_LIMITS.tables} tables; the package has ${pkg.tables.length}.`);
  const total = pkg.tables.reduce((n, t) => n + t.rows.length, 0);
  if (total > PACKAGE_LIMITS.rowsTotal) issues.push(`At most ${PACKAGE_LIMITS.rowsTotal} rows in all; the package has ${total}.`);
  const tableKeys = new Set(pkg.tables.map((t) => t.tableKey));
  if (tableKeys.size !== pkg.tables.length) issues.push('Table keys must be unique in a package.');
  const tables: PackageTable[] = [];
  for (const t of pkg.tables) {
    let columns: TableColumn[];
    try {
      columns = checkColumns(t.columns);
    } catch (err) {
      issues.push(`${t.tableKey}: ${(err as Error).message}`);
      continue;
    }
    const names = new Set(columns.map((c) => c.name));
    if (columns.find((c) => c.name === KEY_COLUMN)?.type !== 'text' || !LIFECYCLE_COLUMNS.every((c) => names.has(c)))
      issues.push(`${t.tableKey}: a configuration table has a text column "key" and columns active and retired.`);
    if (t.rows.length > PACKAGE_LIMITS.rowsPerTable)
      issues.push(`${t.tableKey}: at most ${PACKAGE_LIMITS.rowsPerTable} rows per table; it has ${t.rows.length}.`);
    const keys = new Set<string>();
    const rows: PackageRow[] = [];
    for (const r of t.rows) {
      const where = `${t.tableKey}/${rowKeyOf(r.key)}`;
      if (r.key.length === 0 || r.key.length > MAX_KEY_LENGTH) issues.push(`${where}: keys are 1 to ${MAX_KEY_LENGTH} characters.`);
      if (keys.has(r.key)) issues.push(`${where}: the key appears twice.`);
      keys.add(r.key);
      const unknown = Object.keys(r.values).filter((k) => !names.has(k) || k === KEY_COLUMN);
      if (unknown.length > 0) issues.push(`${where}: unknown column "${unknown[0]}".`);
      try {
        rows.push({ key: r.key, values: normalizeValues(columns, r.values) });
      } catch (err) {
        issues.push(`${where}: ${(err as Error).message}`);
      }
      for (const c of columns.filter((c) => c.tableReference)) {
        const ref = r.values[c.name];
        if (ref !== undefined && ref !== null && !tableKeys.has(String(ref)))
          issues.push(`${where}: column "${c.name}" references "${String(ref)}", which is not a table of the package.`);
      }
      for (const c of LIFECYCLE_COLUMNS)
        for (const f of scanForSecrets(r.values[c], c))
          issues.push(`${where}: a ${f.kind} in ${f.path}; configuration must not hold secrets.`);
    }
    tables.push({ tableKey: t.tableKey, name: t.name, columns, rows });
  }
  return { package: issues.length === 0 ? { schema: ARTIFACT_SCHEMA, packageKey: pkg.packageKey, tables } : null, issues, bytes };
}

function requireValid(raw: unknown): ConfigurationPackage {
  const { package: pkg, issues } = validatePackage(raw);
  if (!pkg)
    throw invalidInput(
      `The package is not valid: ${issues.slice(0, 5).join(' ')}${issues.length > 5 ? ` (${issues.length - 5} more)` : ''}`,
      { code: 'package_invalid', details: { issues } },
    );
  return pkg;
}

// ---------------------------------------------------------------------------------------------
// Preview (plan)

function sameColumns(a: TableColumn[], b: TableColumn[]): boolean {
  const norm = (cols: TableColumn[]) =>
    canonicalJson(
      [...cols].map((c) => ({ name: c.name, type: c.type, ref: c.tableReference === true })).sort((x, y) => x.name.localeCompare(y.name)),
    );
  return norm(a) === norm(b);
}

const actionId = (tableKey: string, rowKey: string, action: string, values: unknown) =>
  `act_${sha256Hex(`${tableKey}\n${rowKey}\n${action}\n${canonicalJson(values)}`).slice(0, 24)}`;

interface TablePlan {
  pkg: PackageTable;
  dest: DeclaredTable;
  rows: Array<{ row: PackageRow; action: PlannedAction['action'] }>;
}

async function computePlan(client: PgClient, workspaceId: string, pkg: ConfigurationPackage): Promise<{ plan: Plan; tables: TablePlan[] }> {
  const declared = await declaredTables(client, workspaceId);
  const byKey = new Map(declared.map((t) => [t.tableKey, t]));
  const keyOfId = new Map(declared.map((t) => [t.tableId, t.tableKey]));
  const blockers: Blocker[] = [];
  const actions: PlannedAction[] = [];
  const tables: TablePlan[] = [];
  for (const t of pkg.tables) {
    const dest = byKey.get(t.tableKey);
    if (!dest) {
      const [plain] = await queryRows(
        client,
        `select 1 from user_tables t where t.workspace_id = $1 and t.name = $2 and not t.trashed and not exists (select 1 from managed_tables m where m.table_id = t.id)`,
        [workspaceId, t.name],
      );
      blockers.push(
        plain
          ? {
              tableKey: t.tableKey,
              rowKey: null,
              kind: 'classification',
              reason: `table "${t.name}" exists but is not declared as configuration`,
            }
          : { tableKey: t.tableKey, rowKey: null, kind: 'missing', reason: `no declared configuration table has the key "${t.tableKey}"` },
      );
      continue;
    }
    if (dest.ownerPackageKey && dest.ownerPackageKey !== pkg.packageKey) {
      blockers.push({
        tableKey: t.tableKey,
        rowKey: null,
        kind: 'ownership',
        reason: `the table belongs to package "${dest.ownerPackageKey}"`,
      });
      continue;
    }
    if (!sameColumns(dest.columns, t.columns)) {
      blockers.push({
        tableKey: t.tableKey,
        rowKey: null,
        kind: 'schema',
        reason: `the destination columns (${dest.columns.map((c) => `${c.name} ${c.type}`).join(', ')}) differ from the package's (${t.columns.map((c) => `${c.name} ${c.type}`).join(', ')})`,
      });
      continue;
    }
    const loaded = await loadTable(client, workspaceId, dest.tableId);
    const refs = dest.columns.filter((c) => c.tableReference).map((c) => c.name);
    const destRows = new Map(
      (await readManagedRows(client, loaded)).map((r) => {
        const values = normalizeValues(dest.columns, r.values);
        for (const col of refs)
          if (values[col] !== null) values[col] = keyOfId.get(String(values[col])) ?? `unknown:${String(values[col])}`;
        return [r.key, values];
      }),
    );
    const [base] = await queryRows<{ rows: Record<string, Record<string, unknown>> }>(
      client,
      'select rows from configuration_baselines where workspace_id = $1 and package_key = $2 and table_key = $3',
      [workspaceId, pkg.packageKey, t.tableKey],
    );
    const baseline = base?.rows ?? null;
    const eq = (a: unknown, b: unknown) => canonicalJson(a) === canonicalJson(b);
    const planned: TablePlan['rows'] = [];
    for (const row of t.rows) {
      const d = destRows.get(row.key);
      const b = baseline?.[row.key];
      const block = (kind: Blocker['kind'], reason: string) =>
        blockers.push({ tableKey: t.tableKey, rowKey: rowKeyOf(row.key), kind, reason });
      let action: PlannedAction['action'] | null = null;
      if (d && eq(d, row.values)) action = 'unchanged';
      else if (!d) {
        if (b) block('missing', 'the row was applied before and is gone from the destination');
        else action = 'create';
      } else if (b && eq(d, b)) action = 'update';
      else if (b) block('changed', 'the row changed at the destination since the last apply');
      else block('unexpected', 'the row exists at the destination but no apply of this package wrote it');
      if (action) {
        planned.push({ row, action });
        actions.push({ id: actionId(t.tableKey, row.key, action, row.values), tableKey: t.tableKey, rowKey: rowKeyOf(row.key), action });
      }
    }
    const inPackage = new Set(t.rows.map((r) => r.key));
    for (const [key, d] of destRows) {
      if (inPackage.has(key)) continue;
      const b = baseline?.[key];
      if (!(b && eq(d, b)))
        blockers.push({
          tableKey: t.tableKey,
          rowKey: rowKeyOf(key),
          kind: 'unexpected',
          reason: 'the destination has a row the package does not, and no apply of this package wrote it',
        });
    }
    tables.push({ pkg: t, dest, rows: planned });
  }
  return { plan: { packageKey: pkg.packageKey, applyable: blockers.length === 0, actions, blockers }, tables };
}

export async function previewPackage(em: EntityManager, workspaceId: string, raw: unknown): Promise<Plan> {
  const pkg = requireValid(raw);
  return inTransaction(
    em,
    async (client) => (await computePlan(client, workspaceId, pkg)).plan,
    'begin isolation level repeatable read read only',
  );
}

// ---------------------------------------------------------------------------------------------
// Prepare, confirm, apply

export interface ProposalData {
  id: string;
  packageKey: string;
  status: 'pending' | 'confirmed' | 'applied';
  createdBy: string;
  createdAt: Date;
  expiresAt: Date;
  confirmedBy: string | null;
  confirmedAt: Date | null;
}

interface ProposalRow {
  id: string;
  workspace_id: string;
  package_key: string;
  package: ConfigurationPackage;
  package_digest: string;
  status: ProposalData['status'];
  created_by: string;
  created_at: Date;
  expires_at: Date;
  confirmed_by: string | null;
  confirmed_at: Date | null;
}

const proposalData = (r: ProposalRow): ProposalData => ({
  id: r.id,
  packageKey: r.package_key,
  status: r.status,
  createdBy: r.created_by,
  createdAt: new Date(r.created_at),
  expiresAt: new Date(r.expires_at),
  confirmedBy: r.confirmed_by,
  confirmedAt: r.confirmed_at === null ? null : new Date(r.confirmed_at),
});

/** Persists a proposal of the package with its preview; a person confirms it in a session before it can be applied. */
export async function preparePackage(
  em: EntityManager,
  workspaceId: string,
  actorId: string,
  raw: unknown,
  ttlMs = PROPOSAL_TTL_MS,
): Promise<{ proposal: ProposalData; preview: Plan }> {
  const pkg = requireValid(raw);
  return inTransaction(em, async (client) => {
    const { plan } = await computePlan(client, workspaceId, pkg);
    const now = new Date();
    const [row] = await queryRows<ProposalRow>(
      client,
      `insert into configuration_proposals (id, workspace_id, package_key, package, package_digest, status, created_by, created_at, expires_at)
       values ($1, $2, $3, $4, $5, 'pending', $6, $7, $8) returning *`,
      [
        newId('cfp'),
        workspaceId,
        pkg.packageKey,
        JSON.stringify(pkg),
        sha256Hex(canonicalJson(pkg)),
        actorId,
        now,
        new Date(now.getTime() + ttlMs),
      ],
    );
    if (!row) throw new Error('insert into configuration_proposals returned no row');
    return { proposal: proposalData(row), preview: plan };
  });
}

async function loadProposal(client: PgClient, workspaceId: string, id: string, lock = false): Promise<ProposalRow> {
  const [row] = await queryRows<ProposalRow>(
    client,
    `select * from configuration_proposals where id = $1 and workspace_id = $2${lock ? ' for update' : ''}`,
    [id, workspaceId],
  );
  if (!row) throw notFound('Proposal not found');
  return row;
}

/** A person (Admin or Owner, in a session) confirms a pending proposal before it expires. */
export async function confirmProposal(em: EntityManager, workspaceId: string, actorId: string, id: string): Promise<ProposalData> {
  return inTransaction(em, async (client) => {
    const row = await loadProposal(client, workspaceId, id, true);
    if (row.status !== 'pending') throw conflict(`The proposal is already ${row.status}.`, { code: 'proposal_not_pending' });
    if (new Date(row.expires_at).getTime() <= Date.now())
      throw preconditionFailed('The proposal has expired; prepare the package again.', { code: 'proposal_expired' });
    const [updated] = await queryRows<ProposalRow>(
      client,
      `update configuration_proposals set status = 'confirmed', confirmed_by = $2, confirmed_at = now() where id = $1 returning *`,
      [id, actorId],
    );
    if (!updated) throw notFound('Proposal not found');
    return proposalData(updated);
  });
}

export interface ReceiptData {
  id: string;
  requestId: string;
  actorId: string;
  packageKey: string;
  actionIds: string[];
  status: 'applied';
  createdAt: Date;
}

interface ReceiptRow {
  id: string;
  request_id: string;
  input_digest: string;
  actor_id: string;
  package_key: string;
  action_ids: string[];
  status: 'applied';
  created_at: Date;
}

const receiptData = (r: Omit<ReceiptRow, 'input_digest'>): ReceiptData => ({
  id: r.id,
  requestId: r.request_id,
  actorId: r.actor_id,
  packageKey: r.package_key,
  actionIds: r.action_ids,
  status: r.status,
  createdAt: new Date(r.created_at),
});

export const HISTORY_LIMIT = 50;

/** The latest receipts of the workspace, newest first: who applied which package with which actions; no row values. */
export async function configurationHistory(em: EntityManager, workspaceId: string) {
  return withClient(em, async (client) => {
    const rows = await queryRows<Omit<ReceiptRow, 'input_digest'>>(
      client,
      'select id, request_id, actor_id, package_key, action_ids, status, created_at from configuration_receipts where workspace_id = $1 order by created_at desc, id desc limit $2',
      [workspaceId, HISTORY_LIMIT],
    );
    return { receipts: rows.map(receiptData) };
  });
}

/**
 * Applies a confirmed proposal. The same `requestId` with the same input returns the receipt
 * already written (also while writes are switched off); with other input it is a conflict.
 * Otherwise: 503 while writes are off; 412 once the proposal expired; 409 while it is not
 * confirmed or when the destination drifted (`details.blockers`). The rows, the tables'
 * ownership, the baselines and the receipt are written in one transaction.
 */
export async function applyProposal(
  em: EntityManager,
  workspaceId: string,
  actorId: string,
  input: { requestId: string; proposalId: string },
  settings: { writesEnabled: boolean },
): Promise<{ receipt: ReceiptData; replayed: boolean }> {
  const inputDigest = sha256Hex(canonicalJson({ proposalId: input.proposalId }));
  const existing = async (client: PgClient) => {
    const [r] = await queryRows<ReceiptRow>(client, 'select * from configuration_receipts where workspace_id = $1 and request_id = $2', [
      workspaceId,
      input.requestId,
    ]);
    if (!r) return null;
    if (r.input_digest !== inputDigest) throw conflict('This requestId was used with other input.', { code: 'request_id_conflict' });
    return { receipt: receiptData(r), replayed: true };
  };
  try {
    return await inTransaction(em, async (client) => {
      const prior = await existing(client);
      if (prior) return prior;
      if (!settings.writesEnabled) throw unavailable('Configuration writes are switched off.', { code: 'writes_disabled' });
      const proposal = await loadProposal(client, workspaceId, input.proposalId, true);
      if (proposal.status === 'applied')
        throw conflict('The proposal was already applied under another requestId.', { code: 'proposal_applied' });
      if (new Date(proposal.expires_at).getTime() <= Date.now())
        throw preconditionFailed('The proposal has expired; prepare the package again.', { code: 'proposal_expired' });
      if (proposal.status !== 'confirmed')
        throw conflict('The proposal has not been confirmed by a person yet.', { code: 'proposal_not_confirmed' });
      const pkg = proposal.package;
      // Serialize applies to the same tables.
      await client.query('select 1 from managed_tables where workspace_id = $1 and table_key = any($2) for update', [
        workspaceId,
        pkg.tables.map((t) => t.tableKey),
      ]);
      const { plan, tables } = await computePlan(client, workspaceId, pkg);
      if (!plan.applyable)
        throw conflict('The destination drifted from the package and its last applied baseline.', {
          code: 'configuration_drift',
          details: { blockers: plan.blockers },
        });
      const idOfKey = new Map((await declaredTables(client, workspaceId)).map((t) => [t.tableKey, t.tableId]));
      const receiptId = newId('cfr');
      const now = new Date();
      await client.query(
        `insert into configuration_receipts (id, workspace_id, request_id, input_digest, actor_id, package_key, action_ids, status, created_at) values ($1, $2, $3, $4, $5, $6, $7, 'applied', $8)`,
        [receiptId, workspaceId, input.requestId, inputDigest, actorId, pkg.packageKey, JSON.stringify(plan.actions.map((a) => a.id)), now],
      );
      for (const t of tables) {
        const { table, db } = await loadTable(client, workspaceId, t.dest.tableId);
        const target = qualified(db, table);
        for (const { row, action } of t.rows) {
          if (action === 'unchanged') continue;
          const values = { ...row.values };
          for (const c of t.dest.columns.filter((c) => c.tableReference))
            if (values[c.name] !== null) values[c.name] = idOfKey.get(String(values[c.name])) ?? null;
          const cols = t.dest.columns.filter((c) => c.name !== KEY_COLUMN);
          const cells = cols.map((c) => (values[c.name] === null ? null : cellToSql(c, values[c.name])));
          if (action === 'create') {
            await client
              .query(
                `insert into ${target} (${[KEY_COLUMN, ...cols.map((c) => c.name)].map(ident).join(', ')}) values (${[row.key, ...cells].map((_, i) => `$${i + 1}`).join(', ')})`,
                [row.key, ...cells],
              )
              .catch(asValueError);
          } else {
            const sets = cols.map((c, i) => `${ident(c.name)} = $${i + 2}`);
            await client
              .query(
                `update ${target} set ${[...sets, `${ident(REVISION_COLUMN)} = ${ident(REVISION_COLUMN)} + 1`].join(', ')} where ${ident(KEY_COLUMN)} = $1`,
                [row.key, ...cells],
              )
              .catch(asValueError);
          }
        }
        await client.query('update managed_tables set owner_package_key = $2 where table_id = $1', [t.dest.tableId, pkg.packageKey]);
        const baseline = Object.fromEntries(t.pkg.rows.map((r) => [r.key, r.values]));
        await client.query(
          `insert into configuration_baselines (workspace_id, package_key, table_key, rows, receipt_id, updated_at) values ($1, $2, $3, $4, $5, $6)
           on conflict (workspace_id, package_key, table_key) do update set rows = excluded.rows, receipt_id = excluded.receipt_id, updated_at = excluded.updated_at`,
          [workspaceId, pkg.packageKey, t.pkg.tableKey, JSON.stringify(baseline), receiptId, now],
        );
      }
      await client.query(`update configuration_proposals set status = 'applied' where id = $1`, [proposal.id]);
      const [receipt] = await queryRows<ReceiptRow>(client, 'select * from configuration_receipts where id = $1', [receiptId]);
      if (!receipt) throw new Error('The receipt written by this transaction is missing.');
      return { receipt: receiptData(receipt), replayed: false };
    });
  } catch (err) {
    // A concurrent apply with the same requestId won the race: answer with its receipt.
    if (isPgError(err) && err.code === '23505') {
      const prior = await withClient(em, existing);
      if (prior) return prior;
    }
    throw err;
  }
}
