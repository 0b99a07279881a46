/**
 * The extflow worker use cases: import a bundle of the external tool (from the body or the
 * import directory), smoke-test what was imported, bootstrap its credentials from allowed
 * deployment variables, and import the original sub-workflows its nodes call. Each answers
 * with the worker doctor beside its result, so one call shows what is still missing.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { RunSchema, WorkflowSchema, type Workflow } from '../../db/entities';
import type { GraphNode } from '../../engine/types';
import { bootstrapCredentialReferences, type CredentialDeps } from '../credentials';
import { invalidInput } from '../kernel/errors';
import type { RunLauncher } from '../kernel/ports';
import type { WorkspacePrincipal } from '../kernel/principal';
import { executeWorkflow } from '../runs/execute';
import { workerDoctor, type DoctorLinks } from '../workers/doctor';
import type { WorkerHealthDeps } from '../workers/checks';
import { clampWait } from '../workers/smokeTests';
import { candidateVersionId, validateWorkflowGraph } from '../workflows/graph';
import { importBundle, parsedExtflowBundle } from './bundle';
import { recordWorkspaceAudit } from '../kernel/audit';
import { convertExtflowBundle, extflowWorkflowsOf, type ExtflowBundle } from '../extflow/bundle';
import { readBundlePath } from '../extflow/importDir';
import { EXTERNAL_ID_PREFIX } from '../extflow/nodes/subworkflow';
import { AWAITING_SUBWORKFLOW_TYPE, linkedSubworkflow } from '../extflow/readiness';
import { applyPinnedData, loadPinnedData, pinnedNodeIds } from '../extflow/pinned';
import { advanceImportProvenance } from '../extflow/store';

export interface ExtflowDeps extends WorkerHealthDeps {
  importDir: string | undefined;
  credentials: CredentialDeps;
  runLauncher: RunLauncher;
}

export interface BundleSource {
  importBundleJson?: string;
  importJson?: string;
  bundlePath?: string;
}

/** The bundle of a request: exactly one of importBundleJson, importJson (one workflow) or bundlePath. */
export async function loadExtflowBundle(
  importDir: string | undefined,
  source: BundleSource,
  allowed: Array<keyof BundleSource>,
): Promise<ExtflowBundle> {
  const given = (Object.keys(source) as Array<keyof BundleSource>).filter((k) => source[k] !== undefined);
  const [key] = given;
  if (key === undefined) throw invalidInput(`${allowed.join(' or ')} is required.`);
  if (given.length > 1) throw invalidInput(`Give one of ${allowed.join(', ')}, not several.`);
  let value: unknown;
  let sources: string[] | undefined;
  if (key === 'bundlePath') ({ value, sources } = await readBundlePath(importDir, source.bundlePath!));
  else {
    try {
      value = JSON.parse(source[key]!);
    } catch {
      throw invalidInput(`${key} is not valid JSON.`);
    }
  }
  const workflows = extflowWorkflowsOf(value);
  if (!workflows) throw invalidInput(`${key} is not an export of the external workflow tool (workflows with nodes and connections).`);
  return convertExtflowBundle(workflows, key, sources);
}

async function doctorOf(deps: ExtflowDeps, em: EntityManager, principal: WorkspacePrincipal, links: DoctorLinks) {
  return workerDoctor(deps, em, principal.workspaceId, { now: new Date() }, links);
}

/** `POST /workers/extflow/import-bundle`: the bundle imported (upsert by externalId), and the doctor. */
export async function importExtflowBundle(
  em: EntityManager,
  principal: WorkspacePrincipal,
  deps: ExtflowDeps,
  source: BundleSource,
  links: DoctorLinks,
) {
  const bundle = await loadExtflowBundle(deps.importDir, source, ['importBundleJson', 'bundlePath']);
  const importResult = await importBundle(em, principal, parsedExtflowBundle(bundle));
  return { importResult, doctor: await doctorOf(deps, em, principal, links) };
}

