/**
 * The skills area: versions, visibility and CRUD (skills.ts), skill markdown (content.ts),
 * publication moves (publication.ts) and progressive load (load.ts: `loadSkills`, also the
 * `skills.load` capability other areas' agents call).
 */
export * from './skills';
export * from './content';
export * from './publication';
export * from './load';
