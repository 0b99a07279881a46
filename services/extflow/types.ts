/**
 * The external tool's (extflow) workflow export format, as far as the converter reads it. The
 * conversion report the import answers with (`importReadiness.conversion`) is part of a
 * workflow's validation result, so its shape lives in the workflows base area.
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
  executeOnce?: boolean;
  alwaysOutputData?: boolean;
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

export type {
  ConversionReport,
  ConversionWarning,
  CredentialAlias,
  PinnedDataItem,
  ReadinessIssue,
  SubworkflowRef,
  UnsupportedItem,
} from '../workflows/conversionReport';

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
