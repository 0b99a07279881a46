import { z } from 'zod';
import { FILE_STATUSES } from '../../engine/statuses';
import { timestampFields, url } from './index';

/** Response schemas of the files area (the `data` of envelope answers). */

export const fileSchema = z
  .strictObject({
    id: z.string().describe('UUID'),
    name: z.string(),
    mimeType: z.string(),
    sizeBytes: z.number().int(),
    sha256: z
      .string()
      .regex(/^[0-9a-f]{64}$/)
      .describe('64 zeros until the file is completed'),
    status: z.enum(FILE_STATUSES),
    ...timestampFields,
  })
  .meta({ id: 'File' });

export const fileEnvelopeSchema = z.strictObject({ file: fileSchema });

export const createdFileSchema = z.strictObject({
  file: fileSchema,
  uploadUrl: url.describe('PUT the raw content here'),
  completeUrl: url.describe('POST here once the content is uploaded'),
});

export const fileListSchema = z.strictObject({ files: z.array(fileSchema), nextCursor: z.string().nullable() });

export const storedBlobSchema = z.strictObject({
  blob: z.strictObject({
    key: z.string().describe("The blob's opaque id (not a storage location)"),
    size: z.number().int(),
    sha256: z.string().regex(/^[0-9a-f]{64}$/),
  }),
});
