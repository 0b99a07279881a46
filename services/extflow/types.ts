/**
 * The external tool's (extflow) workflow export format, as far as the converter reads it, and
 * the conversion report the import answers with (`importReadiness.conversion`).
 */

export interface ExtNode {
  id?: string;
  name: string;
  type: string;
  typeVersion?: number;
  position?: [number, number];
  parameters?: Record<string, unknown>;
  credentials?: Record<string, { id?: string; name?: string } | undefined>;
  disabled?: boolean;
  continueOnFail?: boolean;
  onError?: 'continueRegularOutput' | 'continueErrorOutput' | 'stopWorkflow';
  retryOnFail?: boolean;
  maxTries?: number;
  waitBetweenTries?: number;
  notes?: string;
}

export interface ExtConnection {
  node: string;
  type?: string;
  index?: number;
}

export interface ExtWorkflow {
  id?: string | number;
  name?: string;
  nodes: ExtNode[];
  connections: Record<string, { main?: Array<ExtConnection[] | null> } & Record<string, unknown>>;
  settings?: { timezone?: string } & Record<string, unknown>;
  pinData?: Record<string, unknown>;
  active?: boolean;
  tags?: unknown[];
}

/** A node (or a feature of one) the converter could not express: never dropped, always listed. */
export interface UnsupportedItem {
  /** The node's name in the export. */
  node: string;
  nodeType: string;
  reason: string;
  /** What to do about it. */
  action: string;
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

/** Thrown by node mappers and the expression translator: the node becomes an unsupported placeholder. */
export class Unsupported extends Error {
  constructor(
    readonly reason: string,
    readonly action: string,
  ) {
    super(reason);
    this.name = 'Unsupported';
  }
}
