import type { EntityManager } from '@mikro-orm/postgresql';

const CHECK_TIMEOUT_MS = 2_000;

/** One dependency's answer to a readiness check; `error` never carries connection details. */
export interface DependencyCheck {
  ok: boolean;
  latencyMs: number;
  error?: string;
}

export interface ServiceReadiness {
  status: 'ready' | 'not_ready' | 'shutting_down';
  checks: { database: DependencyCheck; temporal: DependencyCheck };
}

/**
 * Whether this process should receive traffic: PostgreSQL and Temporal answer within 2 s each
 * (checked in parallel) and shutdown has not started. The Temporal check is passed in as a
 * ping so this module stays free of the Temporal client.
 */
export async function checkReadiness(em: EntityManager, probes: { pingTemporal: () => Promise<unknown>; shuttingDown: boolean }): Promise<ServiceReadiness> {
  const [database, temporal] = await Promise.all([timed(() => em.execute('select 1')), timed(probes.pingTemporal)]);
  const checks = { database, temporal };
  if (probes.shuttingDown) return { status: 'shutting_down', checks };
  return { status: database.ok && temporal.ok ? 'ready' : 'not_ready', checks };
}

/** Runs a dependency check with a deadline; reports failures without their connection details. */
async function timed(check: () => Promise<unknown>): Promise<DependencyCheck> {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      check(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error('timed out')), CHECK_TIMEOUT_MS);
      }),
    ]);
    return { ok: true, latencyMs: Math.round(performance.now() - started) };
  } catch (err) {
    const message = (err as Error).message === 'timed out' ? 'timed out' : 'unreachable';
    return { ok: false, latencyMs: Math.round(performance.now() - started), error: message };
  } finally {
    clearTimeout(timer);
  }
}
