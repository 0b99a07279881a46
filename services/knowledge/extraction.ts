/**
 * Text extraction of documents: plain text, Markdown, HTML (html-to-text, headings kept as
 * Markdown headings so the chunker can split at them), PDF (pdf2json, a pure-JavaScript port of
 * PDF.js) and JSON (pretty-printed, so keys and values are searchable).
 */
import { convert, type FormatCallback } from 'html-to-text';

export const DOCUMENT_KINDS = ['text', 'markdown', 'html', 'pdf', 'json'] as const;
export type DocumentKind = (typeof DOCUMENT_KINDS)[number];

const BY_MIME: Record<string, DocumentKind> = {
  'text/plain': 'text',
  'text/markdown': 'markdown',
  'text/x-markdown': 'markdown',
  'text/html': 'html',
  'application/xhtml+xml': 'html',
  'application/pdf': 'pdf',
  'application/json': 'json',
  'text/json': 'json',
  'text/csv': 'text',
};
const BY_EXTENSION: Record<string, DocumentKind> = {
  txt: 'text',
  text: 'text',
  log: 'text',
  csv: 'text',
  md: 'markdown',
  markdown: 'markdown',
  html: 'html',
  htm: 'html',
  xhtml: 'html',
  pdf: 'pdf',
  json: 'json',
};
const CANONICAL_MIME: Record<DocumentKind, string> = {
  text: 'text/plain',
  markdown: 'text/markdown',
  html: 'text/html',
  pdf: 'application/pdf',
  json: 'application/json',
};

/**
 * Which extractor a document needs, from its declared media type and then its file name's
 * extension (clients often send application/octet-stream); null when neither is supported.
 */
export function documentKindOf(mimeType: string | undefined, fileName: string | undefined): DocumentKind | null {
  const mime = ((mimeType ?? '').split(';')[0] ?? '').trim().toLowerCase();
  if (BY_MIME[mime]) return BY_MIME[mime];
  const ext = (fileName ?? '').toLowerCase().match(/\.([a-z0-9]+)$/)?.[1];
  if (ext && BY_EXTENSION[ext]) return BY_EXTENSION[ext];
  if (mime.startsWith('text/')) return 'text';
  return null;
}

export const mimeTypeOfKind = (kind: DocumentKind): string => CANONICAL_MIME[kind];

export class ExtractionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ExtractionError';
  }
}

/** Extracted text of `bytes` read as `kind`. Throws ExtractionError for unreadable content. */
export async function extractText(bytes: Buffer, kind: DocumentKind): Promise<string> {
  switch (kind) {
    case 'text':
    case 'markdown':
      return decodeUtf8(bytes);
    case 'html':
      return htmlToText(decodeUtf8(bytes));
    case 'json':
      return jsonToText(decodeUtf8(bytes));
    case 'pdf':
      return pdfToText(bytes);
  }
}

function decodeUtf8(bytes: Buffer): string {
  // A BOM is not content; NUL cannot be stored in PostgreSQL text.
  return bytes
    .toString('utf8')
    .replace(/^\uFEFF/, '')
    .replaceAll('\u0000', '');
}

const markdownHeading: FormatCallback = (elem, walk, builder) => {
  const level = Number(/^h([1-6])$/i.exec(elem.name ?? '')?.[1] ?? 1);
  builder.openBlock({ leadingLineBreaks: 2 });
  builder.addInline(`${'#'.repeat(level)} `);
  walk(elem.children, builder);
  builder.closeBlock({ trailingLineBreaks: 2 });
};

/** HTML (or Confluence storage format) to text; headings become `#` lines, links keep their text only. */
export function htmlToText(html: string): string {
  return convert(html, {
    wordwrap: false,
    formatters: { markdownHeading },
    selectors: [
      ...[1, 2, 3, 4, 5, 6].map((n) => ({ selector: `h${n}`, format: 'markdownHeading' })),
      { selector: 'a', options: { ignoreHref: true } },
      { selector: 'img', format: 'skip' },
      { selector: 'script', format: 'skip' },
      { selector: 'style', format: 'skip' },
    ],
  });
}

function jsonToText(text: string): string {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new ExtractionError(`The document is not valid JSON: ${(err as Error).message}`);
  }
  return JSON.stringify(value, null, 2);
}

interface PdfParser {
  on(event: 'pdfParser_dataReady', cb: () => void): void;
  on(event: 'pdfParser_dataError', cb: (err: { parserError: unknown } | Error) => void): void;
  parseBuffer(buffer: Buffer, verbosity?: number): void;
  getRawTextContent(): string;
  destroy?(): void;
}

async function pdfToText(bytes: Buffer): Promise<string> {
  // pdf2json reads `buffer.buffer` from offset 0: give it a buffer that owns its memory.
  const owned = Buffer.alloc(bytes.length);
  bytes.copy(owned);
  // Loaded on first use: its PDF.js port is large and only PDFs need it.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const PDFParser = require('pdf2json') as new (context: null, needRawText: number) => PdfParser;
  const parser = new PDFParser(null, 1);
  const raw = await new Promise<string>((resolve, reject) => {
    parser.on('pdfParser_dataReady', () => resolve(parser.getRawTextContent()));
    parser.on('pdfParser_dataError', (err) => {
      const cause = err instanceof Error ? err.message : String(err.parserError);
      reject(new ExtractionError(`The PDF could not be read: ${cause.replace(/^(Error: )+/, '')}`));
    });
    parser.parseBuffer(owned, -1);
  });
  parser.destroy?.();
  // Page breaks become blank lines; pdf2json ends lines with CRLF.
  return raw.replace(/-{16}Page \(\d+\) Break-{16}/g, '\n\n').replace(/\r\n/g, '\n');
}
