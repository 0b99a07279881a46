/**
 * The publishing use cases, on top of the workflows base and the feature areas: create, update,
 * delete and restore (crud.ts), deploy (deploy.ts), import parsing (import.ts), workflow bundles
 * (bundle.ts), the changes of `POST /workflows/{id}/targets` (destinationChanges.ts) and the
 * extflow import, its smoke test and credentials bootstrap (extflowImport.ts).
 */
export {
  createWorkflow,
  type CreateWorkflowInput,
  deleteWorkflow,
  restoreVersion,
  updateWorkflow,
  type WorkflowPatch,
  type WorkflowUpdate,
} from './crud';
export { type DeployDeps, deployLoaded, type Deployment, deployWorkflow } from './deploy';
export { externalIdsOf, type ImportResult, parseImportJson, previewImport, previewImportIn } from './import';
export {
  BUNDLE_SCHEMA,
  type BundleSubWorkflowStatus,
  type ImportAction,
  importBundle,
  type ImportedBundleWorkflow,
  type ParsedBundle,
  parsedExtflowBundle,
  previewBundle,
  type SubWorkflowReference,
} from './bundle';
export {
  type ChangeReceipt,
  type ChangeResult,
  changeTarget,
  type TargetAction,
  type TargetChange,
  type TargetChangeDeps,
} from './destinationChanges';
export {
  bootstrapExtflowCredentials,
  type BundleSource,
  type ExtflowDeps,
  importExtflowBundle,
  importExtflowOriginals,
  loadExtflowBundle,
  type SmokeOutcome,
  type SmokeRequest,
  smokeTestExtflow,
} from './extflowImport';
