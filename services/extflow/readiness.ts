/**
 * An imported workflow's readiness: the graph's validation report, with the conversion's
 * unsupported items, unresolved subworkflow references, missing credentials and readiness
 * issues added as deploy blockers. The
 * workflow is stored as a draft; deploy refuses it while placeholders remain (their type is
 * unknown to validation) — the blockers here say why and what to do.
 */
import type { GraphNode } from '../../engine/types';
import type { ValidationResult } from '../workflows/graph';
import type { ConversionReport, ReadinessIssue } from './types';

/**
 * `validation` with the conversion's findings added: each unsupported node, unresolved
 * sub-workflow and readiness issue is a blocker, and any of them makes it not ready. With
 * `credentialNames` (the workspace's credential names, lower case), every credential alias the
 * workspace lacks is a `missingCredential` issue; without it credentials are not judged.
 */
export function withConversion(
  validation: ValidationResult,
  conversion: ConversionReport,
  unresolved: Array<{ node: string; reference: string }> = [],
  credentialNames?: ReadonlySet<string>,
): ValidationResult {
  const readinessIssues = [...conversion.readinessIssues, ...(credentialNames ? missingCredentials(conversion, credentialNames) : [])];
  const blockers = [
    ...validation.deploymentReadiness.blockers,
    ...conversion.unsupported.map((u) => `${u.node}: ${u.reason}. ${u.action}`),
    ...unresolved.map(
      (r) =>
        `${r.node}: sub-workflow "${r.reference}" is not imported yet; import it (POST /api/v1/workers/extflow/subflows/import-originals) or include it in the bundle.`,
    ),
    ...readinessIssues.map((i) => `${i.node}: ${i.message}`),
  ];
  const ready = validation.report.valid && conversion.unsupported.length === 0 && unresolved.length === 0 && readinessIssues.length === 0;
  return {
    report: validation.report,
    deploymentReadiness: { ready: validation.deploymentReadiness.ready && ready, blockers: [...new Set(blockers)] },
    conversion: { ...conversion, readinessIssues, ready },
  };
}

/** A `missingCredential` issue for each alias of the conversion that names no credential of the workspace (names compared case-insensitively, as nodes resolve them). */
function missingCredentials(conversion: ConversionReport, credentialNames: ReadonlySet<string>): ReadinessIssue[] {
  return conversion.credentials
    .filter((c) => !credentialNames.has(c.alias.trim().toLowerCase()))
    .map((c) => ({
      node: c.nodes.join(', '),
      kind: 'missingCredential' as const,
      message: `credential "${c.alias}" does not exist in this workspace; create it (POST /api/v1/credentials, type ${c.type ?? `matching "${c.extflowType}"`}) or bootstrap it from the environment (POST /api/v1/workers/extflow/credentials/bootstrap-from-env).`,
    }));
}

/**
 * Points subworkflow nodes that reference an externalId at the workflow that carries it.
 * `lookup` maps externalIds to workflow ids. Returns the rewritten nodes and what stayed open.
 */
export function linkSubworkflows(nodes: GraphNode[], conversion: ConversionReport, lookup: (externalId: string) => string | undefined) {
  const unresolved: Array<{ node: string; reference: string }> = [];
  const out = nodes.map((n) => {
    if (n.type !== 'subworkflow') return n;
    const ref = typeof n.config.workflowId === 'string' ? n.config.workflowId : '';
    const entry = conversion.subworkflows.find((s) => s.reference === ref);
    if (!entry) return n;
    const id = lookup(ref);
    if (!id) {
      unresolved.push({ node: entry.node, reference: ref });
      return awaitingSubworkflow(n);
    }
    return { ...n, config: { ...n.config, workflowId: id } };
  });
  return { nodes: out, unresolved };
}

/** The type of a subworkflow node whose sub-workflow is not imported yet: unknown to validation, so deploy refuses it. */
export const AWAITING_SUBWORKFLOW_TYPE = 'extflow:subworkflow';

/** A subworkflow node turned into a placeholder until its sub-workflow is imported (import-originals links it back). */
export function awaitingSubworkflow(n: GraphNode): GraphNode {
  return {
    ...n,
    type: AWAITING_SUBWORKFLOW_TYPE,
    config: {
      ...n.config,
      reason: `sub-workflow "${String(n.config.workflowId)}" is not imported yet`,
      action: 'Import it with POST /api/v1/workers/extflow/subflows/import-originals (or in the same bundle).',
    },
  };
}

/** A placeholder (or subworkflow) node pointed at the imported sub-workflow. */
export function linkedSubworkflow(n: GraphNode, workflowId: string): GraphNode {
  const config: Record<string, unknown> = { workflowId };
  if (n.config.input !== undefined) config.input = n.config.input;
  return { ...n, type: 'subworkflow', config };
}
