/**
 * Scanning a completed file's content. Scanners share one small interface; the built-in one
 * always runs, clamd joins it when CLAMD_ADDRESS is set. Any `infected` verdict quarantines the
 * file; a scanner that fails leaves it `pending_scan` (a later complete scans again).
 */
import net from 'node:net';
import type { Readable } from 'node:stream';
import { fromBuffer } from 'file-type';

export interface ScanInput {
  /** The declared MIME type. */
  mimeType: string;
  sizeBytes: number;
  /** Opens the plaintext content (a range of it when given), streamed. */
  open(range?: { start: number; end: number }): Promise<Readable>;
}

export interface ScanResult {
  verdict: 'clean' | 'infected';
  /** What matched (signature, rule); null when clean. */
  detail: string | null;
}

export interface FileScanner {
  /** Recorded in the scan row: `builtin`, `clamd`. */
  readonly name: string;
  /** Throws when no verdict could be reached (scanner unreachable, protocol error, timeout). */
  scan(input: ScanInput): Promise<ScanResult>;
}

// Assembled from two parts so this source file is not itself the test signature.
const EICAR = Buffer.from('X5O!P%@AP[4\\PZX54(P^)7CC)7}$' + 'EICAR-STANDARD-ANTIVIRUS-TEST-FILE!$H+H*', 'ascii');
const EICAR_MAX_BYTES = 128;
/** file-type reads at most this much of the start of a file. */
const SNIFF_BYTES = 4100;

/** Detected types that are programs or installable packages. */
const EXECUTABLE_TYPES = new Set([
  'application/x-msdownload',
  'application/x-elf',
  'application/x-mach-binary',
  'application/wasm',
  'application/x-deb',
  'application/x-rpm',
  'application/x-shockwave-flash',
  'application/x-google-chrome-extension',
  'application/x-xpinstall',
  'application/x.ms.shortcut',
]);

/** Declared types under which any content is acceptable: nothing to contradict. */
const OPAQUE_DECLARED_TYPES = new Set([
  'application/octet-stream',
  'application/x-executable',
  'application/x-sharedlib',
  'application/x-dosexec',
  'application/vnd.microsoft.portable-executable',
  ...EXECUTABLE_TYPES,
]);

/** Families whose magic bytes file-type recognizes, so a detected type of another family is a contradiction. */
function family(mime: string): string | null {
  const [top] = mime.split('/');
  if (top === 'image') return 'image';
  if (top === 'audio' || top === 'video') return 'audio-video';
  if (mime === 'application/pdf') return 'pdf';
  if (top === 'text' || mime === 'application/json' || mime === 'application/xml' || mime.endsWith('+json') || mime.endsWith('+xml'))
    return 'text';
  return null;
}

/** Magic numbers of executables file-type 16 does not know. */
function ownExecutableMagic(head: Buffer): string | null {
  if (head.length >= 4 && head.readUInt32BE(0) === 0x7f454c46) return 'application/x-elf';
  if (head.length >= 4 && [0xfeedface, 0xfeedfacf, 0xcefaedfe, 0xcffaedfe].includes(head.readUInt32BE(0)))
    return 'application/x-mach-binary';
  return null;
}

/** The standard EICAR test file: the 68-byte string at the start, then at most whitespace, 128 bytes in all. */
export function isEicar(head: Buffer, sizeBytes: number): boolean {
  if (sizeBytes < EICAR.length || sizeBytes > EICAR_MAX_BYTES) return false;
  if (!head.subarray(0, EICAR.length).equals(EICAR)) return false;
  return head.subarray(EICAR.length, sizeBytes).every((b) => b === 0x20 || b === 0x09 || b === 0x0a || b === 0x0d || b === 0x1a);
}

/**
 * Why the content's magic bytes contradict the declared type, or null. Declared types that
 * promise something harmless (images, audio, video, PDF, text and JSON/XML, office formats, …)
 * are contradicted by executable magic (PE, ELF, Mach-O, wasm, packages); image, audio/video,
 * PDF and text types are also contradicted by a recognizable type of another family (a ZIP
 * declared `image/png`). Content whose type cannot be recognized contradicts nothing.
 */
export function magicContradiction(declared: string, detected: string | null): string | null {
  const [mediaType = ''] = declared.split(';');
  const declaredType = mediaType.trim().toLowerCase();
  if (!detected || OPAQUE_DECLARED_TYPES.has(declaredType)) return null;
  if (EXECUTABLE_TYPES.has(detected)) return `executable content (${detected}) declared as ${declaredType}`;
  const want = family(declaredType);
  if (want === null) return null;
  const got = family(detected);
  if (want === 'text' && (got === 'text' || detected === 'image/svg+xml')) return null;
  if (got !== want) return `content is ${detected}, declared as ${declaredType}`;
  return null;
}

