/** Token chunking (services/knowledge/chunking.ts) and search fusion (services/knowledge/search.ts): pure functions. */
import { chunkText, countTokens, normaliseText } from '../../../../services/knowledge/chunking';
import { fuse } from '../../../../services/knowledge/search';

const settings = (max: number, overlap = 0, min = 0) => ({ minChunkSizeChars: min, maxChunkSizeTokens: max, overlapTokens: overlap });

describe('chunkText', () => {
  test('a short text is one chunk with its offsets', () => {
    expect(chunkText('  Hello world.  ', settings(64))).toEqual([
      { ordinal: 0, content: 'Hello world.', heading: null, tokenCount: 3, charStart: 0, charEnd: 12 },
    ]);
    expect(chunkText(' \n\n ', settings(64))).toEqual([]);
  });

  test('sections start at headings and carry the heading path', () => {
    const text =
      '# Guide\n\nIntro text that is long enough.\n\n## Install\n\nRun the installer and wait.\n\n## Use\n\nOpen the app.\n\n# Appendix\n\nMore.';
    const chunks = chunkText(text, settings(12, 0, 10));
    expect(chunks.map((c) => c.heading)).toEqual(['Guide', 'Guide > Install', 'Guide > Use', 'Appendix']);
    for (const c of chunks) expect(normaliseText(text).slice(c.charStart, c.charEnd)).toBe(c.content);
  });

  test('sections below minChunkSizeChars join the next; a short last chunk joins the one before', () => {
    const text = '# A\n\nx\n\n# B\n\ny\n\n# C\n\nz';
    expect(chunkText(text, settings(200, 0, 100)).length).toBe(1);
    expect(chunkText(text, settings(200, 0, 0)).length).toBe(3);
  });

  test('long sections split at paragraphs, then sentences, never over the maximum, with overlap inside the section', () => {
    const paragraph = (n: number) => Array.from({ length: 8 }, (_, i) => `Paragraph ${n} sentence ${i} is here.`).join(' ');
    const text = [1, 2, 3, 4].map(paragraph).join('\n\n');
    const chunks = chunkText(text, settings(40, 10));
    expect(chunks.length).toBeGreaterThan(4);
    for (const c of chunks) {
      expect(c.tokenCount).toBeLessThanOrEqual(40);
      expect(c.tokenCount).toBe(countTokens(c.content));
      expect(c.content).toMatch(/^Paragraph \d sentence \d/);
      expect(c.content).toMatch(/\.$/);
    }
    const overlapping = chunks.slice(1).filter((c, i) => c.charStart < chunks[i].charEnd);
    expect(overlapping.length).toBeGreaterThan(0);
  });

  test('text without separators is cut at token boundaries as a last resort', () => {
    const word = 'abcdefghij'.repeat(200);
    const chunks = chunkText(word, settings(32));
    expect(chunks.length).toBeGreaterThan(1);
    for (const c of chunks) expect(c.tokenCount).toBeLessThanOrEqual(32);
    expect(chunks.map((c) => c.content).join('')).toBe(word);
  });
});

describe('fuse (reciprocal rank fusion, k = 60)', () => {
  test('scores add 1 / (60 + rank) per list; provenance names the lists that found each chunk', () => {
    const fused = fuse(
      [
        { id: 'a', score: 3 },
        { id: 'b', score: 2 },
      ],
      [
        { id: 'b', score: 0.9 },
        { id: 'c', score: 0.8 },
      ],
      10,
    );
    expect(fused).toEqual([
      { id: 'b', score: 1 / 62 + 1 / 61, provenance: 'hybrid', ranks: { keyword: 2, vector: 1 } },
      { id: 'a', score: 1 / 61, provenance: 'keyword', ranks: { keyword: 1, vector: null } },
      { id: 'c', score: 1 / 62, provenance: 'vector', ranks: { keyword: null, vector: 2 } },
    ]);
    expect(fuse([{ id: 'a', score: 1 }], [], 0)).toEqual([]);
  });
});
