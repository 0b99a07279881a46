import type { MigrationObject } from '@mikro-orm/core';
import { Migration20261121000000_platform } from './Migration20261121000000_platform';
import { Migration20261121010000_workflows } from './Migration20261121010000_workflows';
import { Migration20261121020000_webhooks } from './Migration20261121020000_webhooks';
import { Migration20261121030000_smoke_tests } from './Migration20261121030000_smoke_tests';
import { Migration20261123000000_end_user_runs } from './Migration20261123000000_end_user_runs';
import { Migration20261123010000_sign_in_limits } from './Migration20261123010000_sign_in_limits';
import { Migration20261123110000_invitations } from './Migration20261123110000_invitations';
import { Migration20261123121000_files } from './Migration20261123121000_files';
import { Migration20261123120000_credentials } from './Migration20261123120000_credentials';
import { Migration20261123123000_destinations } from './Migration20261123123000_destinations';
import { Migration20261123122000_databases } from './Migration20261123122000_databases';
import { Migration20261123125000_repository_mcp } from './Migration20261123125000_repository_mcp';
import { Migration20261123126000_mailer } from './Migration20261123126000_mailer';
import { Migration20261123129000_commands } from './Migration20261123129000_commands';
import { Migration20261123133000_organizations_git_remotes } from './Migration20261123133000_organizations_git_remotes';
import { Migration20261123132000_mailer_polling } from './Migration20261123132000_mailer_polling';
import { Migration20261123124000_knowledge } from './Migration20261123124000_knowledge';
import { Migration20261123127000_skills } from './Migration20261123127000_skills';
import { Migration20261123131000_local_ai_cli } from './Migration20261123131000_local_ai_cli';
import { Migration20261123128000_research } from './Migration20261123128000_research';
import { Migration20261123135000_jobs_gaps } from './Migration20261123135000_jobs_gaps';
import { Migration20261127160000_worker_heartbeats } from './Migration20261127160000_worker_heartbeats';
import { Migration20261127200000_sign_in_counters } from './Migration20261127200000_sign_in_counters';
import { Migration20261127201000_credential_destinations } from './Migration20261127201000_credential_destinations';
import { Migration20261128090000_extflow_imports } from './Migration20261128090000_extflow_imports';
import { Migration20261128130000_hot_path } from './Migration20261128130000_hot_path';
import { Migration20261128140000_run_step_iterations } from './Migration20261128140000_run_step_iterations';
import { Migration20261128160000_outbox_fairness } from './Migration20261128160000_outbox_fairness';

/**
 * Migrations in order. Listed explicitly (not globbed from disk) so the same list works
 * under tsx, ts-jest and the compiled dist/ build.
 */
export const migrationsList: MigrationObject[] = [
  { name: 'Migration20261121000000_platform', class: Migration20261121000000_platform },
  { name: 'Migration20261121010000_workflows', class: Migration20261121010000_workflows },
  { name: 'Migration20261121020000_webhooks', class: Migration20261121020000_webhooks },
  { name: 'Migration20261121030000_smoke_tests', class: Migration20261121030000_smoke_tests },
  { name: 'Migration20261123000000_end_user_runs', class: Migration20261123000000_end_user_runs },
  { name: 'Migration20261123010000_sign_in_limits', class: Migration20261123010000_sign_in_limits },
  { name: 'Migration20261123110000_invitations', class: Migration20261123110000_invitations },
  { name: 'Migration20261123120000_credentials', class: Migration20261123120000_credentials },
  { name: 'Migration20261123121000_files', class: Migration20261123121000_files },
  { name: 'Migration20261123122000_databases', class: Migration20261123122000_databases },
  { name: 'Migration20261123123000_destinations', class: Migration20261123123000_destinations },
  { name: 'Migration20261123124000_knowledge', class: Migration20261123124000_knowledge },
  { name: 'Migration20261123125000_repository_mcp', class: Migration20261123125000_repository_mcp },
  { name: 'Migration20261123126000_mailer', class: Migration20261123126000_mailer },
  { name: 'Migration20261123127000_skills', class: Migration20261123127000_skills },
  { name: 'Migration20261123128000_research', class: Migration20261123128000_research },
  { name: 'Migration20261123129000_commands', class: Migration20261123129000_commands },
  { name: 'Migration20261123131000_local_ai_cli', class: Migration20261123131000_local_ai_cli },
  { name: 'Migration20261123132000_mailer_polling', class: Migration20261123132000_mailer_polling },
  { name: 'Migration20261123133000_organizations_git_remotes', class: Migration20261123133000_organizations_git_remotes },
  { name: 'Migration20261123135000_jobs_gaps', class: Migration20261123135000_jobs_gaps },
  { name: 'Migration20261127160000_worker_heartbeats', class: Migration20261127160000_worker_heartbeats },
  { name: 'Migration20261127200000_sign_in_counters', class: Migration20261127200000_sign_in_counters },
  { name: 'Migration20261127201000_credential_destinations', class: Migration20261127201000_credential_destinations },
  { name: 'Migration20261128090000_extflow_imports', class: Migration20261128090000_extflow_imports },
  { name: 'Migration20261128130000_hot_path', class: Migration20261128130000_hot_path },
  { name: 'Migration20261128140000_run_step_iterations', class: Migration20261128140000_run_step_iterations },
  { name: 'Migration20261128160000_outbox_fairness', class: Migration20261128160000_outbox_fairness },
];
