/**
 * The conversion report an import of an external tool's workflow answers with
 * (`importReadiness.conversion`), part of a workflow's validation result (graph.ts). The
 * converter that fills it is services/extflow/.
 */

/** A node (or a feature of one) the converter could not express: never dropped, always listed. */
export interface UnsupportedItem {
  /** The node's name in the export. */
  node: string;
  nodeType: string;
  reason: string;
  /** What to do about it. */
  action: string;
}

/**
 * Why a converted workflow is not ready although every node mapped: a credential the workspace
 * lacks, an option of a node that is not carried over, or a conversion that does not keep the
 * external tool's meaning in every case. Each is also a deploy-readiness blocker; unlike an
 * unsupported node it leaves no placeholder, so deploy does not refuse the graph.
 */
export interface ReadinessIssue {
  node: string;
  kind: 'missingCredential' | 'unsupportedOption' | 'lossyConversion';
  message: string;
}

export interface ConversionWarning {
  node: string;
  message: string;
}

export interface CredentialAlias {
  /** The credential's name in the export: nodes reference it as `credentialId`, resolved by name. */
  alias: string;
  /** The external tool's credential type. */
  extflowType: string;
  /** Our credential type it corresponds to, when there is one. */
  type: string | null;
  nodes: string[];
}

export interface SubworkflowRef {
  node: string;
  /** The externalId (`extflow-<id>`) the subworkflow node references. */
  reference: string;
}

export interface ConversionReport {
  source: 'extflow';
  /** The workflow's id in the external tool, when the export carries one. */
  sourceWorkflowId: string | null;
  externalId: string;
  ready: boolean;
  nodeCount: number;
  mappedNodes: number;
  translatedExpressions: number;
  unsupported: UnsupportedItem[];
  /** What keeps the workflow from being ready besides unsupported nodes (each named). */
  readinessIssues: ReadinessIssue[];
  warnings: ConversionWarning[];
  credentials: CredentialAlias[];
  subworkflows: SubworkflowRef[];
  /** Nodes with pinned data: kept for the extflow smoke test's dry runs (live runs execute them). */
  pinnedData: PinnedDataItem[];
}

export interface PinnedDataItem {
  /** The node's name in the export. */
  node: string;
  /** Our node that outputs the pinned data in dry runs (or, for a trigger, whose input it is). */
  nodeId: string;
  items: number;
}
