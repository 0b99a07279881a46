import type { EntityManager } from '@mikro-orm/postgresql';
import { toStorable } from '../kernel/storableText';
import { execOf } from './store';
import { newId, randomToken, sha256Hex } from '../kernel/ids';
import { outboxRunId } from '../webhooks/inbound';

export { execOf, type Exec } from './store';

interface SourceRef {
  id: string;
  workspaceId: string;
  workflowId: string;
  targetId: string;
}

/**
 * The hidden webhook row (kind `rss` or `ci`) whose outbox entries run a source's destination:
 * `nodeId` is the trigger a CI run starts at (`rss:<sourceId>` for RSS, which starts at the default trigger).
 */
export async function sourceWebhookId(em: EntityManager, source: SourceRef, kind: 'rss' | 'ci', nodeId: string): Promise<string> {
  const find = async () =>
    (await execOf(em)(`select id from webhooks where kind = ? and target_id = ? and node_id = ?`, [kind, source.targetId, nodeId]))[0]
      ?.id as string | undefined;
  const existing = await find();
  if (existing) return existing;
  const now = new Date();
  await execOf(em)(
    `insert into webhooks (id, workspace_id, workflow_id, target_id, node_id, kind, token_digest, enabled, config, created_at, updated_at)
     values (?, ?, ?, ?, ?, ?, ?, true, '{}', ?, ?) on conflict do nothing`,
    [
      newId('wh'),
      source.workspaceId,
      source.workflowId,
      source.targetId,
      nodeId,
      kind,
      sha256Hex(`${kind}\0${source.id}\0${randomToken(16)}`),
      now,
      now,
    ],
  );
  return (await find())!;
}

/** Adds one event to the webhook outbox; false when `dedupeKey` was already there (never a second run). */
export async function enqueueSourceEvent(
  tx: EntityManager,
  source: SourceRef,
  webhookId: string,
  payload: unknown,
  dedupeKey: string,
): Promise<boolean> {
  const id = newId('whe');
  const inserted = await execOf(tx)(
    `insert into webhook_outbox (id, workspace_id, webhook_id, workflow_id, payload, dedupe_key, status, run_id, attempts, created_at)
     values (?, ?, ?, ?, ?::jsonb, ?, 'pending', ?, 0, now())
     on conflict (webhook_id, dedupe_key) where dedupe_key is not null do nothing returning id`,
    [id, source.workspaceId, webhookId, source.workflowId, JSON.stringify(toStorable(payload)), dedupeKey.slice(0, 500), outboxRunId(id)],
  );
  return inserted.length > 0;
}

/** Whether a destination runs now (enabled, with an active version); polls of others are skipped. */
export async function targetIsLive(em: EntityManager, targetId: string): Promise<boolean> {
  const [target] = await execOf(em)(`select enabled, active_version_id from workflow_targets where id = ?`, [targetId]);
  return Boolean(target?.enabled && target.active_version_id);
}
