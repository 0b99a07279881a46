/**
 * Bundles of the external tool: what its CLI's `export:workflow --all` writes (a JSON array of
 * workflows), an object `{ name?, workflows: [...] }` of them, or a single workflow. Each is
 * converted into a repository artifact (services/workflows/artifact.ts) plus its conversion
 * report; services/publishing/bundle.ts imports them like any bundle (upsert by externalId).
 */
import { DomainError, invalidInput } from '../kernel/errors';
import { ARTIFACT_SCHEMA, type WorkflowArtifact } from '../workflows/artifact';
import { convertExtflowWorkflow, looksLikeExtflow } from './convert';
import type { ConversionReport } from './types';

export const MAX_EXTFLOW_BUNDLE_WORKFLOWS = 100;

export interface ExtflowBundleEntry {
  /** The workflow's position in the bundle, and where it came from (`importBundleJson.workflows[2]`, a file of a directory). */
  index: number;
  source: string;
  artifact: WorkflowArtifact;
  conversion: ConversionReport;
  /** Pinned data by our node id (kept on import for smoke-test dry runs). */
  pinned: Record<string, unknown>;
}

/** A workflow of a bundle that is not imported, and why (its fate in the import result). */
export interface RefusedBundleFile {
  index: number;
  source: string;
  externalId: string | null;
  name: string | null;
  reason: string;
  /** `invalid` (its shape is unusable, or it repeats another file) or `conflict` (it would overwrite a workflow it does not own). */
  code: 'invalid' | 'conflict';
}

export interface ExtflowBundle {
  name: string | null;
  entries: ExtflowBundleEntry[];
  refused: RefusedBundleFile[];
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

/**
 * Converts every workflow of a bundle. A workflow whose shape is unusable, or that repeats an
 * earlier one (same externalId: the same `id`, or the same content without one), is refused on
 * its own with the reason; the others go on. `sources` names where each workflow came from
 * (the files of a directory); by default `<label>.workflows[i]`.
 */
export function convertExtflowBundle(
  bundle: { name: string | null; workflows: unknown[] },
  label = 'importBundleJson',
  sources?: string[],
): ExtflowBundle {
  if (bundle.workflows.length > MAX_EXTFLOW_BUNDLE_WORKFLOWS)
    throw invalidInput(`${label} holds at most ${MAX_EXTFLOW_BUNDLE_WORKFLOWS} workflows.`);
  const entries: ExtflowBundleEntry[] = [];
  const refused: RefusedBundleFile[] = [];
  const sourceOf = new Map<string, string>();
  bundle.workflows.forEach((w, index) => {
    const source = sources?.[index] ?? `${label}.workflows[${index}]`;
    let converted: ReturnType<typeof convertExtflowWorkflow>;
    try {
      converted = convertExtflowWorkflow(w, source);
    } catch (err) {
      if (!(err instanceof DomainError) || err.kind !== 'invalid') throw err;
      const name = w && typeof w === 'object' && typeof (w as { name?: unknown }).name === 'string' ? (w as { name: string }).name : null;
      refused.push({ index, source, externalId: null, name, reason: err.message, code: 'invalid' });
      return;
    }
    const first = sourceOf.get(converted.externalId);
    if (first !== undefined) {
      refused.push({
        index,
        source,
        externalId: converted.externalId,
        name: converted.name,
        reason: `The same workflow as ${first} (externalId "${converted.externalId}"): it is imported once.`,
        code: 'invalid',
      });
      return;
    }
    sourceOf.set(converted.externalId, source);
    const artifact: WorkflowArtifact = {
      schema: ARTIFACT_SCHEMA,
      externalId: converted.externalId,
      name: converted.name,
      description: converted.description,
      nodes: converted.nodes,
      edges: converted.edges,
      connections: converted.connections,
    };
    entries.push({ index, source, artifact, conversion: converted.conversion, pinned: converted.pinned });
  });
  return { name: bundle.name, entries, refused };
}
