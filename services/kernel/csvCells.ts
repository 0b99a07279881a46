/**
 * CSV formula injection (OWASP "CSV Injection"): a spreadsheet opening an exported CSV runs a
 * text cell that starts with `=`, `+`, `-`, `@`, a tab or a carriage return as a formula. Every
 * CSV we write passes its text cells through `neutralizeCsvText`; CSV import undoes it with
 * `restoreCsvText`, so an export imports back to the same values (docs/decisions.md).
 *
 * Typed values (numbers, dates, JSON text) are written unprefixed: `-5` in a number column is a
 * number to a spreadsheet too, and a JSON or ISO date text never starts with a formula trigger
 * other than the minus of a negative number.
 */
const FORMULA_START = /^[=+\-@\t\r]/;
// A leading quote already in the value is doubled when a trigger follows it, so that the import
// strips exactly one quote and the round trip stays exact (`'=x` → `''=x` → `'=x`).
const ESCAPED_START = /^'+[=+\-@\t\r]/;

/** A text cell safe to open in a spreadsheet: prefixed with `'` when it would start a formula. */
export function neutralizeCsvText(text: string): string {
  return FORMULA_START.test(text) || ESCAPED_START.test(text) ? `'${text}` : text;
}

/** The inverse of `neutralizeCsvText` for an imported text cell: one leading `'` before a trigger is dropped. */
export function restoreCsvText(text: string): string {
  return ESCAPED_START.test(text) ? text.slice(1) : text;
}
