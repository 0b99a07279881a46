import type { MigrationObject } from '@mikro-orm/core';
import { Migration20261121000000_platform } from './Migration20261121000000_platform';
import { Migration20261121010000_workflows } from './Migration20261121010000_workflows';
import { Migration20261121020000_webhooks } from './Migration20261121020000_webhooks';
import { Migration20261121030000_smoke_tests } from './Migration20261121030000_smoke_tests';
import { Migration20261123000000_end_user_runs } from './Migration20261123000000_end_user_runs';
import { Migration20261123010000_sign_in_limits } from './Migration20261123010000_sign_in_limits';

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
];
