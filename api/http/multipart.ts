/**
 * multipart/form-data requests, parsed with busboy with its limits set: one file of at most
 * `maxFileBytes` (413 past it), a few small text fields. A body whose Content-Length already
 * says it is too large is refused before any of it is read.
 */
import busboy from 'busboy';
import type { AppContext } from '../context';
import { invalidInput, tooLarge, unsupportedMediaType, type DomainError } from '../../services/kernel/errors';

export interface UploadedFile {
  fileName: string;
  mimeType: string;
  data: Buffer;
}

export interface MultipartOptions {
  /** Name of the one file field. */
  fileField: string;
  maxFileBytes: number;
  /** Names of the text fields the route takes; any other field is a 400. */
  fields: readonly string[];
  /** Whether the file's name and MIME type are acceptable (415 otherwise). */
  accept: (fileName: string, mimeType: string) => boolean;
  /** What the 413 and 415 say. */
  messages: { tooLarge: string; unsupported: string };
}

const MAX_FIELD_BYTES = 64 * 1024;
/** Room for the text fields and part headers next to the file. */
const OVERHEAD_BYTES = 256 * 1024;

export async function readMultipart(
  ctx: AppContext,
  opts: MultipartOptions,
): Promise<{ fields: Record<string, string>; file: UploadedFile | null }> {
  if (!ctx.is('multipart/form-data')) throw unsupportedMediaType('Content-Type must be multipart/form-data.');
  const declared = Number(ctx.get('content-length'));
  if (Number.isFinite(declared) && declared > opts.maxFileBytes + OVERHEAD_BYTES) throw tooLarge(opts.messages.tooLarge);

  return new Promise((resolve, reject) => {
    let bb: busboy.Busboy;
    try {
      bb = busboy({
        headers: ctx.req.headers,
        // Browsers and fetch send a file name's UTF-8 bytes as they are; busboy's default reads them as latin1.
        defParamCharset: 'utf8',
        limits: {
          fileSize: opts.maxFileBytes,
          files: 1,
          fields: opts.fields.length,
          fieldSize: MAX_FIELD_BYTES,
          parts: opts.fields.length + 1,
        },
      });
    } catch {
      reject(invalidInput('Malformed multipart/form-data body.'));
      return;
    }
    const fields: Record<string, string> = {};
    let file: UploadedFile | null = null;
    let failure: DomainError | null = null;
    const fail = (err: DomainError) => {
      failure ??= err;
    };

    bb.on('file', (name, stream, info) => {
      if (name !== opts.fileField) {
        fail(invalidInput(`Unexpected file field "${name}"; send the file as "${opts.fileField}".`));
        stream.resume();
        return;
      }
      if (!opts.accept(info.filename ?? '', info.mimeType ?? '')) {
        fail(unsupportedMediaType(opts.messages.unsupported));
        stream.resume();
        return;
      }
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => {
        if (!failure) chunks.push(chunk);
      });
      stream.on('limit', () => fail(tooLarge(opts.messages.tooLarge)));
      stream.on('end', () => {
        if (!failure) file = { fileName: info.filename ?? '', mimeType: info.mimeType ?? '', data: Buffer.concat(chunks) };
      });
    });
    bb.on('field', (name, value, info) => {
      if (!opts.fields.includes(name))
        fail(invalidInput(`Unknown field "${name}"; the fields are ${opts.fileField}, ${opts.fields.join(', ')}.`));
      else if (info.valueTruncated) fail(invalidInput(`Field "${name}" is over ${MAX_FIELD_BYTES} bytes.`));
      else fields[name] = value;
    });
    bb.on('filesLimit', () => fail(invalidInput(`Send one file, as "${opts.fileField}".`)));
    bb.on('fieldsLimit', () => fail(invalidInput('Too many fields.')));
    bb.on('partsLimit', () => fail(invalidInput('Too many parts.')));
    bb.on('error', () => reject(failure ?? invalidInput('Malformed multipart/form-data body.')));
    bb.on('close', () => (failure ? reject(failure) : resolve({ fields, file })));
    ctx.req.on('aborted', () => reject(invalidInput('The request was aborted.')));
    ctx.req.pipe(bb);
  });
}