/** The workspace's workflows a request is about: the bundle's (by externalId), or every imported one. */
async function importedWorkflows(
  em: EntityManager,
  principal: WorkspacePrincipal,
  importDir: string | undefined,
  bundlePath: string | undefined,
): Promise<Array<{ externalId: string; workflow: Workflow | null }>> {
  if (bundlePath !== undefined) {
    const bundle = await loadExtflowBundle(importDir, { bundlePath }, ['bundlePath']);
    const ids = bundle.entries.map((e) => e.artifact.externalId);
    const rows = await em.find(WorkflowSchema, { workspaceId: principal.workspaceId, trashed: false, externalId: { $in: ids } });
    return ids.map((externalId) => ({ externalId, workflow: rows.find((w) => w.externalId === externalId) ?? null }));
  }
  const rows = await em.find(
    WorkflowSchema,
    { workspaceId: principal.workspaceId, trashed: false, externalId: { $like: `${EXTERNAL_ID_PREFIX}%` } },
    { orderBy: { externalId: 'asc' } },
  );
  return rows.map((w) => ({ externalId: w.externalId as string, workflow: w }));
}

export type SmokeOutcome = 'passed' | 'attention' | 'failed';

export interface SmokeRequest {
  bundlePath?: string;
  useQueue?: boolean;
  waitForWorkerMs?: number;
}

const TERMINAL = new Set(['succeeded', 'failed', 'canceled']);
const POLL_MS = 200;

/** Reads the run's row until it is terminal or waiting, or `waitMs` passed: the wait for a worker. */
async function awaitRun(em: EntityManager, runId: string, waitMs: number): Promise<{ status: string; error: string | null }> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const row = await em.fork().findOneOrFail(RunSchema, { id: runId });
    if (TERMINAL.has(row.status) || row.status === 'waiting' || Date.now() >= deadline)
      return { status: row.status, error: row.error ?? null };
    await new Promise((r) => setTimeout(r, Math.min(POLL_MS, Math.max(0, deadline - Date.now()))));
  }
}

/**
 * `POST /workers/extflow/smoke-test`: runs each imported workflow's draft — a dry run (code
 * and expressions for real, side effects simulated), or with `useQueue` a live candidate run
 * through Temporal, waiting up to `waitForWorkerMs` for a worker to finish it. `passed` when
 * every run succeeded; `failed` when one failed; otherwise `attention` (not ready, waiting,
 * not finished in time, nothing imported).
 */
