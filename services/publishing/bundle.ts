import { UniqueConstraintViolationException } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { WorkflowSchema, type Workflow } from '../../db/entities';
import type { GraphEdge, GraphNode } from '../../engine/types';
import { recordWorkspaceAudit } from '../kernel/audit';
import { conflict, invalidInput } from '../kernel/errors';
import { newId } from '../kernel/ids';
import type { WorkspacePrincipal } from '../kernel/principal';
import { checkArtifact, type ArtifactIssue, type WorkflowArtifact } from '../workflows/artifact';
import { convertExtflowBundle, extflowWorkflowsOf, type RefusedBundleFile } from '../extflow/bundle';
import { awaitingSubworkflow, withConversion } from '../extflow/readiness';
import { savePinnedData } from '../extflow/pinned';
import { importProvenance, recordImportProvenance, type ImportProvenance } from '../extflow/store';
import type { ConversionReport } from '../extflow/types';
import { candidateVersionId, validateWorkflowGraph, type ValidationResult } from '../workflows/graph';
import { viewOf, type WorkflowView } from '../workflows/views';
import { credentialNamesOf } from './import';

/**
 * Multi-workflow bundles: `importBundleJson` is `{ schema?, name?, workflows: [artifact…] }`
 * (each entry a repository artifact, see artifact.ts). Workflows are upserted by externalId
 * inside the workspace; a subworkflow node's `config.workflowId` may name another entry's
 * externalId (rewritten to that workflow's id on import), a workspace workflow's externalId,
 * or a workspace workflow id. All-or-nothing: any invalid entry is a 400 and nothing is written.
 *
 * The external tool's bundles are judged per workflow instead: a workflow that is unusable,
 * repeats another, or would overwrite a workflow it does not own (see `ownershipConflict`) is
 * refused with its reason and the others are imported; `files` reports every workflow's fate.
 */
export const BUNDLE_SCHEMA = 'workflow-bundle.v1';
const MAX_BUNDLE_WORKFLOWS = 100;

export type ImportAction = 'created' | 'updated' | 'unchanged';

export interface SubWorkflowReference {
  nodeId: string;
  reference: string;
  resolvedIn: 'bundle' | 'workspace' | null;
  workflowId: string | null;
}

export interface BundleSubWorkflowStatus {
  resolved: boolean;
  references: SubWorkflowReference[];
}

/** What became of one workflow of a bundle, in bundle order. */
export interface BundleFileFate {
  index: number;
  /** Where it came from: `importBundleJson.workflows[2]`, or a file of a directory bundle. */
  source: string;
  externalId: string | null;
  name: string | null;
  fate: ImportAction | 'refused';
  /** The workflow it created, updated or left unchanged (for a refused one: the workflow it would have overwritten, if any). */
  workflowId: string | null;
  /** Why it was refused; null otherwise. */
  reason: string | null;
}

interface PlannedEntry {
  index: number;
  source: string;
  externalId: string;
  artifact: WorkflowArtifact;
  existing: Workflow | null;
  workflowId: string;
  nodes: GraphNode[];
  edges: GraphEdge[];
  importAction: ImportAction;
  importReadiness: ValidationResult;
  bundleSubWorkflowStatus: BundleSubWorkflowStatus;
}

interface BundlePlan {
  bundle: { name: string | null; workflowCount: number; created: number; updated: number; unchanged: number; refused: number };
  entries: PlannedEntry[];
  refused: Array<RefusedBundleFile & { workflowId: string | null }>;
}

/** A bundle ready to plan: artifacts, and for the external tool's workflows their conversion reports (by externalId). */
export interface ParsedBundle {
  name: string | null;
  artifacts: WorkflowArtifact[];
  conversions?: Map<string, ConversionReport>;
  /** The external tool's pinned data, by externalId (stored on import for the extflow smoke test). */
  pinned?: Map<string, Record<string, unknown>>;
  /** Each artifact's place in the bundle and where it came from (default: its index in `artifacts`). */
  origins?: Array<{ index: number; source: string }>;
  /** Workflows of the bundle refused before planning (the external tool's bundles only). */
  refused?: RefusedBundleFile[];
}

