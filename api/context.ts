import type { RouterContext } from '@koa/router';
import '@koa/bodyparser';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import type { Family } from './http/families';
import type { WorkspacePrincipal } from '../services/kernel/principal';
import type { AppDeps } from './deps';

/** What every request carries through the middleware chain. */
export interface AppState {
  requestId: string;
  log: Logger;
  /** A request-scoped fork of the ORM's entity manager. */
  em: EntityManager;
  /** Which error family the matched route answers in; bare until a route says otherwise. */
  family: Family;
  /** Set by the auth middleware for every non-public route: always anchored in one workspace. */
  principal?: WorkspacePrincipal;
}

/** Koa context of this app: router params, parsed body (`ctx.request.body`) and injected deps. */
export type AppContext = RouterContext<AppState, { deps: AppDeps }>;
