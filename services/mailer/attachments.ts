import { Readable } from 'node:stream';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { BlobStore } from '../kernel/blobs';
import { completeFile, createFile, prepareUpload, stageUpload, storableFileName, type FileScanner } from '../files';
import type { WorkspacePrincipal } from '../kernel/principal';

/** Where inbound attachments become Files: the files area's blob store and scanners. */
export interface AttachmentStore {
  blobs: BlobStore;
  scanners: FileScanner[];
}

export interface InboundAttachment {
  filename: string | null;
  contentType: string;
  content: Buffer;
}

/** At most this many attachments of one message are kept (the rest are listed in the metadata only). */
export const MAX_STORED_ATTACHMENTS = 50;

/** The principal inbound mail acts as when it stores files: the route's workspace, recorded as `mailer:<source>`. */
export function mailerPrincipal(workspaceId: string, source: string): WorkspacePrincipal {
  return {
    kind: 'session',
    sessionId: `mailer:${source}`,
    principalId: `mailer:${source}`,
    userId: `mailer:${source}`,
    workspaceId,
    role: 'admin',
  };
}

/**
 * Stores each attachment as a File through the files service: created, uploaded, completed and
 * scanned like an upload (so a file is `ready`, or `quarantined` when a scanner flags it).
 * Returns the file ids in attachment order.
 */
export async function storeAttachments(
  em: EntityManager,
  store: AttachmentStore,
  principal: WorkspacePrincipal,
  attachments: InboundAttachment[],
): Promise<string[]> {
  const ids: string[] = [];
  for (const [i, a] of attachments.slice(0, MAX_STORED_ATTACHMENTS).entries()) {
    // No one to answer a 400 here: a name with nothing storable left gets a default.
    const name = storableFileName(a.filename ?? '').slice(0, 255) || `attachment-${i + 1}`;
    const created = await createFile(em, { writesDisabled: false }, principal, {
      name,
      mimeType: a.contentType || 'application/octet-stream',
      sizeBytes: a.content.length,
    });
    const file = await prepareUpload(em, principal, created.id);
    const staged = await stageUpload(em, store.blobs, file, Readable.from([a.content]), a.content.length);
    await staged.commit();
    await completeFile(em, store, principal, created.id, {}, { warn: () => undefined });
    ids.push(created.id);
  }
  return ids;
}