export async function smokeTestExtflow(em: EntityManager, principal: WorkspacePrincipal, deps: ExtflowDeps, request: SmokeRequest) {
  const started = Date.now();
  const useQueue = request.useQueue === true;
  const waitForWorkerMs = clampWait(request.waitForWorkerMs);
  const targets = await importedWorkflows(em, principal, deps.importDir, request.bundlePath);
  const pins = await loadPinnedData(
    em,
    principal.workspaceId,
    targets.map((t) => t.externalId),
  );
  const workflows = [];
  for (const { externalId, workflow } of targets) {
    const base = { externalId, workflowId: workflow?.id ?? null, name: workflow?.name ?? null };
    const pinned = pins.get(externalId) ?? {};
    const notUsed = (reason: string) => ({
      applied: [],
      skipped: pinnedNodeIds(workflow?.nodes ?? [], pinned).map((node) => ({ node, reason })),
    });
    if (!workflow) {
      workflows.push({
        ...base,
        status: 'attention' as SmokeOutcome,
        runId: null,
        runStatus: null,
        message: 'Not imported into this workspace yet.',
        pinnedData: notUsed('The workflow is not imported.'),
      });
      continue;
    }
    const validation = validateWorkflowGraph({ nodes: workflow.nodes, edges: workflow.edges });
    if (!validation.report.valid) {
      workflows.push({
        ...base,
        status: 'attention' as SmokeOutcome,
        runId: null,
        runStatus: null,
        message: `Not ready: ${validation.deploymentReadiness.blockers.slice(0, 3).join('; ')}`,
        pinnedData: notUsed('The workflow is not ready.'),
      });
      continue;
    }
    // Dry runs use the pinned data (a trigger's as the input); a live run executes every node, as in the external tool.
    const application = useQueue ? null : applyPinnedData({ nodes: workflow.nodes, edges: workflow.edges }, pinned);
    const pinnedData = application
      ? { applied: application.applied, skipped: application.skipped }
      : notUsed('A live run executes every node.');
    const result = await executeWorkflow(
      em,
      deps.runLauncher,
      principal,
      workflow.id,
      useQueue
        ? { target: 'candidate', dryRun: false, confirm: true, expectedVersionId: candidateVersionId(workflow), input: {} }
        : { target: 'candidate', dryRun: true, input: application!.input },
      'api',
      application ? { dryRunGraph: () => application.graph } : {},
    );
    const run = useQueue
      ? await awaitRun(em, result.run.id, waitForWorkerMs)
      : { status: result.run.status, error: result.run.error ?? null };
    let status: SmokeOutcome;
    let message: string;
    if (run.status === 'succeeded') {
      status = 'passed';
      message = useQueue ? 'A worker ran the workflow to the end.' : 'The dry run finished.';
    } else if (run.status === 'failed' || run.status === 'canceled') {
      status = 'failed';
      message = `The run ${run.status}: ${run.error ?? 'no reason recorded'}`;
    } else if (run.status === 'waiting') {
      status = 'attention';
      message = 'The run waits (a timer, an approval or an event); it goes on in the background.';
    } else {
      status = 'attention';
      message = `No worker finished the run within ${waitForWorkerMs} ms (it is ${run.status}).`;
    }
    workflows.push({ ...base, status, runId: result.run.id, runStatus: run.status, message, pinnedData });
  }
  const counts = { passed: 0, attention: 0, failed: 0 };
  for (const w of workflows) counts[w.status]++;
  const status: SmokeOutcome =
    counts.failed > 0 ? 'failed' : workflows.length > 0 && counts.passed === workflows.length ? 'passed' : 'attention';
  const message =
    workflows.length === 0
      ? 'No imported workflows to test: import a bundle first.'
      : `${counts.passed} passed, ${counts.attention} need attention, ${counts.failed} failed (${useQueue ? 'live runs through the queue' : 'dry runs'}).`;
  recordWorkspaceAudit(em, principal, 'workers.extflow_smoke_test', 'info', { status, ...counts });
  await em.flush();
  return {
    outcome: status,
    importedWorkflowSmokeTest: {
      status,
      message,
      mode: useQueue ? ('queue' as const) : ('dryRun' as const),
      useQueue,
      waitForWorkerMs,
      queue: { mode: 'temporal' as const, queueName: deps.runLauncher.taskQueue },
      persistence: { durable: true as const, mode: 'postgresql' as const },
      counts,
      workflows,
      checkedAt: new Date().toISOString(),
      durationMs: Date.now() - started,
    },
  };
}

/** Credential aliases (`credentialId` names) of imported graphs. */
function aliasesOf(nodes: GraphNode[]): string[] {
  return nodes.map((n) => n.config?.credentialId).filter((c): c is string => typeof c === 'string' && c.trim() !== '');
}

/**
 * `POST /workers/extflow/credentials/bootstrap-from-env`: creates the credentials the bundle's
 * nodes name (or, without bundlePath, the imported workflows' nodes) from allowed deployment
 * variables. Counts and outcomes only, never values.
 */
