import type { EntityManager } from '@mikro-orm/postgresql';
import { WorkflowVersionSchema, type Workflow } from '../../db/entities';
import type { GraphNode } from '../../engine/types';
import type { WorkspacePrincipal } from '../kernel/principal';
import { loadWorkflow } from '../workflows';
import { immediateResult, type CredentialTestResult } from './checks';
import { createCredential, openCredential, resolveCredentialReference, type CredentialDeps } from './crud';
import { boundHostsText, credentialDestinations, hostAllowed, shownHost } from './destinations';
import { requireKeyring } from './keys';
import { testStoredCredential, type CredentialTestDeps } from './testing';
import { CREDENTIAL_TYPES } from './types';

/**
 * A workflow's credential references: every `config.credentialId` of its nodes (the draft and
 * the active version), each resolved in the workspace by id, else by name.
 */
export interface CredentialReference {
  reference: string;
  nodeIds: string[];
}

export function credentialReferences(...graphs: GraphNode[][]): CredentialReference[] {
  const refs = new Map<string, Set<string>>();
  for (const nodes of graphs) {
    for (const node of nodes ?? []) {
      const ref = (node.config as Record<string, unknown> | undefined)?.credentialId;
      if (typeof ref === 'string' && ref.trim() !== '') {
        if (!refs.has(ref)) refs.set(ref, new Set());
        refs.get(ref)!.add(node.id);
      }
    }
  }
  return [...refs].map(([reference, nodeIds]) => ({ reference, nodeIds: [...nodeIds].sort() }));
}

async function graphsOf(em: EntityManager, wf: Workflow): Promise<GraphNode[][]> {
  const active = wf.activeVersionId ? await em.findOne(WorkflowVersionSchema, { id: wf.activeVersionId }) : null;
  return [wf.nodes, active?.nodes ?? []];
}

