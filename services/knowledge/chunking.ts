/**
 * Token chunking of extracted text (cl100k_base, js-tiktoken). A chunk is one contiguous span of
 * the text, so its offsets point back into the document:
 *
 * 1. The text is cut into sections at Markdown headings (`#`…`######`; HTML headings arrive as
 *    such from extraction). Each chunk records the heading path it starts under.
 * 2. A section longer than the piece budget (`maxChunkSizeTokens - overlapTokens`) is split at
 *    paragraphs, then lines, then sentences, then words, and only then cut at a token boundary.
 * 3. Pieces are merged greedily into chunks of at most `maxChunkSizeTokens`. A section starts a
 *    new chunk unless the current one is still below `minChunkSizeChars`; a chunk that had to end
 *    inside a section makes the next one begin with its last pieces, up to `overlapTokens`.
 * 4. A last chunk below `minChunkSizeChars` joins the one before it when they fit together.
 */
import { getEncoding, type Tiktoken } from 'js-tiktoken';

export interface ChunkingSettings {
  minChunkSizeChars: number;
  maxChunkSizeTokens: number;
  overlapTokens: number;
}

export const DEFAULT_CHUNKING: ChunkingSettings = { minChunkSizeChars: 100, maxChunkSizeTokens: 1024, overlapTokens: 200 };

export interface TextChunk {
  ordinal: number;
  content: string;
  heading: string | null;
  tokenCount: number;
  charStart: number;
  charEnd: number;
}

let encoding: Tiktoken | undefined;
/** The tokenizer (loaded on first use: its ranks are a few megabytes). */
export function tokenizer(): Tiktoken {
  encoding ??= getEncoding('cl100k_base');
  return encoding;
}

export function countTokens(text: string): number {
  return text.length === 0 ? 0 : tokenizer().encode(text).length;
}

interface Span {
  start: number;
  end: number;
  tokens: number;
}

interface Section {
  start: number;
  end: number;
  heading: string | null;
}

