/**
 * The workflows area: reads and views (views.ts), create/update/delete/restore (crud.ts),
 * deploy (deploy.ts), import parsing (import.ts) and the graph helpers other areas use
 * (graph.ts: candidateVersionId, validateWorkflowGraph). Importers use this module.
 */
export * from './graph';
export * from './import';
export * from './artifact';
export * from './bundle';
export * from './views';
export * from './crud';
export * from './deploy';
