/**
 * The workflows base area: what every other area reads and nothing here writes on their behalf.
 * The graph helpers (graph.ts: candidateVersionId, validateWorkflowGraph), the workflow artifact
 * (artifact.ts), reads and views (views.ts), the runnable rule (runnable.ts) and the shape of an
 * import's conversion report (conversionReport.ts). Use cases on top of it (create, deploy,
 * import, bundles) live in services/publishing/.
 */
export { candidateVersionId, type Readiness, validateWorkflowGraph, type ValidationResult } from './graph';
export {
  ARTIFACT_SCHEMA,
  type ArtifactCheck,
  artifactFileName,
  type ArtifactFileReport,
  type ArtifactIssue,
  checkArtifact,
  checkArtifactText,
  connectionsOf,
  stableStringify,
  toArtifact,
  validateArtifactFiles,
  type WorkflowArtifact,
  workflowArtifactSchema,
} from './artifact';
export {
  activeVersionNumber,
  exportWorkflow,
  getWorkflow,
  listVersions,
  listWorkflows,
  loadWorkflow,
  portableShape,
  validateWorkflow,
  viewOf,
  WORKFLOW_FORBIDDEN,
  workflowIdsExist,
  workflowView,
  type WorkflowView,
} from './views';
export { VersionGraphCache, type VersionGraph } from './versionGraphs';
export { isRunnable, runnableActiveVersion, type RunnableVersion, type RunTarget, whyNotRunnable } from './runnable';
