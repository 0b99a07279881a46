/**
 * Worker options that do not depend on our activities, so a bare worker (the benchmarks'
 * baseline) can use the same ones without loading the service.
 */

/**
 * The SDK runs at most `maxConcurrentWorkflowTaskExecutions` (default 40) workflow tasks at once
 * and needs each of them cached; a smaller cache lowers that limit to the cache size (the SDK
 * would otherwise log a warning and do the same).
 */
export function stickyCacheOptions(maxCachedWorkflows: number): {
  maxCachedWorkflows: number;
  maxConcurrentWorkflowTaskExecutions?: number;
} {
  return maxCachedWorkflows < 40 ? { maxCachedWorkflows, maxConcurrentWorkflowTaskExecutions: maxCachedWorkflows } : { maxCachedWorkflows };
}
