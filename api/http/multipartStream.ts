import type { IncomingHttpHeaders } from 'node:http';
import { Transform, type Readable } from 'node:stream';
import busboy from 'busboy';
import { invalidInput } from '../../services/kernel/errors';
import { HttpError } from './errorMapping';

/** The file part was longer than allowed: answered 413, nothing is kept. */
export class MultipartFileTooLarge extends Error {
  constructor(readonly limit: number) {
    super(`The file is larger than ${limit} bytes.`);
    this.name = 'MultipartFileTooLarge';
  }
}

export interface MultipartLimits {
  /** Largest file part, in bytes. */
  maxFileBytes: number;
  /** Non-file fields accepted, and the largest value of one, in bytes. */
  maxFields: number;
  maxFieldBytes: number;
}

export interface MultipartFile<T> {
  filename: string;
  mimeType: string;
  /** What `onFile` made of the part's stream (e.g. a stored blob). */
  result: T;
}

/**
 * Parses a multipart/form-data request with busboy, streaming its one file part (`fileField`)
 * into `onFile` (nothing is buffered whole) and collecting the text fields. Refuses another
 * content type, a second file, a file in another field, too many or too large fields (400) and a
 * file over `maxFileBytes` (413). `onFile`'s result is returned even if a later part is refused,
 * through `discard`, so the caller can remove what it stored.
 */
export async function readMultipart<T>(
  req: Readable,
  headers: IncomingHttpHeaders,
  opts: {
    fileField: string;
    limits: MultipartLimits;
    onFile(stream: Readable, info: { filename: string; mimeType: string }): Promise<T>;
    discard(result: T): Promise<void>;
  },
): Promise<{ fields: Record<string, string>; file: MultipartFile<T> | null }> {
  const contentType = String(headers['content-type'] ?? '');
  if (!/^multipart\/form-data\s*;.*boundary=/i.test(contentType)) {
    throw invalidInput('The body must be multipart/form-data (with a boundary) carrying the fields and one `file` part.');
  }
  const { maxFileBytes, maxFields, maxFieldBytes } = opts.limits;
  let parser: busboy.Busboy;
  try {
    // One byte over the limit reaches the guard below, which fails the write as it is crossed.
    parser = busboy({
      headers,
      // Browsers and fetch send a file name's UTF-8 bytes as they are; busboy's default reads them as latin1.
      defParamCharset: 'utf8',
      limits: { files: 1, fields: maxFields, fieldSize: maxFieldBytes, fileSize: maxFileBytes + 1, parts: maxFields + 1 },
    });
  } catch (err) {
    throw invalidInput(`The multipart body cannot be read: ${(err as Error).message}`);
  }
  const fields: Record<string, string> = {};
  let problem = null as Error | null;
  const refuse = (err: Error) => {
    problem ??= err;
  };
  let file = null as Promise<MultipartFile<T>> | null;

  parser.on('field', (name, value, info) => {
    if (info.valueTruncated) return refuse(invalidInput(`Field ${name} is longer than ${maxFieldBytes} bytes.`));
    if (name in fields) return refuse(invalidInput(`Field ${name} is given more than once.`));
    fields[name] = value;
  });
  parser.on('file', (name, stream, info) => {
    if (name !== opts.fileField || file) {
      stream.resume();
      return refuse(
        invalidInput(file ? 'Only one file may be uploaded.' : `Unexpected file field ${name}; send the file as \`${opts.fileField}\`.`),
      );
    }
    // The part reaches `onFile` through a guard that errors at the first byte over the limit, so
    // a store writing it fails mid-stream and keeps nothing (rather than storing a truncated
    // part to discard later); the rest of the body is drained unread.
    const guarded = limitedPart(stream, maxFileBytes, () => refuse(new MultipartFileTooLarge(maxFileBytes)));
    const filename = info.filename ?? 'upload';
    file = opts.onFile(guarded, { filename, mimeType: info.mimeType }).then((result) => ({ filename, mimeType: info.mimeType, result }));
    // Observed after parsing ends; without this an early failure would be unhandled.
    file.catch(() => undefined);
  });
  parser.on('filesLimit', () => refuse(invalidInput('Only one file may be uploaded.')));
  parser.on('fieldsLimit', () => refuse(invalidInput(`At most ${maxFields} fields are accepted.`)));
  parser.on('partsLimit', () => refuse(invalidInput(`At most ${maxFields + 1} parts are accepted.`)));

  await new Promise<void>((resolve, reject) => {
    parser.on('close', resolve);
    parser.on('error', (err: Error) => reject(invalidInput(`The multipart body cannot be read: ${err.message}`)));
    req.on('error', reject);
    req.pipe(parser);
  });

  let stored: MultipartFile<T> | null = null;
  if (file) {
    try {
      stored = await file;
    } catch (err) {
      throw asHttp(problem ?? err);
    }
  }
  if (problem) {
    if (stored) await opts.discard(stored.result).catch(() => undefined);
    throw asHttp(problem);
  }
  return { fields, file: stored };
}

/** `part` through a counter that fails with MultipartFileTooLarge past `maxBytes`, then drains `part`. */
function limitedPart(part: Readable, maxBytes: number, onLimit: () => void): Readable {
  let seen = 0;
  const guard = new Transform({
    transform(chunk: Buffer, _enc, done) {
      seen += chunk.length;
      if (seen <= maxBytes) return done(null, chunk);
      onLimit();
      part.unpipe(guard);
      part.resume();
      done(new MultipartFileTooLarge(maxBytes));
    },
  });
  part.on('error', (err) => guard.destroy(err));
  // However the consumer stops (done, failed, destroyed), the rest of the part is drained so the parser reads on.
  guard.on('close', () => {
    part.unpipe(guard);
    part.resume();
  });
  return part.pipe(guard);
}

const asHttp = (err: unknown) => (err instanceof MultipartFileTooLarge ? new HttpError(413, err.message) : err);
