import type { EntityManager } from '@mikro-orm/postgresql';
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

interface Pending {
  entry: OutboxEntry;
  resolve(result: OutboxAcceptance): void;
  reject(err: unknown): void;
}

/** Rows of one INSERT at most. */
const MAX_BATCH = 500;
/** Batches being written at once; new requests gather while these are on the wire. */
const MAX_IN_FLIGHT = 2;

/** The row values, one JSON document per batch, so the statement text never changes with the batch size. */
/**
 * Group commit for the webhook outbox. Requests that arrive while earlier batches are being
 * written are gathered and inserted with one multi-row INSERT (its own implicit transaction);
 * each caller is answered only after that statement returned, so its row is committed.
 * Entries with the same webhook and delivery id share one row: the first one in the batch is
 * written, the others (and those that conflict with an earlier row) get that row's id,
 * `deduplicated`. When a batch fails, its entries are written again one by one, so one bad
 * row fails only its own request. `onCommitted` runs after every batch that wrote new rows.
 */
export class OutboxWriter {
  private queue: Pending[] = [];
  private inFlight = 0;
  private scheduled = false;
  private readonly listeners: Array<() => void> = [];

  constructor(
    private readonly em: () => EntityManager,
    private readonly runIdOf: (outboxId: string) => string,
  ) {}

  /** Writes `entry` with the next batch; resolves once its row is durable. */
  accept(entry: OutboxEntry): Promise<OutboxAcceptance> {
    return new Promise((resolve, reject) => {
      this.queue.push({ entry, resolve, reject });
      this.schedule();
    });
  }

  /** Calls `listener` after each batch that wrote new rows (the dispatcher's wake-up). */
  onCommitted(listener: () => void): void {
    this.listeners.push(listener);
  }

  private schedule(): void {
    if (this.scheduled || this.inFlight >= MAX_IN_FLIGHT || this.queue.length === 0) return;
    this.scheduled = true;
    // Requests parsed in the same turn of the event loop join this batch.
    setImmediate(() => {
      this.scheduled = false;
      while (this.inFlight < MAX_IN_FLIGHT && this.queue.length > 0) {
        const batch = this.queue.splice(0, MAX_BATCH);
        this.inFlight++;
        void this.write(batch).finally(() => {
          this.inFlight--;
          this.schedule();
        });
      }
    });
  }

  private async write(batch: Pending[]): Promise<void> {
    // Same webhook and delivery id within the batch: the first is the leader, the rest follow it.
    const leaders: Array<{ id: string; pending: Pending; followers: Pending[] }> = [];
    const byKey = new Map<string, (typeof leaders)[number]>();
    for (const pending of batch) {
      const key = pending.entry.dedupeKey === null ? null : `${pending.entry.webhookId}\0${pending.entry.dedupeKey}`;
      const leader = key === null ? undefined : byKey.get(key);
      if (leader) {
        leader.followers.push(pending);
        continue;
      }
      const created = { id: newId('whe'), pending, followers: [] };
      leaders.push(created);
      if (key !== null) byKey.set(key, created);
    }
    let outcomes: Map<string, OutboxAcceptance>;
    try {
      outcomes = await this.insert(leaders.map((l) => ({ id: l.id, entry: l.pending.entry })));
    } catch {
      // One bad row must not fail the others: write each on its own.
      await Promise.all(
        leaders.map((l) =>
          this.settle(
            l,
            this.insert([{ id: l.id, entry: l.pending.entry }]).then((m) => m.get(l.id)!),
          ),
        ),
      );
      return;
    }
    for (const leader of leaders) await this.settle(leader, Promise.resolve(outcomes.get(leader.id)!));
  }

  private async settle(leader: { pending: Pending; followers: Pending[] }, outcome: Promise<OutboxAcceptance>): Promise<void> {
    try {
      const result = await outcome;
      leader.pending.resolve(result);
      for (const f of leader.followers) f.resolve({ outboxId: result.outboxId, deduplicated: true });
      if (!result.deduplicated) this.notify();
    } catch (err) {
      leader.pending.reject(err);
      for (const f of leader.followers) f.reject(err);
    }
  }

  private notify(): void {
    for (const listener of this.listeners) listener();
  }

  /** Inserts the rows; those that met an earlier row with their delivery id get that row's id. */
  private async insert(rows: Array<{ id: string; entry: OutboxEntry }>): Promise<Map<string, OutboxAcceptance>> {
    const em = this.em();
    const values = rows.map(({ id, entry }) => ({
      id,
      workspace_id: entry.workspaceId,
      webhook_id: entry.webhookId,
      workflow_id: entry.workflowId,
      payload: entry.payload,
      dedupe_key: entry.dedupeKey,
      run_id: this.runIdOf(id),
    }));
    const inserted = await insertOutboxBatch(em, JSON.stringify(toStorable(values)));
    const written = new Set(inserted.map((r) => r.id));
    const outcomes = new Map<string, OutboxAcceptance>();
    const conflicted = rows.filter((r) => !written.has(r.id));
    if (conflicted.length > 0) {
      const keys = conflicted.map((r) => ({ webhook_id: r.entry.webhookId, dedupe_key: r.entry.dedupeKey }));
      const firsts = await outboxEntriesByDeliveryId(em, JSON.stringify(toStorable(keys)));
      const firstOf = new Map(firsts.map((f) => [`${f.webhook_id}\0${f.dedupe_key}`, f.id]));
      for (const r of conflicted) {
        const first = firstOf.get(`${r.entry.webhookId}\0${r.entry.dedupeKey}`);
        if (!first) throw new Error('The outbox entry this delivery repeats was not found.');
        outcomes.set(r.id, { outboxId: first, deduplicated: true });
      }
    }
    for (const id of written) outcomes.set(id, { outboxId: id, deduplicated: false });
    return outcomes;
  }
}
