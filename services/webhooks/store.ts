/**
 * Raw SQL of the webhooks area: the durable outbox an accepted request is written to and the
 * dispatch pass that hands its entries to the engine. A delivery id is unique per webhook
 * (`on conflict (webhook_id, dedupe_key) … do nothing`), so a repeated provider event never
 * writes a second entry; batches travel as one JSON parameter.
 */
import type { EntityManager } from '@mikro-orm/postgresql';

/** The connection bindings of the active activation of a destination (target); no row when none is active (or no target). */
export async function activeConnectionBindings(
  em: EntityManager,
  targetId: string | null,
): Promise<Array<{ bindings: Record<string, string> }>> {
  return em.execute<Array<{ bindings: Record<string, string> }>>(
    `select a.connection_bindings as bindings from workflow_targets t join workflow_target_activations a on a.id = t.active_activation_id where t.id = ?`,
    [targetId],
  );
}

/** An outbox entry as written; `payload` is its storable JSON text and `runId` the run id derived from `id`. */
export interface OutboxInsert {
  id: string;
  workspaceId: string;
  webhookId: string;
  workflowId: string;
  payload: string;
  dedupeKey: string | null;
  runId: string;
}

/** Writes one pending outbox entry; no row when an entry with its webhook and delivery id exists (the caller reads that one). */
export async function insertOutboxEntry(em: EntityManager, e: OutboxInsert): Promise<Array<{ id: string }>> {
  return em.execute<Array<{ id: string }>>(
    `insert into webhook_outbox (id, workspace_id, webhook_id, workflow_id, payload, dedupe_key, status, run_id, attempts, created_at)
     values (?, ?, ?, ?, ?::jsonb, ?, 'pending', ?, 0, now())
     on conflict (webhook_id, dedupe_key) where dedupe_key is not null do nothing
     returning id`,
    [e.id, e.workspaceId, e.webhookId, e.workflowId, e.payload, e.dedupeKey, e.runId],
  );
}

const INSERT_BATCH = `insert into webhook_outbox (id, workspace_id, webhook_id, workflow_id, payload, dedupe_key, status, run_id, attempts, created_at)
  select v.id, v.workspace_id, v.webhook_id, v.workflow_id, v.payload, v.dedupe_key, 'pending', v.run_id, 0, now()
  from jsonb_to_recordset(?::jsonb) as v(id text, workspace_id text, webhook_id text, workflow_id text, payload jsonb, dedupe_key text, run_id text)
  on conflict (webhook_id, dedupe_key) where dedupe_key is not null do nothing
  returning id`;

/**
 * Writes a batch of pending outbox entries in one statement (its own implicit transaction), from
 * the storable JSON `[{ id, workspace_id, webhook_id, workflow_id, payload, dedupe_key, run_id }]`.
 * Returns the ids written: an entry that met an earlier one with its delivery id is left out. A
 * delivery id twice in one batch fails the whole statement, so the caller sends each once.
 */
export async function insertOutboxBatch(em: EntityManager, entries: string): Promise<Array<{ id: string }>> {
  return em.execute<Array<{ id: string }>>(INSERT_BATCH, [entries]);
}

const FIND_FIRST = `select o.id, o.webhook_id, o.dedupe_key from webhook_outbox o
  join jsonb_to_recordset(?::jsonb) as k(webhook_id text, dedupe_key text) on o.webhook_id = k.webhook_id and o.dedupe_key = k.dedupe_key`;

/** The entries already written for the webhook and delivery id pairs of `keys` (storable JSON `[{ webhook_id, dedupe_key }]`). */
export async function outboxEntriesByDeliveryId(
  em: EntityManager,
  keys: string,
): Promise<Array<{ id: string; webhook_id: string; dedupe_key: string }>> {
  return em.execute<Array<{ id: string; webhook_id: string; dedupe_key: string }>>(FIND_FIRST, [keys]);
}

/**
 * Up to `limit` pending entries, locked until `tx` ends, taken fairly across workspaces: each
 * workspace with pending entries gets its oldest one before any gets a second, and so on, so a
 * workspace that floods its webhooks does not make the others' requests wait behind its backlog.
 * `skip locked`: an entry another instance is dispatching is left to it, so no entry is
 * dispatched twice at once. The workspaces are found by a loose index scan (one index probe per
 * workspace, not a scan of the backlog) on `webhook_outbox_pending_workspace_idx`.
 */
export async function lockPendingOutbox(
  tx: EntityManager,
  limit: number,
): Promise<Array<{ id: string; webhook_id: string; payload: unknown; run_id: string }>> {
  return tx.execute<Array<{ id: string; webhook_id: string; payload: unknown; run_id: string }>>(FAIR_PENDING, [limit, limit]);
}

const FAIR_PENDING = `
  with recursive pending_workspaces(workspace_id) as (
    (select workspace_id from webhook_outbox where status = 'pending' order by workspace_id limit 1)
    union all
    select (select o.workspace_id from webhook_outbox o
             where o.status = 'pending' and o.workspace_id > w.workspace_id
             order by o.workspace_id limit 1)
      from pending_workspaces w where w.workspace_id is not null
  ),
  turns as (
    select e.id, e.created_at, e.turn
      from pending_workspaces w
      cross join lateral (
        select id, created_at, row_number() over (order by created_at) as turn
          from webhook_outbox
         where workspace_id = w.workspace_id and status = 'pending'
         order by created_at limit ?
      ) e
     where w.workspace_id is not null
     order by e.turn, e.created_at
     limit ?
  )
  select o.id, o.webhook_id, o.payload, o.run_id
    from webhook_outbox o
   where o.id in (select id from turns) and o.status = 'pending'
   order by o.created_at
   for update of o skip locked`;

/** Fails the entries of `ids` (JSON array) with `error`; they are not dispatched again. */
export async function failOutboxEntries(tx: EntityManager, ids: string, error: string): Promise<void> {
  await tx.execute(`update webhook_outbox set status = 'failed', last_error = ? where id in (select jsonb_array_elements_text(?::jsonb))`, [
    error,
    ids,
  ]);
}

/** Marks the entries of `ids` (JSON array) dispatched now, one attempt more. */
export async function markOutboxDispatched(tx: EntityManager, ids: string): Promise<void> {
  await tx.execute(
    `update webhook_outbox set status = 'dispatched', dispatched_at = now(), attempts = attempts + 1 where id in (select jsonb_array_elements_text(?::jsonb))`,
    [ids],
  );
}

/** Records a failed start of each entry of `failures` (storable JSON `[{ id, error }]`): one attempt more, the entry stays pending. */
export async function recordOutboxStartFailures(tx: EntityManager, failures: string): Promise<void> {
  await tx.execute(
    `update webhook_outbox o set attempts = o.attempts + 1, last_error = f.error from jsonb_to_recordset(?::jsonb) as f(id text, error text) where o.id = f.id`,
    [failures],
  );
}

/** Which of the given runs are still `queued` (not yet picked up by a worker). */
export async function stillQueuedRunIds(em: EntityManager, runIds: string[]): Promise<string[]> {
  const rows = await em.execute<Array<{ id: string }>>(
    `select id from runs where id in (select jsonb_array_elements_text(?::jsonb)) and status = 'queued'`,
    [JSON.stringify(runIds)],
  );
  return rows.map((r) => r.id);
}