/** The literal URLs (not `=` expressions) the http nodes send credential `reference` to. */
function literalUrlsOf(graphs: GraphNode[][], reference: string): Array<{ nodeId: string; url: string }> {
  const out: Array<{ nodeId: string; url: string }> = [];
  for (const nodes of graphs) {
    for (const node of nodes ?? []) {
      const config = node.config ?? {};
      if (node.type === 'http' && config.credentialId === reference && typeof config.url === 'string' && /^https?:\/\//i.test(config.url))
        out.push({ nodeId: node.id, url: config.url });
    }
  }
  return out;
}

/**
 * A node that would send the credential to a host it is not bound to: the test says so
 * (`refused`) instead of probing, so a workflow the run would fail is caught beforehand.
 */
function destinationProblem(
  deps: CredentialTestDeps,
  row: NonNullable<Awaited<ReturnType<typeof resolveCredentialReference>>>,
  targets: Array<{ nodeId: string; url: string }>,
): CredentialTestResult | null {
  if (targets.length === 0) return null;
  let value = null;
  try {
    value = openCredential(requireKeyring(deps.keys), row);
  } catch {
    return null; // unreadable: the test itself reports it
  }
  const allowed = credentialDestinations(row, value);
  for (const t of targets) {
    let url: URL;
    try {
      url = new URL(t.url);
    } catch {
      continue;
    }
    if (!hostAllowed(allowed, url)) {
      return immediateResult(
        'refused',
        `Node "${t.nodeId}" would send credential "${row.name}" to ${shownHost(t.url)}: ${boundHostsText(allowed)}. Add the host to its allowedHosts (with its secret).`,
      );
    }
  }
  return null;
}

export interface WorkflowCredentialTest {
  reference: string;
  nodeIds: string[];
  credential: { id: string; name: string; type: string } | null;
  result: CredentialTestResult;
}

/**
 * Tests every credential the workflow's nodes name; a name the workspace lacks is `missing`,
 * and one a node would send to a host it is not bound to is `refused`.
 */
export async function testWorkflowCredentials(
  em: EntityManager,
  principal: WorkspacePrincipal,
  deps: CredentialTestDeps,
  workflowId: string,
): Promise<{ workflowId: string; ok: boolean; credentials: WorkflowCredentialTest[] }> {
  const wf = await loadWorkflow(em, principal, workflowId);
  const out: WorkflowCredentialTest[] = [];
  const graphs = await graphsOf(em, wf);
  for (const ref of credentialReferences(...graphs)) {
    const row = await resolveCredentialReference(em, wf.workspaceId, ref.reference);
    const result = row
      ? (destinationProblem(deps, row, literalUrlsOf(graphs, ref.reference)) ?? (await testStoredCredential(em, deps, row)))
      : immediateResult(
          'missing',
          'The workspace has no credential with this id or name; create it or run credentials/bootstrap-from-env.',
        );
    out.push({ ...ref, credential: row ? { id: row.id, name: row.name, type: row.type } : null, result });
  }
  return { workflowId: wf.id, ok: out.every((c) => c.result.ok), credentials: out };
}

/**
 * The deployment variable a reference maps to: upper case, every run of other characters an
 * underscore (`repo-token` → `REPO_TOKEN`).
 */
export function envVarForReference(reference: string): string {
  return reference
    .trim()
    .toUpperCase()
    .replace(/[^A-Z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '');
}

export type BootstrapOutcome = 'created' | 'exists' | 'not_allowed' | 'unset' | 'invalid';

export interface BootstrapReport {
  workflowId: string;
  created: number;
  skipped: number;
  credentials: Array<{ reference: string; outcome: BootstrapOutcome; credentialId: string | null }>;
}

/**
 * Creates the credentials a workflow names but the workspace lacks, from deployment variables:
 * reference `repo-token` takes `REPO_TOKEN`, which CREDENTIAL_ENV_ALLOWLIST must list with its
 * type (`REPO_TOKEN:repo`). The credential is named after the reference, so the nodes resolve
 * it by name. The report holds counts and outcomes, never values or variable names.
 */
export async function bootstrapWorkflowCredentials(
  em: EntityManager,
  principal: WorkspacePrincipal,
  deps: CredentialDeps,
  workflowId: string,
): Promise<BootstrapReport> {
  const wf = await loadWorkflow(em, principal, workflowId);
  const references = credentialReferences(...(await graphsOf(em, wf))).map((r) => r.reference);
  return { workflowId: wf.id, ...(await bootstrapCredentialReferences(em, principal, deps, references)) };
}

/**
 * The bootstrap of a list of credential references (names) in the principal's workspace, by
 * the rules above: bootstrapWorkflowCredentials for one workflow, the external-tool import
 * (services/extflow) for a bundle's credential aliases.
 */
export async function bootstrapCredentialReferences(
  em: EntityManager,
  principal: WorkspacePrincipal,
  deps: CredentialDeps,
  references: string[],
): Promise<Omit<BootstrapReport, 'workflowId'>> {
  const report: Omit<BootstrapReport, 'workflowId'> = { created: 0, skipped: 0, credentials: [] };
  for (const reference of [...new Set(references)]) {
    const existing = await resolveCredentialReference(em, principal.workspaceId, reference);
    const entry = (outcome: BootstrapOutcome, credentialId: string | null = null) => {
      report.credentials.push({ reference, outcome, credentialId });
      if (outcome === 'created') report.created++;
      else report.skipped++;
    };
    if (existing) {
      entry('exists', existing.id);
      continue;
    }
    const envVar = envVarForReference(reference);
    const allowed = deps.envAllowlist.find((e) => e.name === envVar);
    if (!allowed?.type || !CREDENTIAL_TYPES[allowed.type]) {
      entry('not_allowed');
      continue;
    }
    const raw = deps.readEnv(envVar);
    if (raw === undefined || raw.trim() === '') {
      entry('unset');
      continue;
    }
    try {
      const { credential } = await createCredential(em, principal, deps, {
        name: reference.trim().slice(0, 200),
        type: allowed.type,
        envVar,
      });
      entry('created', credential.id);
    } catch (err) {
      if ((err as { kind?: string }).kind === 'invalid') entry('invalid');
      else throw err;
    }
  }
  return report;
}
