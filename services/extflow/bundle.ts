/**
 * Bundles of the external tool: what its CLI's `export:workflow --all` writes (a JSON array of
 * workflows), an object `{ name?, workflows: [...] }` of them, or a single workflow. Each is
 * converted into a repository artifact (services/workflows/artifact.ts) plus its conversion
 * report; services/publishing/bundle.ts imports them like any bundle (upsert by externalId).
 */
import { invalidInput } from '../kernel/errors';
import { ARTIFACT_SCHEMA, type WorkflowArtifact } from '../workflows/artifact';
import { convertExtflowWorkflow, looksLikeExtflow } from './convert';
import type { ConversionReport } from './types';

export const MAX_EXTFLOW_BUNDLE_WORKFLOWS = 100;

export interface ExtflowBundleEntry {
  artifact: WorkflowArtifact;
  conversion: ConversionReport;
  /** Pinned data by our node id (kept on import for smoke-test dry runs). */
  pinned: Record<string, unknown>;
}

export interface ExtflowBundle {
  name: string | null;
  entries: ExtflowBundleEntry[];
}

/** The external tool's workflows of a parsed bundle value, or null when it is not one. */
export function extflowWorkflowsOf(parsed: unknown): { name: string | null; workflows: unknown[] } | null {
  if (Array.isArray(parsed))
    return parsed.length > 0 && parsed.every((w) => looksLikeExtflow(w)) ? { name: null, workflows: parsed } : null;
  if (!parsed || typeof parsed !== 'object') return null;
  const obj = parsed as Record<string, unknown>;
  if (Array.isArray(obj.workflows) && obj.workflows.length > 0 && obj.workflows.some((w) => looksLikeExtflow(w))) {
    return { name: typeof obj.name === 'string' ? obj.name : null, workflows: obj.workflows };
  }
  if (looksLikeExtflow(obj)) return { name: null, workflows: [obj] };
  return null;
}

/** Converts every workflow of a bundle; a workflow whose shape is unusable makes it a 400 (nothing imported). */
export function convertExtflowBundle(bundle: { name: string | null; workflows: unknown[] }, label = 'importBundleJson'): ExtflowBundle {
  if (bundle.workflows.length > MAX_EXTFLOW_BUNDLE_WORKFLOWS)
    throw invalidInput(`${label} holds at most ${MAX_EXTFLOW_BUNDLE_WORKFLOWS} workflows.`);
  const entries = bundle.workflows.map((w, i) => {
    const converted = convertExtflowWorkflow(w, `${label}.workflows[${i}]`);
    const artifact: WorkflowArtifact = {
      schema: ARTIFACT_SCHEMA,
      externalId: converted.externalId,
      name: converted.name,
      description: converted.description,
      nodes: converted.nodes,
      edges: converted.edges,
      connections: converted.connections,
    };
    return { artifact, conversion: converted.conversion, pinned: converted.pinned };
  });
  return { name: bundle.name, entries };
}
