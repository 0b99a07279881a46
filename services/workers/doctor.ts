/**
 * The worker doctor: the measured status read as a diagnosis — `blocked` when runs cannot be
 * queued or stored, `attention` when they would wait or the setup is unproven, `ok` otherwise —
 * with blockers, warnings and the next actions to take.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { WorkerHealthDeps } from './checks';
import { extflowBundleSection } from './extflow';
import { deploymentState } from './runtime';
import { START_WORKER_ACTION } from './smokeTests';
import { workerStatus, type WorkerStatus } from './status';

/** Where the caller reached the API, supplied by the HTTP edge (services build no URLs). */
export interface DoctorLinks {
  /** The origin the request was addressed to; reported as `appUrl`. */
  appUrl: string;
  /** How to run a smoke test, as shown in next actions (e.g. `POST /api/v1/workers/smoke-test`). */
  smokeTest: string;
  /** How to prepare or verify a local AI CLI session (e.g. `POST /api/v1/workers/local-ai-cli/session`). */
  localAiCliSession: string;
}

/** What the doctor is asked about besides the workspace. */
export interface DoctorRequest {
  now: Date;
  /** An extflow bundle path to report on (the extflow section). */
  bundlePath?: string;
}

/** Diagnoses the workspace's worker setup as of `now` (which only stamps `checkedAt`). */
export async function workerDoctor(
  deps: WorkerHealthDeps,
  em: EntityManager,
  workspaceId: string,
  request: DoctorRequest,
  links: DoctorLinks,
) {
  const [status, extflowBundle] = await Promise.all([
    workerStatus(deps, em, workspaceId, request.now),
    extflowBundleSection(em, workspaceId, request.bundlePath),
  ]);
  const deployment = deploymentState(deps.config, deps.temporal.namespace);
  const blockers: string[] = [];
  const warnings: string[] = [];
  const nextActions: string[] = [];
  if (!status.database.reachable) {
    blockers.push('The database is unreachable.');
    nextActions.push('Check that PostgreSQL is running and reachable from the API.');
  } else if (status.database.migrationsCurrent === false) {
    blockers.push(`${status.database.pendingMigrations.length} database migration(s) are pending.`);
    nextActions.push('Apply migrations: npm run migrate');
  } else if (status.database.migrationsCurrent === null) {
    warnings.push('Could not check database migrations.');
  }
  if (status.queue.error) {
    blockers.push('Temporal is unreachable; runs cannot be queued.');
    nextActions.push('Check that the Temporal server is running and reachable from the API.');
  } else if (status.queue.workerConcurrency === 0) {
    warnings.push(`No worker is polling the ${status.queue.queueName} task queue; runs will wait until one starts.`);
    nextActions.push(START_WORKER_ACTION);
  }
  if (status.scheduler.error) warnings.push('Could not list Temporal schedules.');
  for (const missing of deployment.missingRequired) {
    blockers.push(`The deployment lacks a required setting: ${missing}.`);
    nextActions.push(`Ask the operator to configure the ${missing}.`);
  }
  diagnoseAgentRuntime(status, links, warnings, nextActions);
  const smoke = status.latestSmokeTest;
  if (!smoke) {
    warnings.push('No smoke test has been run for this workspace.');
    nextActions.push(`Run a smoke test: ${links.smokeTest}`);
  } else if (smoke.status !== 'passed') {
    warnings.push(`The latest smoke test did not pass (${smoke.status}): ${smoke.message}`);
    nextActions.push(`Run a smoke test again once a worker is running: ${links.smokeTest}`);
  }
  return {
    status: blockers.length > 0 ? 'blocked' : warnings.length > 0 ? 'attention' : 'ok',
    workspaceId,
    checkedAt: status.checkedAt,
    source: 'api' as const,
    appUrl: links.appUrl,
    persistence: status.persistence,
    database: status.database,
    queue: {
      mode: status.queue.mode,
      queueName: status.queue.queueName,
      workerConcurrency: status.queue.workerConcurrency,
      backlog: status.queue.backlog,
      counts: status.queue.counts,
      error: status.queue.error,
    },
    scheduler: { mode: status.scheduler.mode, schedules: status.scheduler.schedules },
    workerHealth: {
      ok: status.queue.error === null && status.queue.workerConcurrency > 0,
      pollers: status.queue.pollers.length,
      latestSmokeTest: smoke,
    },
    deployment: { missingRequired: deployment.missingRequired, missingOptional: deployment.missingOptional },
    localAiCli: status.localAiCli,
    managedWorkspaces: status.managedWorkspaces,
    agentRuntime: status.agentRuntime,
    extflowBundle,
    blockers,
    warnings,
    nextActions: [...new Set(nextActions)],
  };
}

/** Warnings when agent runs could not call a model: the endpoint is unreachable, or there is neither an endpoint nor a connected CLI. */
function diagnoseAgentRuntime(status: WorkerStatus, links: DoctorLinks, warnings: string[], nextActions: string[]): void {
  const { modelEndpoint, ready } = status.agentRuntime;
  if (modelEndpoint.configured && !modelEndpoint.reachable) {
    warnings.push(
      `The chat model endpoint is not reachable (${modelEndpoint.status.replace('_', ' ')}); command jobs and research that use it will fail.`,
    );
    nextActions.push('Ask the operator to check the chat model endpoint.');
  }
  if (!ready && !modelEndpoint.configured) {
    warnings.push('No chat model endpoint is configured and no local AI CLI is connected; command jobs and research cannot call a model.');
    const configuredCli = status.localAiCli && Object.values(status.localAiCli).find((s) => s.configured);
    nextActions.push(
      configuredCli
        ? `Connect a local AI CLI: ${links.localAiCliSession}`
        : 'Ask the operator to configure a chat model endpoint or a local AI CLI.',
    );
  }
}
