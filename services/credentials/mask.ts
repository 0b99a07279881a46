/**
 * The one shape of `maskedValue`, the same for every type: the first 4 and last 2 characters
 * of the secret around 8 bullets, or 8 bullets alone when the secret is shorter than 12
 * characters (so a short secret shows nothing, and no mask reveals a length).
 */
const BULLETS = '••••••••';
const MIN_REVEALING_LENGTH = 12;

export function maskSecret(secret: string): string {
  const chars = [...secret];
  if (chars.length < MIN_REVEALING_LENGTH) return BULLETS;
  return `${chars.slice(0, 4).join('')}${BULLETS}${chars.slice(-2).join('')}`;
}

/**
 * Replaces every occurrence of the secrets (and of their base64 forms, as sent in HTTP Basic
 * and SMTP AUTH) in `text` with `[redacted]`. Used on anything a credential's use produces
 * that leaves the process: test messages, http node outputs, failure messages.
 */
export function redactSecrets(text: string, secrets: string[]): string {
  let out = text;
  for (const secret of secrets) {
    if (secret.length < 4) continue; // too short to search for without mangling ordinary text
    for (const form of [secret, Buffer.from(secret, 'utf8').toString('base64'), encodeURIComponent(secret)]) {
      if (form.length >= 4 && out.includes(form)) out = out.split(form).join('[redacted]');
    }
  }
  return out;
}

/** `redactSecrets` over every string (keys included) of a JSON-like value. */
export function redactDeep<T>(value: T, secrets: string[]): T {
  if (secrets.length === 0) return value;
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return redactSecrets(v, secrets);
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [redactSecrets(k, secrets), walk(x)]));
    return v;
  };
  return walk(value) as T;
}
