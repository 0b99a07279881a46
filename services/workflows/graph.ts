import { deploymentReadiness, validateGraph } from '../../engine/validate';
import type { ValidationReport, WorkflowGraph } from '../../engine/types';
import { canonicalJson } from '../../engine/canonicalJson';
import { sha256Hex } from '../kernel/ids';
import type { ConversionReport } from './conversionReport';

export interface Readiness {
  ready: boolean;
  blockers: string[];
}

export interface ValidationResult {
  report: ValidationReport;
  deploymentReadiness: Readiness;
  /** Imports of the external tool's JSON: what was converted, listed as unsupported, or warned about. */
  conversion?: ConversionReport;
}

/** The id live candidate execution must name in `expectedVersionId`: a digest of the draft graph. */
export function candidateVersionId(graph: WorkflowGraph): string {
  return `cand_${sha256Hex(canonicalJson({ nodes: graph.nodes, edges: graph.edges })).slice(0, 32)}`;
}

/** The validation report of a graph and whether it may be deployed; accepts any input shape. */
export function validateWorkflowGraph(graph: unknown): ValidationResult {
  const report = validateGraph(graph);
  return { report, deploymentReadiness: deploymentReadiness(report) };
}
