import type { EntityManager } from '@mikro-orm/postgresql';
import { WorkflowVersionSchema } from '../../db/entities';
import type { WorkflowGraph } from '../../engine/types';

/** A stored version's graph, as the run path needs it. */
export interface VersionGraph {
  id: string;
  graph: WorkflowGraph;
}

/**
 * Graphs of stored workflow versions, kept by id once read: a version's nodes and edges never
 * change after it is written (a deploy writes a new version; only its display label may be
 * renamed, and that is not kept here). An entry is keyed by workspace and version and read with
 * both, so a version is only ever served to callers of its own workspace. Entries are frozen:
 * the graph is shared by every run that reads it. The least recently used beyond `maxEntries`
 * are dropped.
 */
export class VersionGraphCache {
  private readonly entries = new Map<string, VersionGraph>();

  constructor(private readonly maxEntries = 256) {}

  /** The graph of version `versionId` of `workspaceId`; throws the ORM's NotFoundError like `findOneOrFail` when there is none. */
  async get(em: EntityManager, workspaceId: string, versionId: string): Promise<VersionGraph> {
    const key = `${workspaceId}:${versionId}`;
    const hit = this.entries.get(key);
    if (hit) {
      // Map order is insertion order: re-inserting makes it the most recently used.
      this.entries.delete(key);
      this.entries.set(key, hit);
      return hit;
    }
    const version = await em.findOneOrFail(WorkflowVersionSchema, { id: versionId, workspaceId });
    const entry: VersionGraph = deepFreeze({
      id: version.id,
      graph: { nodes: structuredClone(version.nodes), edges: structuredClone(version.edges) },
    });
    this.entries.set(key, entry);
    if (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    return entry;
  }
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const item of Object.values(value)) deepFreeze(item);
  }
  return value;
}
