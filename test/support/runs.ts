import { RunSchema, type Run } from '../../db/entities';
import type { TestApp } from './harness';

/**
 * The runs of a workflow once at least `count` exist (read from the database, as event
 * sources start runs in the background), or whatever exists after 20 s: callers assert the
 * exact count, so a second run started in the meantime still fails the test.
 */
export async function runsOfWorkflow(app: TestApp, workflowId: string, count: number): Promise<Run[]> {
  const deadline = Date.now() + 20_000;
  let runs = await app.orm.em.fork().find(RunSchema, { workflowId });
  while (runs.length < count && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    runs = await app.orm.em.fork().find(RunSchema, { workflowId });
  }
  return runs;
}
