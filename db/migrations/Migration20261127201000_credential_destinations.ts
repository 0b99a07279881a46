import { Migration } from '@mikro-orm/migrations';

// No question mark in this SQL: drivers read it as a bind parameter (`\x3f` stands for it).
/** Binds http credentials to the hosts of the literal URLs of the http nodes that name them (exported for its test). */
export const BACKFILL_OBSERVED_HOSTS = `
      with refs as (
        select w.workspace_id, n->'config' as cfg
          from workflows w cross join lateral jsonb_array_elements(case when jsonb_typeof(w.nodes) = 'array' then w.nodes else '[]'::jsonb end) n
         where n->>'type' = 'http'
        union all
        select v.workspace_id, n->'config'
          from workflow_versions v cross join lateral jsonb_array_elements(case when jsonb_typeof(v.nodes) = 'array' then v.nodes else '[]'::jsonb end) n
         where n->>'type' = 'http'
      ), observed as (
        select distinct c.id, lower(regexp_replace(regexp_replace(r.cfg->>'url', '^[A-Za-z]+://([^@/]*@){0,1}', ''), '[/#\\x3f].*$', '')) as host
          from refs r
          join credentials c on c.workspace_id = r.workspace_id
           and (c.id = r.cfg->>'credentialId' or lower(c.name) = lower(btrim(r.cfg->>'credentialId')))
         where c.type in ('api_key', 'bearer', 'basic', 'oauth2', 'http_header')
           and r.cfg->>'url' ~* '^https{0,1}://[^\\s/#\\x3f@]+'
      )
      update credentials c
         set allowed_hosts = array(select o.host from observed o where o.id = c.id and o.host is not null and o.host <> '' order by o.host limit 50)
       where exists (select 1 from observed o where o.id = c.id);`;

/** Binds repo credentials to the hosts of the Git remotes their workspace repository uses them for. */
export const BACKFILL_REPOSITORY_REMOTES = `
      update credentials c
         set allowed_hosts = array(
           select distinct lower(regexp_replace(regexp_replace(r.remote_url, '^[A-Za-z]+://([^@/]*@){0,1}', ''), '[/#\\x3f].*$', ''))
             from workspace_repositories r
            where r.credential_id = c.id and r.remote_url is not null
            order by 1)
       where c.type = 'repo'
         and exists (select 1 from workspace_repositories r where r.credential_id = c.id and r.remote_url is not null);`;

/**
 * Credentials bound to destinations (issue 27 item 5): `allowed_hosts`, the hosts a credential
 * may be sent to besides those its value and provider imply.
 *
 * Existing http credentials (api_key, bearer, basic, oauth2, http_header) are bound to the
 * hosts they were observed being sent to: the literal URLs of the http nodes that name them
 * (by id, or by name case-insensitively) in any workflow's draft or saved version of their
 * workspace. One that no node names with a literal URL stays bound only to what its value
 * implies (its probeUrl host) until it is saved again with its secret and `allowedHosts`:
 * (repo credentials are bound likewise to the Git remote their workspace repository names)
 * "any host" would keep the exfiltration open for exactly the credentials nobody watches.
 */
export class Migration20261127201000_credential_destinations extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table credentials add column allowed_hosts text[] not null default '{}';`);
    this.addSql(BACKFILL_OBSERVED_HOSTS);
    this.addSql(BACKFILL_REPOSITORY_REMOTES);
  }

  override async down(): Promise<void> {
    this.addSql('alter table credentials drop column if exists allowed_hosts;');
  }
}
