import type { ZodError } from 'zod';

/** One readable line for a zod error: `field: problem; other.field: problem`. */
export function describeZodError(error: ZodError, prefix = 'Invalid request'): string {
  const parts = error.issues.slice(0, 5).map((issue) => {
    const where = issue.path.length > 0 ? issue.path.join('.') : 'body';
    return `${where}: ${issue.message}`;
  });
  return `${prefix}: ${parts.join('; ')}`;
}
