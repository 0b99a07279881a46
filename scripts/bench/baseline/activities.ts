/**
 * The baseline's activities: the same work as the service's steps, written as plain Temporal
 * activities (no sandbox, no outbound guard, no database).
 */
export function createBaselineActivities() {
  return {
    async fib(input: { i: number }): Promise<{ i: number; fib: number }> {
      const f = (n: number): number => (n < 2 ? n : f(n - 1) + f(n - 2));
      return { i: input.i + 1, fib: f(10) };
    },
    async httpGet(url: string): Promise<unknown> {
      const res = await fetch(url);
      return res.json();
    },
    async httpPost(url: string, body: unknown): Promise<unknown> {
      const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      return res.json();
    },
  };
}

export type BaselineActivities = ReturnType<typeof createBaselineActivities>;
