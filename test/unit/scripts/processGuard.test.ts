import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { stopStaleServer, writeOwnerRecord } from '../../../scripts/lib/processGuard';

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

test('a server recorded the moment it was spawned is recognised and stopped by the next start', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'svc-guard-'));
  const child = spawn('/bin/sleep', ['30'], { detached: true, stdio: 'ignore' });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  try {
    const file = path.join(dir, 'server.pid');
    // Recorded at once, as starts do: /proc may still show this process's command line here.
    await writeOwnerRecord(file, child.pid!, ['/bin/sleep', '30']);
    expect(JSON.parse(await readFile(file, 'utf8')).cmdline).toBe('/bin/sleep\u000030\u0000');
    // A record owned by this (still running) process is taken as a leftover only by another
    // owner; pretend the owner is gone by rewriting it.
    const record = JSON.parse(await readFile(file, 'utf8'));
    await writeFile(file, JSON.stringify({ ...record, ownerPid: 999_999_999 }));
    const said = await stopStaleServer(file, { what: 'test server', group: true, signal: 'SIGTERM', graceMs: 5_000 });
    expect(said).toMatch(/test server/);
    await exited;
    expect(alive(child.pid!)).toBe(false);
  } finally {
    if (alive(child.pid!)) child.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true });
  }
});