/** The built-in scanner: the EICAR test file, and magic bytes that contradict the declared type. */
export function builtinScanner(): FileScanner {
  return {
    name: 'builtin',
    async scan(input) {
      const headBytes = Math.min(input.sizeBytes, SNIFF_BYTES);
      const head = headBytes > 0 ? await readAll(await input.open({ start: 0, end: headBytes - 1 })) : Buffer.alloc(0);
      if (isEicar(head, input.sizeBytes)) return { verdict: 'infected', detail: 'Eicar-Test-Signature' };
      const detected = ownExecutableMagic(head) ?? (head.length > 0 ? ((await fromBuffer(head))?.mime ?? null) : null);
      const contradiction = magicContradiction(input.mimeType, detected);
      return contradiction ? { verdict: 'infected', detail: `mime-mismatch: ${contradiction}` } : { verdict: 'clean', detail: null };
    },
  };
}

/**
 * ClamAV's daemon over its INSTREAM command: `zINSTREAM\0`, then the content in chunks each
 * prefixed with its length (u32 big-endian), then a zero length; clamd answers
 * `stream: OK`, `stream: <signature> FOUND` or `... ERROR`. The content is streamed, never held.
 * clamd's StreamMaxLength must allow 100 MiB for the largest files (its default is 25 MiB).
 */
export function clamdScanner(address: string, timeoutMs: number): FileScanner {
  return {
    name: 'clamd',
    async scan(input) {
      const reply = await instream(address, await input.open(), timeoutMs);
      const found = /^stream: (.+) FOUND$/.exec(reply);
      if (found?.[1] !== undefined) return { verdict: 'infected', detail: found[1] };
      if (reply === 'stream: OK') return { verdict: 'clean', detail: null };
      throw new Error(`clamd answered ${JSON.stringify(reply.slice(0, 200))}`);
    },
  };
}

const CHUNK_BYTES = 64 * 1024;

function connectOptions(address: string): net.NetConnectOpts {
  if (address.startsWith('unix:')) return { path: address.slice('unix:'.length) };
  const colon = address.lastIndexOf(':');
  return { host: address.slice(0, colon).replace(/^\[|\]$/g, ''), port: Number(address.slice(colon + 1)) };
}

async function instream(address: string, content: Readable, timeoutMs: number): Promise<string> {
  const socket = net.connect(connectOptions(address));
  let replyText = '';
  const reply = new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => socket.destroy(new Error(`clamd did not answer within ${timeoutMs} ms`)), timeoutMs);
    socket.on('data', (chunk) => {
      replyText += chunk.toString('utf8');
      if (replyText.includes('\0')) socket.end();
    });
    socket.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    socket.on('close', () => {
      clearTimeout(timer);
      if (replyText) resolve((replyText.split('\0')[0] ?? '').trim());
      else reject(new Error('clamd closed the connection without an answer'));
    });
  });
  reply.catch(() => undefined);
  const write = (data: Buffer) =>
    new Promise<void>((resolve, reject) => {
      if (socket.destroyed) return reject(new Error('clamd connection closed'));
      socket.write(data, (err) => (err ? reject(err) : resolve()));
    });
  try {
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', reject);
    });
    await write(Buffer.from('zINSTREAM\0', 'ascii'));
    for await (const chunk of content) {
      const buf = chunk as Buffer;
      for (let at = 0; at < buf.length; at += CHUNK_BYTES) {
        const part = buf.subarray(at, at + CHUNK_BYTES);
        const len = Buffer.alloc(4);
        len.writeUInt32BE(part.length, 0);
        await write(Buffer.concat([len, part]));
      }
    }
    await write(Buffer.alloc(4));
  } catch (err) {
    // clamd may stop reading and answer early (e.g. "INSTREAM size limit exceeded"): prefer its answer.
    content.destroy();
    const answered = await reply.catch(() => null);
    if (answered) return answered;
    socket.destroy();
    throw err;
  }
  return reply;
}

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** The scanners a deployment runs: the built-in one, and clamd when CLAMD_ADDRESS is set (API and worker alike). */
export function fileScannersOf(config: { files: { clamdAddress: string | undefined; clamdTimeoutMs: number } }): FileScanner[] {
  const { clamdAddress, clamdTimeoutMs } = config.files;
  return [builtinScanner(), ...(clamdAddress ? [clamdScanner(clamdAddress, clamdTimeoutMs)] : [])];
}
