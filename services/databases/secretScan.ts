/**
 * Recognizes secrets in configuration values, so they never enter a table declared as
 * non-sensitive configuration: well-known key prefixes, PEM private-key blocks, JSON web
 * tokens, credentials in URLs, and long high-entropy tokens. Every string inside a JSON value
 * is scanned. Findings name the kind and where, never the secret.
 */

export interface SecretFinding {
  /** Path inside the scanned value, e.g. `active.apiKey`. */
  path: string;
  kind: string;
}

const PATTERNS: Array<{ kind: string; pattern: RegExp }> = [
  { kind: 'PEM private key', pattern: /-----BEGIN [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----/ },
  { kind: 'AWS access key id', pattern: /\b(AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA)[0-9A-Z]{16}\b/ },
  { kind: 'GitHub token', pattern: /\b(gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{50,})\b/ },
  { kind: 'GitLab token', pattern: /\bglpat-[A-Za-z0-9_-]{20,}\b/ },
  { kind: 'Slack token', pattern: /\bxox[abposr]-[A-Za-z0-9-]{10,}\b/ },
  { kind: 'Stripe key', pattern: /\b(sk|rk)_(live|test)_[A-Za-z0-9]{16,}\b/ },
  { kind: 'OpenAI-style key', pattern: /\bsk-(proj-|ant-)?[A-Za-z0-9_-]{20,}\b/ },
  { kind: 'Google API key', pattern: /\bAIza[0-9A-Za-z_-]{35}\b/ },
  { kind: 'service API key', pattern: /\bhise_[A-Za-z0-9_-]{16,}\b/ },
  { kind: 'JSON web token', pattern: /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\b/ },
  { kind: 'credentials in a URL', pattern: /\b[a-z][a-z0-9+.-]*:\/\/[^\s/:@]+:[^\s/@]+@/i },
];

/** Shannon entropy in bits per character. */
function entropy(text: string): number {
  const counts = new Map<string, number>();
  for (const ch of text) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  let h = 0;
  for (const n of counts.values()) {
    const p = n / text.length;
    h -= p * Math.log2(p);
  }
  return h;
}

/**
 * A token-like run (letters, digits, `+/=_-`, no spaces) of at least 32 characters that mixes
 * character classes and carries at least 4 bits of entropy per character (hex: 40 characters
 * and 3.5 bits), as random keys do and words, ids and sentences do not.
 */
function highEntropyToken(text: string): boolean {
  for (const token of text.match(/[A-Za-z0-9+/=_-]{32,}/g) ?? []) {
    if (/^[0-9a-f]+$/i.test(token)) {
      if (token.length >= 40 && entropy(token) >= 3.5) return true;
      continue;
    }
    const classes = [/[a-z]/, /[A-Z]/, /[0-9]/].filter((r) => r.test(token)).length;
    if (classes >= 3 && entropy(token) >= 4) return true;
  }
  return false;
}

export function scanForSecrets(value: unknown, path: string, out: SecretFinding[] = [], depth = 0): SecretFinding[] {
  if (depth > 64) return out;
  if (typeof value === 'string') {
    const hit = PATTERNS.find((p) => p.pattern.test(value));
    if (hit) out.push({ path, kind: hit.kind });
    else if (highEntropyToken(value)) out.push({ path, kind: 'high-entropy token' });
  } else if (Array.isArray(value)) {
    value.forEach((v, i) => scanForSecrets(v, `${path}[${i}]`, out, depth + 1));
  } else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      scanForSecrets(k, `${path}.${k}`, out, depth + 1);
      scanForSecrets(v, `${path}.${k}`, out, depth + 1);
    }
  }
  return out;
}
