import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';

/**
 * Niceness of a sandbox thread: guest code yields the CPU to the API's and the worker's main
 * threads. Not 19: deadlines are wall clock, and at 19 a thread gets ~1.5% of a core against
 * one busy process, so on a saturated machine even trivial code missed its 1 s deadline; at 5
 * it still gets ~25%.
 */
export const SANDBOX_THREAD_NICENESS = 5;

/**
 * Lowers the calling thread's scheduling priority. Linux schedules threads individually: the id
 * of the calling thread is the last part of /proc/thread-self. Elsewhere this does nothing.
 */
export function lowerThreadPriority(): void {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (Number.isInteger(tid) && tid > 0) setPriority(tid, SANDBOX_THREAD_NICENESS);
  } catch {
    // Not Linux, or not permitted: the outer deadline still bounds every call.
  }
}