function parseBundle(importBundleJson: string): ParsedBundle {
  let parsed: unknown;
  try {
    parsed = JSON.parse(importBundleJson);
  } catch {
    throw invalidInput('importBundleJson is not valid JSON.');
  }
  // The external tool's bundles (an array of its workflows, or { workflows }) are converted first.
  const extflow = extflowWorkflowsOf(parsed);
  if (extflow) return parsedExtflowBundle(convertExtflowBundle(extflow));
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
    throw invalidInput('importBundleJson must be a JSON object { schema, name, workflows }.');
  const obj = parsed as Record<string, unknown>;
  if (obj.schema !== undefined && obj.schema !== BUNDLE_SCHEMA) throw invalidInput(`importBundleJson.schema must be "${BUNDLE_SCHEMA}".`);
  if (obj.name !== undefined && typeof obj.name !== 'string') throw invalidInput('importBundleJson.name must be a string.');
  if (!Array.isArray(obj.workflows) || obj.workflows.length === 0)
    throw invalidInput('importBundleJson must contain a non-empty workflows[] array.');
  if (obj.workflows.length > MAX_BUNDLE_WORKFLOWS) throw invalidInput(`importBundleJson holds at most ${MAX_BUNDLE_WORKFLOWS} workflows.`);
  const problems: Array<{ index: number; externalId: string | null; errors: ArtifactIssue[] }> = [];
  const artifacts: WorkflowArtifact[] = [];
  obj.workflows.forEach((entry, index) => {
    const check = checkArtifact(entry);
    const externalId =
      entry && typeof entry === 'object' && typeof (entry as Record<string, unknown>).externalId === 'string'
        ? ((entry as Record<string, unknown>).externalId as string)
        : null;
    if (!check.ok) problems.push({ index, externalId, errors: check.errors });
    else artifacts.push(check.artifact);
  });
  const seen = new Set<string>();
  artifacts.forEach((a) => {
    if (seen.has(a.externalId))
      problems.push({
        index: -1,
        externalId: a.externalId,
        errors: [{ path: 'externalId', message: `externalId "${a.externalId}" appears more than once in the bundle.` }],
      });
    seen.add(a.externalId);
  });
  if (problems.length > 0) {
    throw invalidInput(`importBundleJson has ${problems.length} invalid workflow(s); nothing was imported.`, {
      details: { invalidWorkflows: problems },
    });
  }
  return { name: obj.name ?? null, artifacts };
}

/** The external tool's converted bundle as a parsed bundle (its refused workflows carried along). */
export function parsedExtflowBundle(
  bundle: Pick<ReturnType<typeof convertExtflowBundle>, 'name' | 'entries'> & { refused?: RefusedBundleFile[] },
): ParsedBundle {
  return {
    name: bundle.name,
    artifacts: bundle.entries.map((e) => e.artifact),
    conversions: new Map(bundle.entries.map((e) => [e.artifact.externalId, e.conversion])),
    pinned: new Map(bundle.entries.map((e) => [e.artifact.externalId, e.pinned])),
    origins: bundle.entries.map((e) => ({ index: e.index, source: e.source })),
    refused: bundle.refused ?? [],
  };
}

/**
 * Why an import of `externalId` may not overwrite `existing`, the workflow that carries it, or
 * null when it may: the draft must be the one an import of that externalId wrote (recorded in
 * `extflow_imports`). A workflow that got the externalId otherwise, or whose draft was edited
 * since its import, is not overwritten. Caveat: a workflow imported before drafts were recorded
 * (null draft version) is treated as owned, as imports did before.
 */
