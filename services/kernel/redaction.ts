/**
 * Field redaction for safe principals (personal, copilot, viewer, organization reads): the
 * `workspace-safe.v1` contract removes restricted fields and adds a `redaction` marker. Not to
 * be confused with the run read model (services/runs/readModel.ts).
 */
import type { Principal } from './principal';
import { projectionFor } from './principal';

export const SAFE_CONTRACT_VERSION = 'workspace-safe.v1';

export interface Redaction {
  applied: true;
  projection: 'safe-content';
  contractVersion: typeof SAFE_CONTRACT_VERSION;
  restrictedFields: string[];
}

/**
 * Builds the `workspace-safe.v1` projection of an object: removes each restricted field
 * (dotted paths reach into arrays of objects, e.g. `steps.input`) and adds the `redaction`
 * marker. An omitted field means "restricted", not "empty": clients branch on
 * `redaction.applied`. The input is not mutated.
 */
export function toSafeProjection<T extends Record<string, unknown>>(
  value: T,
  restrictedFields: readonly string[],
  /** Also removed, but not listed in `restrictedFields` (e.g. a run's waits and snapshots). */
  unlistedFields: readonly string[] = [],
): T & { redaction: Redaction } {
  const copy = structuredClone(value) as Record<string, unknown>;
  for (const field of [...restrictedFields, ...unlistedFields]) removePath(copy, field.split('.'));
  return { ...(copy as T), redaction: safeRedaction(restrictedFields) };
}

export function safeRedaction(restrictedFields: readonly string[]): Redaction {
  return {
    applied: true,
    projection: 'safe-content',
    contractVersion: SAFE_CONTRACT_VERSION,
    restrictedFields: [...restrictedFields],
  };
}

/** Returns the full object for principals with write permission, the safe projection otherwise. */
export function projectFor<T extends Record<string, unknown>>(
  principal: Principal,
  value: T,
  restrictedFields: readonly string[],
  unlistedFields: readonly string[] = [],
): T | (T & { redaction: Redaction }) {
  return projectionFor(principal) === 'full' ? value : toSafeProjection(value, restrictedFields, unlistedFields);
}

/** The restricted fields of a workflow run, as the spec lists them. */
export const RUN_RESTRICTED_FIELDS = ['input', 'output', 'error', 'steps.input', 'steps.output', 'steps.error', 'logs'] as const;

/** Run fields the safe projection also drops: the spec's safe run carries none of them. */
export const RUN_UNLISTED_RESTRICTED_FIELDS = ['waits', 'executionSnapshots', 'executionEvidence', 'errorNodeId', 'cancelReason'] as const;

function removePath(target: unknown, path: string[]): void {
  if (Array.isArray(target)) {
    for (const item of target) removePath(item, path);
    return;
  }
  if (!target || typeof target !== 'object') return;
  const [head, ...rest] = path;
  if (head === undefined) return;
  const record = target as Record<string, unknown>;
  if (rest.length === 0) delete record[head];
  else removePath(record[head], rest);
}
