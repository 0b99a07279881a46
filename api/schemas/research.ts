import { z } from 'zod';
import { RESEARCH_STATUSES } from '../../engine/statuses';
import { isoDate, timestampFields } from './index';

/** Response schemas of the research area (the `data` of envelope answers). */

export const researchSourceSchema = z
  .strictObject({
    id: z.string(),
    runId: z.string(),
    canonicalUrl: z.string(),
    title: z.string().nullable(),
    fetchedAt: isoDate,
    sha256: z
      .string()
      .regex(/^[0-9a-f]{64}$/)
      .describe('SHA-256 of snapshotText (UTF-8)'),
    snapshotText: z.string().describe('Readable text of the page'),
    snapshotFileId: z.string().nullable().describe('null unless a caller stored one'),
    createdAt: isoDate,
  })
  .meta({ id: 'ResearchSource' });

export const researchRunSchema = z
  .strictObject({
    id: z.string().describe('`research_` + 32 hex characters'),
    workspaceId: z.string(),
    createdById: z.string().describe("The key's user"),
    query: z.string(),
    sourceUrls: z.array(z.string()),
    limits: z.record(z.string(), z.number()).describe('The limits as sent (may be empty); defaults apply at execution'),
    aiProvider: z
      .enum(['cliA', 'cliB'])
      .optional()
      .describe('Our extension: the connected local AI CLI that synthesizes the answer (absent: the model endpoint)'),
    aiModel: z.string().optional().describe('Our extension: the model asked for'),
    status: z.enum(RESEARCH_STATUSES),
    resultDocumentId: z.string().nullable().describe('Set on success: the answer document in the "Research" knowledge base'),
    error: z.string().nullable(),
    cancelRequestedAt: isoDate.nullable(),
    startedAt: isoDate.nullable(),
    finishedAt: isoDate.nullable(),
    ...timestampFields,
    sources: z.array(researchSourceSchema).describe('Stored snapshots, oldest first'),
  })
  .meta({ id: 'ResearchRun' });

export const researchRunEnvelope = z.strictObject({ run: researchRunSchema });
export const researchRunListSchema = z.strictObject({ runs: z.array(researchRunSchema), nextCursor: z.string().nullable() });

export const researchCreatedSchema = z.strictObject({
  run: researchRunSchema,
  deduplicated: z.boolean(),
  dispatch: z.union([
    z.strictObject({
      dispatched: z.literal(true),
      queued: z.boolean(),
      mode: z.literal('temporal').describe("The spec's queue is Temporal here"),
    }),
    z.strictObject({ dispatched: z.literal(false) }),
  ]),
});