function ownershipConflict(existing: Workflow, provenance: ImportProvenance | undefined): string | null {
  const what = `Workflow "${existing.name}" (${existing.id}) already carries externalId "${existing.externalId ?? ''}"`;
  if (!provenance || provenance.workflow_id !== existing.id)
    return `${what} but was not created by an import of it; nothing was overwritten. Trash that workflow to import this one, or import an export with another id.`;
  if (provenance.draft_version_id !== null && provenance.draft_version_id !== candidateVersionId(existing))
    return `${what} and its draft was changed since it was imported; nothing was overwritten. Trash that workflow, or replace its draft on purpose (PATCH /workflows/{id} with importJson).`;
  return null;
}

async function plan(em: EntityManager, principal: WorkspacePrincipal, bundleInput: string | ParsedBundle): Promise<BundlePlan> {
  const parsed = typeof bundleInput === 'string' ? parseBundle(bundleInput) : bundleInput;
  const { name, conversions } = parsed;
  const workspaceWorkflows = await em.find(WorkflowSchema, { workspaceId: principal.workspaceId, trashed: false });
  const byExternalId = new Map(workspaceWorkflows.filter((w) => w.externalId).map((w) => [w.externalId as string, w]));
  const byId = new Map(workspaceWorkflows.map((w) => [w.id, w]));
  const origin = (i: number) => parsed.origins?.[i] ?? { index: i, source: `workflows[${i}]` };
  const refused: BundlePlan['refused'] = (parsed.refused ?? []).map((r) => ({ ...r, workflowId: null }));
  // The external tool's workflows overwrite only what an import of theirs wrote.
  const overwritten = parsed.artifacts.filter((a) => conversions?.has(a.externalId) && byExternalId.has(a.externalId));
  const provenance = new Map(
    overwritten.length === 0
      ? []
      : (
          await importProvenance(
            em,
            principal.workspaceId,
            overwritten.map((a) => a.externalId),
          )
        ).map((p) => [p.external_id, p]),
  );
  const credentialNames = conversions && conversions.size > 0 ? await credentialNamesOf(em, principal.workspaceId) : undefined;
  const accepted: Array<{ artifact: WorkflowArtifact; index: number; source: string }> = [];
  parsed.artifacts.forEach((artifact, i) => {
    const existing = byExternalId.get(artifact.externalId);
    const reason =
      existing && conversions?.has(artifact.externalId) ? ownershipConflict(existing, provenance.get(artifact.externalId)) : null;
    if (reason && existing) {
      refused.push({
        ...origin(i),
        externalId: artifact.externalId,
        name: artifact.name,
        reason,
        code: 'conflict',
        workflowId: existing.id,
      });
      return;
    }
    accepted.push({ artifact, ...origin(i) });
  });
  // Ids first, so references between entries can be rewritten before readiness is computed.
  const idFor = new Map(accepted.map(({ artifact: a }) => [a.externalId, byExternalId.get(a.externalId)?.id ?? newId('wf')]));

  const entries = accepted.map(({ artifact, index, source }): PlannedEntry => {
    const existing = byExternalId.get(artifact.externalId) ?? null;
    const references: SubWorkflowReference[] = [];
    let nodes = artifact.nodes.map((node) => {
      if (node.type !== 'subworkflow') return node;
      const config = node.config ?? {};
      const ref = typeof config.workflowId === 'string' ? config.workflowId : '';
      let resolved: Pick<SubWorkflowReference, 'resolvedIn' | 'workflowId'> = { resolvedIn: null, workflowId: null };
      if (idFor.has(ref)) resolved = { resolvedIn: 'bundle', workflowId: idFor.get(ref)! };
      else if (byExternalId.has(ref)) resolved = { resolvedIn: 'workspace', workflowId: byExternalId.get(ref)!.id };
      else if (byId.has(ref)) resolved = { resolvedIn: 'workspace', workflowId: ref };
      references.push({ nodeId: node.id, reference: ref, ...resolved });
      return resolved.workflowId && resolved.workflowId !== ref
        ? { ...node, config: { ...config, workflowId: resolved.workflowId } }
        : node;
    });
    const edges = artifact.edges;
    const unresolved = references.filter((r) => !r.resolvedIn);
    const conversion = conversions?.get(artifact.externalId);
    // External-tool imports: a subworkflow node whose sub-workflow is missing waits as a placeholder (deploy refuses it).
    if (conversion) nodes = nodes.map((n) => (unresolved.some((r) => r.nodeId === n.id) ? awaitingSubworkflow(n) : n));
    let importReadiness = validateWorkflowGraph({ nodes, edges });
    if (conversion) {
      const nameOf = (nodeId: string) => nodes.find((n) => n.id === nodeId)?.name ?? nodeId;
      importReadiness = withConversion(
        importReadiness,
        conversion,
        unresolved.map((r) => ({ node: nameOf(r.nodeId), reference: r.reference })),
        credentialNames,
      );
    } else if (unresolved.length > 0) {
      importReadiness.deploymentReadiness = {
        ready: false,
        blockers: [
          ...importReadiness.deploymentReadiness.blockers,
          ...unresolved.map((r) => `${r.nodeId}: subworkflow "${r.reference}" is neither in the bundle nor in the workspace`),
        ],
      };
    }
    let importAction: ImportAction = 'created';
    if (existing) {
      const same =
        existing.name === artifact.name &&
        existing.description === artifact.description &&
        candidateVersionId(existing) === candidateVersionId({ nodes, edges });
      importAction = same ? 'unchanged' : 'updated';
    }
    return {
      index,
      source,
      externalId: artifact.externalId,
      artifact,
      existing,
      workflowId: idFor.get(artifact.externalId)!,
      nodes,
      edges,
      importAction,
      importReadiness,
      bundleSubWorkflowStatus: { resolved: unresolved.length === 0, references },
    };
  });
  const count = (a: ImportAction) => entries.filter((e) => e.importAction === a).length;
  refused.sort((a, b) => a.index - b.index);
  return {
    bundle: {
      name,
      workflowCount: entries.length + refused.length,
      created: count('created'),
      updated: count('updated'),
      unchanged: count('unchanged'),
      refused: refused.length,
    },
    entries,
    refused,
  };
}

