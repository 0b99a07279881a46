import type { TestApp } from '../support/harness';

/**
 * For a test that changed keys, members or users in SQL, not through the API: resolves once the
 * app's credential cache has heard of the change (services/accounts/credentialCache.ts: another
 * process's changes arrive by LISTEN/NOTIFY, so a request sent at once may race them). A cache
 * that is not listening serves nothing from memory, so the change is read anyway. The wait is a
 * "hung" bound: on a loaded machine the notification took over 10 s to come back.
 */
export async function authCacheSettled(app: TestApp): Promise<void> {
  const cache = app.deps.services.auth.credentials.cache;
  if (await cache.sync(120_000)) return;
  expect(cache.active).toBe(false);
}
