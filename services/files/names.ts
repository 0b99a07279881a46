/**
 * Stored file names: what a user typed or a browser sent, minus the characters that make a
 * name lie about itself. Controls (C0, DEL, C1) break logs, headers and terminals; bidirectional
 * overrides and isolates (U+202A–U+202E, U+2066–U+2069, U+200E, U+200F, U+061C) make
 * `invoice\u202Efdp.exe` display as `invoiceexe.pdf`; invisible zero-width characters (U+200B,
 * U+2060, U+FEFF) make two names look the same. Zero-width joiners (U+200C, U+200D) stay: they
 * shape Persian and Indic text and join emoji, and reorder nothing. docs/decisions.md.
 */
// eslint-disable-next-line no-control-regex
const UNSAFE_IN_NAMES = /[\u0000-\u001f\u007f-\u009f\u061c\u200b\u200e\u200f\u202a-\u202e\u2060\u2066-\u2069\ufeff]/g;

/** The name as stored: unsafe characters removed, then trimmed; may be empty (the caller decides). */
export function storableFileName(raw: string): string {
  return raw.replace(UNSAFE_IN_NAMES, '').trim();
}