export async function bootstrapExtflowCredentials(
  em: EntityManager,
  principal: WorkspacePrincipal,
  deps: ExtflowDeps,
  request: { bundlePath?: string },
  links: DoctorLinks,
) {
  let references: string[];
  if (request.bundlePath !== undefined) {
    const bundle = await loadExtflowBundle(deps.importDir, { bundlePath: request.bundlePath }, ['bundlePath']);
    references = bundle.entries.flatMap((e) => e.conversion.credentials.map((c) => c.alias));
  } else {
    references = (await importedWorkflows(em, principal, deps.importDir, undefined)).flatMap((w) => aliasesOf(w.workflow?.nodes ?? []));
  }
  const report = await bootstrapCredentialReferences(em, principal, deps.credentials, references);
  return { bootstrap: { aliases: [...new Set(references)].length, ...report }, doctor: await doctorOf(deps, em, principal, links) };
}

/**
 * `POST /workers/extflow/subflows/import-originals`: of the given workflows, imports those that
 * a sub-workflow node references — in the workspace's imported workflows or in the given
 * bundle itself — then points the workspace's waiting subworkflow nodes at them.
 */
export async function importExtflowOriginals(
  em: EntityManager,
  principal: WorkspacePrincipal,
  deps: ExtflowDeps,
  source: BundleSource,
  links: DoctorLinks,
) {
  const bundle = await loadExtflowBundle(deps.importDir, source, ['importJson', 'importBundleJson']);
  const workspace = await em.find(WorkflowSchema, { workspaceId: principal.workspaceId, trashed: false });
  const waiting = new Set<string>();
  for (const wf of workspace)
    for (const n of wf.nodes)
      if (isSubworkflowRef(n) && (n.config.workflowId as string).startsWith(EXTERNAL_ID_PREFIX)) waiting.add(n.config.workflowId as string);
  for (const e of bundle.entries) for (const s of e.conversion.subworkflows) waiting.add(s.reference);
  const originals = bundle.entries.filter((e) => waiting.has(e.artifact.externalId));
  if (originals.length === 0)
    throw invalidInput(
      'None of these workflows is called by a sub-workflow node of an imported workflow; import them with import-bundle instead.',
    );
  const result = await importBundle(em, principal, parsedExtflowBundle({ name: bundle.name, entries: originals }));
  const idByExternal = new Map(result.workflows.map((w) => [w.externalId, w.workflow.id]));
  const relinked: Array<{ workflowId: string; nodeId: string; reference: string; subworkflowId: string }> = [];
  const fresh = await em.fork().find(WorkflowSchema, { workspaceId: principal.workspaceId, trashed: false });
  const tx = em.fork();
  for (const wf of fresh) {
    let changed = false;
    const nodes = wf.nodes.map((n) => {
      const ref = isSubworkflowRef(n) ? (n.config.workflowId as string) : undefined;
      if (ref === undefined || !idByExternal.has(ref)) return n;
      changed = true;
      relinked.push({ workflowId: wf.id, nodeId: n.id, reference: ref, subworkflowId: idByExternal.get(ref)! });
      return linkedSubworkflow(n, idByExternal.get(ref)!);
    });
    if (changed) {
      const row = await tx.findOneOrFail(WorkflowSchema, { id: wf.id });
      const before = candidateVersionId(row);
      row.nodes = nodes;
      row.updatedAt = new Date();
      // Linking is the import's own change: a draft the import owned stays owned.
      await advanceImportProvenance(tx, principal.workspaceId, wf.id, before, candidateVersionId(row));
    }
  }
  recordWorkspaceAudit(tx, principal, 'workers.extflow_import_originals', 'info', {
    imported: originals.length,
    relinked: relinked.length,
  });
  await tx.flush();
  return { importResult: { ...result, relinked }, doctor: await doctorOf(deps, em, principal, links) };
}

/** A subworkflow node, or one waiting for its sub-workflow, with a reference. */
function isSubworkflowRef(n: GraphNode): boolean {
  return (n.type === 'subworkflow' || n.type === AWAITING_SUBWORKFLOW_TYPE) && typeof n.config?.workflowId === 'string';
}