/** Every workflow's fate, in bundle order: the planned ones (with the workflow they wrote) and the refused ones. */
function fatesOf(plan: BundlePlan, workflowIdOf: (e: PlannedEntry) => string | null): BundleFileFate[] {
  const planned = plan.entries.map((e): BundleFileFate => ({
    index: e.index,
    source: e.source,
    externalId: e.externalId,
    name: e.artifact.name,
    fate: e.importAction,
    workflowId: workflowIdOf(e),
    reason: null,
  }));
  const refused = plan.refused.map((r): BundleFileFate => ({
    index: r.index,
    source: r.source,
    externalId: r.externalId,
    name: r.name,
    fate: 'refused',
    workflowId: r.workflowId,
    reason: r.reason,
  }));
  return [...planned, ...refused].sort((a, b) => a.index - b.index);
}

/** import-preview for bundles: the plan, nothing written. New workflows have `workflowId: null`. */
export async function previewBundle(em: EntityManager, principal: WorkspacePrincipal, importBundleJson: string | ParsedBundle) {
  const planned = await plan(em, principal, importBundleJson);
  const { bundle, entries } = planned;
  return {
    bundle,
    files: fatesOf(planned, (e) => e.existing?.id ?? null),
    workflows: entries.map((e) => ({
      externalId: e.externalId,
      name: e.artifact.name,
      workflowId: e.existing ? e.existing.id : null,
      importAction: e.importAction,
      importReadiness: e.importReadiness,
      bundleSubWorkflowStatus: e.bundleSubWorkflowStatus,
    })),
    persisted: false as const,
  };
}

export interface ImportedBundleWorkflow {
  externalId: string;
  workflow: WorkflowView;
  importAction: ImportAction;
  importReadiness: ValidationResult;
  bundleSubWorkflowStatus: BundleSubWorkflowStatus;
}

