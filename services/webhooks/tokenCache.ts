import type { EventManager, EventSubscriber, FlushEventArgs } from '@mikro-orm/core';
import type { ResolvedWebhook } from './inbound';

/**
 * Entities whose changes can change what a webhook token resolves to: the webhook itself
 * (enable, disable, token rotation), its workflow (deploy, disable, trash, delete), the
 * workflow's versions, and its destination and the destination's activation.
 */
const WATCHED_ENTITIES = new Set(['Webhook', 'Workflow', 'WorkflowVersion', 'WorkflowTarget', 'TargetActivation']);

/** More distinct tokens than this in one TTL clears the cache rather than growing it. */
const MAX_ENTRIES = 10_000;

/** A transaction that flushed a watched change commits within this long (else its commit clears nothing extra). */
const COMMIT_WINDOW_MS = 60_000;

/**
 * Resolved webhook tokens of the invoke route, kept for a short TTL. Any flushed change to a
 * watched entity clears the whole cache (changes are rare next to invocations), and so does
 * the commit of the transaction that made it. A lookup that started before a clear does not
 * store its result, so a read of the old state cannot outlive the change. Other API processes
 * see a change after at most the TTL; the outbox dispatcher resolves every entry again before
 * it starts a run, so a stale acceptance never runs a disabled workflow.
 */
export class WebhookTokenCache {
  private readonly entries = new Map<string, { resolved: ResolvedWebhook; expiresAt: number }>();
  private generation = 0;
  private lastWatchedFlushAt = -Infinity;

  constructor(private readonly ttlMs: number) {}

  /** The cached resolution of `key`, else `load()`'s (null results are not kept). */
  async resolve(key: string, load: () => Promise<ResolvedWebhook>): Promise<ResolvedWebhook> {
    const now = Date.now();
    const hit = this.entries.get(key);
    if (hit && hit.expiresAt > now) return hit.resolved;
    const generation = this.generation;
    const resolved = await load();
    if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
    if (this.ttlMs > 0 && generation === this.generation) this.entries.set(key, { resolved, expiresAt: now + this.ttlMs });
    return resolved;
  }

  /** Forgets every resolution. */
  invalidate(): void {
    this.generation++;
    this.entries.clear();
  }

  /** Clears the cache whenever `events` sees a watched entity flushed, and again when that transaction commits. */
  watch(events: EventManager): void {
    const subscriber: EventSubscriber = {
      onFlush: (args: FlushEventArgs) => {
        const touched = args.uow.getChangeSets().some((cs) => WATCHED_ENTITIES.has(cs.meta.className));
        if (!touched) return;
        this.lastWatchedFlushAt = Date.now();
        this.invalidate();
      },
      afterFlush: (args: FlushEventArgs) => {
        if (args.uow.getChangeSets().some((cs) => WATCHED_ENTITIES.has(cs.meta.className))) this.invalidate();
      },
      afterTransactionCommit: () => {
        if (Date.now() - this.lastWatchedFlushAt < COMMIT_WINDOW_MS) this.invalidate();
      },
    };
    events.registerSubscriber(subscriber);
  }
}
