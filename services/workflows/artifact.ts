import { z } from 'zod';
import type { Workflow } from '../../db/entities';
import { draftEdgeSchema, draftNodeSchema } from '../../engine/nodes';
import type { GraphNode } from '../../engine/types';
import { validateWorkflowGraph, type ValidationResult } from './graph';

/**
 * The repository artifact: one JSON file per workflow, the unit that review writes to Git,
 * sync-from-repo reads back, validate-artifact checks and bundles carry. It has no secrets:
 * nodes reference credentials by alias, and `connections` maps each alias to the credential
 * type it needs (the workspace binds real credentials). Serialized with sorted keys and
 * two-space indentation so diffs stay small.
 */
export const ARTIFACT_SCHEMA = 'workflow-artifact.v1';

const externalIdRule = z
  .string()
  .min(1, 'externalId is required.')
  .max(200, 'externalId is at most 200 characters.')
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'externalId may contain letters, digits, ".", "_" and "-", and starts with a letter or digit.');

export const workflowArtifactSchema = z.strictObject({
  schema: z.literal(ARTIFACT_SCHEMA, { error: `schema must be "${ARTIFACT_SCHEMA}".` }),
  externalId: externalIdRule,
  name: z.string().trim().min(1, 'name is required.').max(200),
  description: z.string().max(5000).default(''),
  nodes: z.array(draftNodeSchema).max(500),
  edges: z.array(draftEdgeSchema).max(2000).default([]),
  connections: z.record(z.string().min(1), z.string().min(1)).default({}),
});
export type WorkflowArtifact = z.output<typeof workflowArtifactSchema>;

/** Keys whose values look like secrets: an artifact carrying them is refused. */
const SECRET_KEYS =
  /^(password|secret|token|apiKey|api_key|privateKey|private_key|clientSecret|client_secret|accessToken|access_token|signingSecret)$/i;

function secretPaths(value: unknown, path: string, out: string[]): void {
  if (Array.isArray(value)) value.forEach((v, i) => secretPaths(v, `${path}[${i}]`, out));
  else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      const p = path ? `${path}.${k}` : k;
      if (SECRET_KEYS.test(k) && typeof v === 'string' && v.length > 0 && !v.startsWith('=')) out.push(p);
      else secretPaths(v, p, out);
    }
  }
}

/** JSON with keys sorted at every level and two-space indentation, ending in a newline. */
export function stableStringify(value: unknown): string {
  const sort = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(sort);
    if (v && typeof v === 'object') {
      return Object.fromEntries(
        Object.keys(v as Record<string, unknown>)
          .sort()
          .map((k) => [k, sort((v as Record<string, unknown>)[k])]),
      );
    }
    return v;
  };
  return `${JSON.stringify(sort(value), null, 2)}\n`;
}

/** The credential aliases a graph references (`config.credential` or `config.credentialAlias`), with their type when declared. */
export function connectionsOf(nodes: GraphNode[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const node of nodes) {
    const config = node.config ?? {};
    const alias =
      typeof config.credentialAlias === 'string'
        ? config.credentialAlias
        : typeof config.credential === 'string'
          ? config.credential
          : undefined;
    if (alias) out[alias] = typeof config.credentialType === 'string' ? config.credentialType : node.type;
  }
  return out;
}

/** The artifact of a workflow's draft. */
export function toArtifact(wf: Pick<Workflow, 'name' | 'description' | 'nodes' | 'edges'>, externalId: string): WorkflowArtifact {
  return {
    schema: ARTIFACT_SCHEMA,
    externalId,
    name: wf.name,
    description: wf.description,
    nodes: wf.nodes,
    edges: wf.edges,
    connections: connectionsOf(wf.nodes),
  };
}

export const artifactFileName = (externalId: string) => `${externalId}.workflow.json`;

export interface ArtifactIssue {
  path: string;
  message: string;
}

export type ArtifactCheck = { ok: true; artifact: WorkflowArtifact; validation: ValidationResult } | { ok: false; errors: ArtifactIssue[] };

/** Checks one artifact (already parsed JSON): schema, secrets, then the graph's validation report. */
export function checkArtifact(value: unknown): ArtifactCheck {
  const parsed = workflowArtifactSchema.safeParse(value);
  if (!parsed.success) {
    return { ok: false, errors: parsed.error.issues.map((i) => ({ path: i.path.map(String).join('.') || '(root)', message: i.message })) };
  }
  const secrets: string[] = [];
  secretPaths(parsed.data.nodes, 'nodes', secrets);
  if (secrets.length > 0) {
    return {
      ok: false,
      errors: secrets.map((p) => ({ path: p, message: 'Artifacts must not carry secret values; reference a credential alias instead.' })),
    };
  }
  const validation = validateWorkflowGraph({ nodes: parsed.data.nodes, edges: parsed.data.edges });
  const malformed = validation.report.errors.filter((e) => !e.nodeId && !e.edgeId && e.code === 'invalid_config');
  if (malformed.length > 0) return { ok: false, errors: malformed.map((e) => ({ path: 'nodes', message: e.message })) };
  return { ok: true, artifact: parsed.data, validation };
}

/** Parses artifact text; a JSON syntax error is one issue at the root. */
export function checkArtifactText(text: string): ArtifactCheck {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { ok: false, errors: [{ path: '(root)', message: `Not valid JSON: ${(err as Error).message}` }] };
  }
  return checkArtifact(value);
}

export interface ArtifactFileReport {
  path: string;
  valid: boolean;
  externalId: string | null;
  name: string | null;
  errors: ArtifactIssue[];
  validation: ValidationResult | null;
}

/**
 * `POST /workflows/validate-artifact`: `files` is an object (path → content) or an array of
 * `{ path, content }`; content is the file's text or already-parsed JSON. Duplicate
 * externalIds across files are reported on every file that carries them.
 */
export function validateArtifactFiles(files: Record<string, unknown> | Array<{ path: string; content: unknown }>): {
  valid: boolean;
  files: ArtifactFileReport[];
} {
  const entries = Array.isArray(files) ? files.map((f) => [f.path, f.content] as const) : Object.entries(files);
  const reports: ArtifactFileReport[] = entries.map(([path, content]) => {
    const check = typeof content === 'string' ? checkArtifactText(content) : checkArtifact(content);
    if (!check.ok) return { path, valid: false, externalId: null, name: null, errors: check.errors, validation: null };
    return {
      path,
      valid: true,
      externalId: check.artifact.externalId,
      name: check.artifact.name,
      errors: [],
      validation: check.validation,
    };
  });
  const seen = new Map<string, number>();
  for (const r of reports) if (r.externalId) seen.set(r.externalId, (seen.get(r.externalId) ?? 0) + 1);
  for (const r of reports) {
    if (r.externalId && (seen.get(r.externalId) ?? 0) > 1) {
      r.valid = false;
      r.errors.push({ path: 'externalId', message: `externalId "${r.externalId}" appears in more than one file.` });
    }
  }
  return { valid: reports.length > 0 && reports.every((r) => r.valid), files: reports };
}
