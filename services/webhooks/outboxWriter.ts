import type { EntityManager } from '@mikro-orm/postgresql';
import { GroupCommit, type GroupCommitStats } from '../kernel/groupCommit';
import { notFound } from '../kernel/errors';
import { newId } from '../kernel/ids';
import { toStorable } from '../kernel/storableText';
import { insertOutboxBatch, outboxEntriesByDeliveryId } from './store';

/** One accepted request on its way into the outbox. */
export interface OutboxEntry {
  workspaceId: string;
  webhookId: string;
  workflowId: string;
  payload: unknown;
  /** The provider's delivery id: a second entry with the same one for the same webhook is deduplicated. */
  dedupeKey: string | null;
}

export interface OutboxAcceptance {
  outboxId: string;
  deduplicated: boolean;
}

/** How the outbox's group commit batches (WEBHOOK_INTAKE_MAX_BATCH, WEBHOOK_INTAKE_MAX_WAIT_MS). */
export interface OutboxBatching {
  /** Rows of one INSERT at most. */
  maxBatch: number;
  /** How long rows gather while another INSERT is on the wire (ms); a lone request never waits. */
  maxWaitMs: number;
}

/** INSERTs on the wire at once: new requests gather while these are written. */
const MAX_IN_FLIGHT = 2;

/** SQLSTATE of a foreign key violation: the webhook row was deleted after its token was resolved. */
const FOREIGN_KEY_VIOLATION = '23503';

/**
 * Group commit for the webhook outbox (services/kernel/groupCommit.ts). Requests gather into one
 * multi-row INSERT (its own implicit transaction); each caller is answered only after that
 * statement returned, so its row is committed. Entries with the same webhook and delivery id
 * share one row: the first one in the statement is written, the others (and those that
 * conflict with an earlier row) get that row's id, `deduplicated`. A row the database refuses
 * fails only its own request (the batch is written again by halves); a webhook deleted since
 * its token was resolved (another API process, within the token cache's TTL) answers 404 like
 * an unknown token. `onCommitted` runs after every batch that wrote new rows.
 */
export class OutboxWriter {
  private readonly writer: GroupCommit<OutboxEntry, OutboxAcceptance>;

  constructor(
    private readonly em: () => EntityManager,
    private readonly runIdOf: (outboxId: string) => string,
    batching: OutboxBatching,
  ) {
    this.writer = new GroupCommit({
      write: (entries) => this.insert(entries),
      maxBatch: batching.maxBatch,
      maxWaitMs: batching.maxWaitMs,
      maxInFlight: MAX_IN_FLIGHT,
    });
  }

  /** Writes `entry` with the next batch; resolves once its row is durable. */
  async accept(entry: OutboxEntry): Promise<OutboxAcceptance> {
    try {
      return await this.writer.enqueue(entry);
    } catch (err) {
      if ((err as { code?: unknown }).code === FOREIGN_KEY_VIOLATION) throw notFound('Webhook not found');
      throw err;
    }
  }

  /** Calls `listener` after each batch that wrote new rows (the dispatcher's wake-up). */
  onCommitted(listener: () => void): void {
    this.writer.onCommitted((results) => {
      if (results.some((r) => !r.deduplicated)) listener();
    });
  }

  /** The group commit's counters (rows, commits, failures) since this process started. */
  stats(): GroupCommitStats {
    return this.writer.stats();
  }

  /**
   * One INSERT for `entries`; an entry that repeats a delivery id (earlier in the batch, or in an
   * earlier row) gets the first entry's id. One outcome per entry, in order.
   */
  private async insert(entries: OutboxEntry[]): Promise<Array<OutboxAcceptance | Error>> {
    // Same webhook and delivery id twice in one INSERT … ON CONFLICT fails it: the first is written, the rest follow it.
    const ids: string[] = [];
    const leaders: Array<{ id: string; entry: OutboxEntry }> = [];
    const leaderOf = new Map<string, string>();
    for (const entry of entries) {
      const key = entry.dedupeKey === null ? null : deliveryKey(entry.webhookId, entry.dedupeKey);
      const earlier = key === null ? undefined : leaderOf.get(key);
      if (earlier) {
        ids.push(earlier);
        continue;
      }
      const id = newId('whe');
      ids.push(id);
      leaders.push({ id, entry });
      if (key !== null) leaderOf.set(key, id);
    }
    const em = this.em();
    const values = leaders.map(({ id, entry }) => ({
      id,
      workspace_id: entry.workspaceId,
      webhook_id: entry.webhookId,
      workflow_id: entry.workflowId,
      payload: entry.payload,
      dedupe_key: entry.dedupeKey,
      run_id: this.runIdOf(id),
    }));
    const written = new Set((await insertOutboxBatch(em, JSON.stringify(toStorable(values)))).map((r) => r.id));
    // Leaders that met an earlier row with their delivery id: that row's id, for them and their followers.
    const firstOf = new Map<string, string>();
    const conflicted = leaders.filter((l) => !written.has(l.id));
    if (conflicted.length > 0) {
      const keys = conflicted.map((l) => ({ webhook_id: l.entry.webhookId, dedupe_key: l.entry.dedupeKey }));
      const firsts = await outboxEntriesByDeliveryId(em, JSON.stringify(toStorable(keys)));
      const byKey = new Map(firsts.map((f) => [deliveryKey(f.webhook_id, f.dedupe_key), f.id]));
      for (const l of conflicted) {
        const first = byKey.get(deliveryKey(l.entry.webhookId, l.entry.dedupeKey!));
        if (first) firstOf.set(l.id, first);
      }
    }
    // Only the first entry that named a written row gets `accepted`.
    const answered = new Set<string>();
    return ids.map((id) => {
      if (written.has(id)) {
        const first = !answered.has(id);
        answered.add(id);
        return { outboxId: id, deduplicated: !first };
      }
      const first = firstOf.get(id);
      // Deleted between the conflict and the lookup (the webhook went): only this entry fails.
      return first ? { outboxId: first, deduplicated: true } : new Error('The outbox entry this delivery repeats was not found.');
    });
  }
}

const deliveryKey = (webhookId: string, dedupeKey: string) => `${webhookId}\0${dedupeKey}`;
