import type { SecretTracker } from '../support/secrets';
import { expectStatus, type Run } from './client';
import { chain, type NodeInput } from './graphs';
import type { TestStackHandle } from './stack';
import { deployWorkflow, waitRun } from './workflows';

/**
 * Deploy-and-run helpers for tests that prove no secret comes back: every answer they receive
 * (deploy, execute, the finished run) goes to `tracker`, and each started run's id to `onRun`.
 */
export function trackedRuns(stack: TestStackHandle, tracker: SecretTracker, namePrefix: string, onRun: (runId: string) => void = () => {}) {
  return {
    /** Deploys start → `nodes`; returns the workflow id. */
    async deployed(nodes: NodeInput[], token = stack.ws.token): Promise<string> {
      const { workflowId, deploy } = await deployWorkflow(stack, chain(...nodes), { name: `${namePrefix} ${Math.random()}`, token });
      tracker.seen(JSON.stringify(deploy));
      return workflowId;
    },
    /** Executes a deployed workflow and waits for its run to end. */
    async runToEnd(workflowId: string, token = stack.ws.token): Promise<Run> {
      const res = expectStatus(await stack.as(token).workflows.execute(workflowId, {}), 202, 'execute');
      tracker.seen(res.text);
      onRun(res.body.run.id);
      const run = await waitRun(stack, res.body.run.id, { token });
      tracker.seen(JSON.stringify(run));
      return run;
    },
  };
}
