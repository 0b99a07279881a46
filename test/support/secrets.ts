/**
 * Tracks the secrets a test file sends and the texts it receives, so one check at the end can
 * say no secret came back (in responses, logs, rows or histories).
 */
export class SecretTracker {
  readonly secrets = new Set<string>();
  readonly texts: string[] = [];

  /** A unique secret, long enough to search for, remembered. */
  secret(label: string): string {
    const s = `${label}-${Math.random().toString(36).slice(2, 12)}-secret`;
    this.secrets.add(s);
    return s;
  }

  add(...secrets: string[]): this {
    for (const s of secrets) this.secrets.add(s);
    return this;
  }

  /** Remembers a text received (a response body) for the final check. */
  seen(text: string): void {
    this.texts.push(text);
  }

  /** `where: secret` for every remembered secret that `text` contains. */
  leaksIn(where: string, text: string): string[] {
    return [...this.secrets].filter((s) => text.includes(s)).map((s) => `${where}: ${s}`);
  }

  /** Leaks in every text seen. */
  leaksInSeen(): string[] {
    return this.texts.flatMap((t, i) => this.leaksIn(`text ${i}`, t));
  }
}
