/**
 * An imported workflow's readiness: the graph's validation report, with the conversion's
 * unsupported items and unresolved subworkflow references added as deploy blockers. The
 * workflow is stored as a draft; deploy refuses it while placeholders remain (their type is
 * unknown to validation) — the blockers here say why and what to do.
 */
import type { GraphNode } from '../../engine/types';
import type { ValidationResult } from '../workflows/graph';
import type { ConversionReport } from './types';

export function withConversion(validation: ValidationResult, conversion: ConversionReport, unresolved: Array<{ node: string; reference: string }> = []): ValidationResult {
  const blockers = [
    ...validation.deploymentReadiness.blockers,
    ...conversion.unsupported.map((u) => `${u.node}: ${u.reason}. ${u.action}`),
    ...unresolved.map((r) => `${r.node}: sub-workflow "${r.reference}" is not imported yet; import it (POST /api/v1/workers/extflow/subflows/import-originals) or include it in the bundle.`),
  ];
  const ready = validation.report.valid && conversion.unsupported.length === 0 && unresolved.length === 0;
  return {
    report: validation.report,
    deploymentReadiness: { ready: validation.deploymentReadiness.ready && ready, blockers: [...new Set(blockers)] },
    conversion: { ...conversion, ready },
  };
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
      return n;
    }
    return { ...n, config: { ...n.config, workflowId: id } };
  });
  return { nodes: out, unresolved };
}
