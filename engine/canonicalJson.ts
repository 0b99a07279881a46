import stringify from 'safe-stable-stringify';

/**
 * JSON with object keys sorted at every depth, so equal values give equal text (request
 * fingerprints, candidate version ids, switch-case matching). `undefined` gives `'null'`.
 * Pure and deterministic: safe to call in workflow code.
 *
 * Caveat: unlike JSON.stringify, a circular reference becomes the string "[Circular]" instead
 * of throwing; BigInts are written as numbers.
 */
export function canonicalJson(value: unknown): string {
  return stringify(value) ?? 'null';
}
