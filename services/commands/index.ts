export * from './store';
export * from './views';
export * from './jobs';
export * from './confirm';
export * from './schedules';
export * from './agent';
export { COMMAND_TOOLS, offeredTools, type CommandPluggableTools, type CommandToolDeps } from './tools';
export * from './messages';