const HEADING = /^(#{1,6})[ \t]+(.+?)[ \t#]*$/gm;
/** Paragraphs, lines, sentences, words: each split point is kept at the end of the piece before it. */
const SEPARATORS = [/\n[ \t]*\n\s*/g, /\n+/g, /(?<=[.!?。！？;])\s+/g, /\s+/g];

/** Normalises line breaks and trailing spaces; the offsets of chunks refer to this text. */
export function normaliseText(text: string): string {
  return text
    .replace(/\r\n?/g, '\n')
    .replace(/[ \t]+\n/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

function sectionsOf(text: string): Section[] {
  const sections: Section[] = [];
  const path: Array<{ level: number; title: string }> = [];
  let start = 0;
  let heading: string | null = null;
  for (const m of text.matchAll(HEADING)) {
    const at = m.index ?? 0;
    if (at > start) sections.push({ start, end: at, heading });
    const [, hashes = '', title = ''] = m; // HEADING's two groups are not optional
    const level = hashes.length;
    while (path.length && path.at(-1)!.level >= level) path.pop(); // not empty: checked first
    path.push({ level, title: title.trim() });
    heading = path.map((p) => p.title).join(' > ');
    start = at;
  }
  if (start < text.length) sections.push({ start, end: text.length, heading });
  return sections;
}

function cutAt(text: string, start: number, end: number, separator: RegExp): Array<{ start: number; end: number }> {
  const parts: Array<{ start: number; end: number }> = [];
  const re = new RegExp(separator.source, separator.flags);
  const slice = text.slice(start, end);
  let from = 0;
  for (const m of slice.matchAll(re)) {
    const cut = (m.index ?? 0) + m[0].length;
    if (cut <= from || cut >= slice.length) continue;
    parts.push({ start: start + from, end: start + cut });
    from = cut;
  }
  parts.push({ start: start + from, end });
  return parts.filter((p) => p.end > p.start);
}

/** Cuts a span into windows of at most `budget` tokens, at token boundaries. */
function hardCut(text: string, start: number, end: number, budget: number): Span[] {
  const enc = tokenizer();
  const tokens = enc.encode(text.slice(start, end));
  const out: Span[] = [];
  let at = start;
  for (let i = 0; i < tokens.length; i += budget) {
    const window = tokens.slice(i, i + budget);
    const decoded = enc.decode(window);
    const isLast = i + budget >= tokens.length;
    // A window may end inside a multi-byte character; never stall and never pass the end.
    const next = isLast ? end : Math.min(end, Math.max(at + 1, at + decoded.length));
    out.push({ start: at, end: next, tokens: window.length });
    at = next;
    if (at >= end) break;
  }
  return out;
}

function splitSpan(text: string, start: number, end: number, level: number, budget: number): Span[] {
  const tokens = countTokens(text.slice(start, end));
  if (tokens <= budget) return [{ start, end, tokens }];
  const separator = SEPARATORS[level];
  if (separator === undefined) return hardCut(text, start, end, budget);
  const parts = cutAt(text, start, end, separator);
  if (parts.length <= 1) return splitSpan(text, start, end, level + 1, budget);
  return parts.flatMap((p) => splitSpan(text, p.start, p.end, level + 1, budget));
}

interface Building {
  pieces: Span[];
  tokens: number;
  heading: string | null;
  /** Where the chunk's own content starts (after any overlap carried over). */
  ownStart: number;
}

/** Splits `raw` (extracted text) into chunks; see the module comment for the rules. */
export function chunkText(raw: string, settings: ChunkingSettings): TextChunk[] {
  const text = normaliseText(raw);
  if (text.length === 0) return [];
  const max = settings.maxChunkSizeTokens;
  const overlap = Math.min(settings.overlapTokens, Math.floor(max / 2));
  const pieceBudget = Math.max(1, max - overlap);
  const built: Building[] = [];
  let current: Building | null = null;

  const flush = () => {
    if (current && current.pieces.length) built.push(current);
    current = null;
  };
  // A chunk is only ever built with a piece in it.
  const ownLength = (b: Building) => b.pieces.at(-1)!.end - b.ownStart;

  for (const section of sectionsOf(text)) {
    let firstInSection = true;
    for (const piece of splitSpan(text, section.start, section.end, 0, pieceBudget)) {
      const cur = current;
      const fits = cur !== null && cur.tokens + piece.tokens <= max;
      const joinSection = firstInSection ? cur !== null && ownLength(cur) < settings.minChunkSizeChars : true;
      if (cur && fits && joinSection) {
        cur.pieces.push(piece);
        cur.tokens += piece.tokens;
      } else {
        // Inside a section, the new chunk carries the tail of the one that had to end.
        const carried: Span[] = [];
        if (cur && !firstInSection && overlap > 0) {
          let carriedTokens = 0;
          for (const p of [...cur.pieces].reverse()) {
            if (carriedTokens + p.tokens > overlap) {
              if (carried.length === 0) carried.unshift(...hardCut(text, p.start, p.end, overlap).slice(-1));
              break;
            }
            carried.unshift(p);
            carriedTokens += p.tokens;
          }
        }
        flush();
        const carriedTokens = carried.reduce((n, p) => n + p.tokens, 0);
        current = { pieces: [...carried, piece], tokens: carriedTokens + piece.tokens, heading: section.heading, ownStart: piece.start };
      }
      firstInSection = false;
    }
  }
  flush();

  // A short last chunk joins the one before it when both fit in one chunk.
  const last = built.at(-1);
  const before = built.at(-2);
  if (last && before) {
    const ownTokens = last.pieces.filter((p) => p.start >= last.ownStart).reduce((n, p) => n + p.tokens, 0);
    if (ownLength(last) < settings.minChunkSizeChars && before.tokens + ownTokens <= max) {
      before.pieces.push(...last.pieces.filter((p) => p.start >= last.ownStart));
      before.tokens += ownTokens;
      built.pop();
    }
  }

  const chunks: TextChunk[] = [];
  for (const b of built) {
    const [first] = b.pieces;
    const final = b.pieces.at(-1);
    if (!first || !final) continue; // flush keeps only chunks with pieces
    let start = first.start;
    let end = final.end;
    while (start < end && /\s/.test(text.charAt(start))) start++;
    while (end > start && /\s/.test(text.charAt(end - 1))) end--;
    if (end <= start) continue;
    const content = text.slice(start, end);
    const tokenCount = countTokens(content);
    if (tokenCount > max) {
      // Merged pieces can tokenise a little longer than the sum of their parts: cut the excess off into its own chunk.
      for (const span of hardCut(text, start, end, max)) {
        const piece = text.slice(span.start, span.end).trim();
        if (piece)
          chunks.push({
            ordinal: chunks.length,
            content: piece,
            heading: b.heading,
            tokenCount: countTokens(piece),
            charStart: span.start,
            charEnd: span.end,
          });
      }
      continue;
    }
    chunks.push({ ordinal: chunks.length, content, heading: b.heading, tokenCount, charStart: start, charEnd: end });
  }
  return chunks;
}