/**
 * Imports a bundle in one transaction. Created workflows are drafts; updated ones get the
 * artifact as their draft (candidate) and keep their status and active version, so a deployed
 * workflow keeps serving until it is deployed again; unchanged ones are not touched. For the
 * external tool's workflows the draft written is recorded as owned by the import. When every
 * workflow is refused nothing is written and the import fails: a conflict (409) when one would
 * have overwritten a workflow it does not own, else invalid (400), with `details.files`.
 */
export async function importBundle(
  em: EntityManager,
  principal: WorkspacePrincipal,
  importBundleJson: string | ParsedBundle,
): Promise<{ bundle: BundlePlan['bundle']; files: BundleFileFate[]; workflows: ImportedBundleWorkflow[] }> {
  const parsed = typeof importBundleJson === 'string' ? parseBundle(importBundleJson) : importBundleJson;
  const planned = await plan(em, principal, parsed);
  const { bundle, entries } = planned;
  if (entries.length === 0) {
    const files = fatesOf(planned, () => null);
    const conflicted = planned.refused.find((r) => r.code === 'conflict');
    const first = conflicted ?? planned.refused.at(0);
    const message = first ? `${first.source}: ${first.reason}` : 'The bundle holds no workflow.';
    throw conflicted
      ? conflict(`Nothing was imported. ${message}`, { details: { files } })
      : invalidInput(planned.refused.length === 1 ? (first?.reason ?? message) : `Nothing was imported. ${message}`, {
          details: { files },
        });
  }
  const pinned = parsed.pinned;
  const rows = await em
    .transactional(async (tx) => {
      const now = new Date();
      const out: Workflow[] = [];
      for (const e of entries) {
        if (e.importAction === 'created') {
          out.push(
            tx.create(WorkflowSchema, {
              id: e.workflowId,
              workspaceId: principal.workspaceId,
              externalId: e.externalId,
              name: e.artifact.name,
              description: e.artifact.description,
              status: 'draft',
              trashed: false,
              nodes: e.nodes,
              edges: e.edges,
              activeVersionId: null,
              templateKey: null,
              sourceWorkflowId: null,
              createdById: principal.userId,
              createdAt: now,
              updatedAt: now,
            }),
          );
        } else {
          const wf = await tx.findOneOrFail(WorkflowSchema, { id: e.workflowId });
          if (e.importAction === 'updated') {
            wf.name = e.artifact.name;
            wf.description = e.artifact.description;
            wf.nodes = e.nodes;
            wf.edges = e.edges;
            wf.updatedAt = now;
          }
          out.push(wf);
        }
      }
      for (const e of entries)
        if (pinned?.has(e.externalId)) await savePinnedData(tx, principal.workspaceId, e.externalId, pinned.get(e.externalId)!);
      for (const e of entries)
        if (parsed.conversions?.has(e.externalId))
          await recordImportProvenance(
            tx,
            principal.workspaceId,
            e.externalId,
            e.workflowId,
            candidateVersionId({ nodes: e.nodes, edges: e.edges }),
          );
      recordWorkspaceAudit(tx, principal, 'workflow.import_bundle', 'info', {
        created: bundle.created,
        updated: bundle.updated,
        unchanged: bundle.unchanged,
        refused: bundle.refused,
      });
      await tx.flush();
      return out;
    })
    .catch((err: unknown) => {
      // A concurrent import created one of these externalIds first (unique per workspace).
      if (err instanceof UniqueConstraintViolationException)
        throw conflict('Another import created a workflow with one of these externalIds at the same time; retry the import.');
      throw err;
    });
  const workflows: ImportedBundleWorkflow[] = [];
  for (const [i, e] of entries.entries()) {
    workflows.push({
      externalId: e.externalId,
      workflow: await viewOf(em, rows.at(i)!), // the transaction keeps one row per entry, in order
      importAction: e.importAction,
      importReadiness: e.importReadiness,
      bundleSubWorkflowStatus: e.bundleSubWorkflowStatus,
    });
  }
  return { bundle, files: fatesOf(planned, (e) => e.workflowId), workflows };
}
