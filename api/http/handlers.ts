import type { AppContext } from '../context';
import type { WorkspacePrincipal } from '../../services/kernel/principal';
import type { RouteResult } from './route';

/** A service read of one resource of the caller's workspace, by id. */
export type ReadById<T> = (em: AppContext['state']['em'], principal: WorkspacePrincipal, id: string) => Promise<T>;

/**
 * The handler of a route that reads one resource by the `{id}` of its path and answers 200 with
 * it under `key` (`{ knowledgeBase }`). The read decides what "not found" is: another
 * workspace's id must throw `notFound` there, this handler adds no check of its own.
 */
export function answerById<T>(key: string, read: ReadById<T>) {
  return async (ctx: AppContext, input: { principal: WorkspacePrincipal; params: { id: string } }): Promise<RouteResult> => ({
    status: 200,
    body: { [key]: await read(ctx.state.em, input.principal, input.params.id) },
  });
}
