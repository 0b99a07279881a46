import { rm } from 'node:fs/promises';
import { dropDatabase, dropOrphanUserDatabaseRoles } from '../../scripts/lib/postgres';
import type { GlobalHandles } from './env';

export default async function globalTeardown(): Promise<void> {
  const handles = (globalThis as unknown as { __svcTest?: GlobalHandles }).__svcTest;
  if (!handles) return;
  await Promise.all(handles.temporal.map((server) => server.stop()));
  for (const url of handles.laneDatabases) await dropDatabase(url).catch(() => undefined);
  if (!handles.pg.embedded) {
    await dropDatabase(handles.pg.url).catch(() => undefined);
    await dropOrphanUserDatabaseRoles(handles.pg.url).catch(() => undefined);
  }
  await handles.pg.stop();
  await rm(handles.tmp, { recursive: true, force: true });
}
