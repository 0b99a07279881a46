import { z } from 'zod';
import { defineArea, list, SECRET } from './define';

/**
 * Sticky cache of a worker (runs kept in memory between workflow tasks). The SDK's default
 * grows with the heap limit (about 2,300 on a 4 GiB heap), so thousands of parked runs would
 * stay resident. See docs/decisions.md, "Sticky cache", for why this number.
 */
export const DEFAULT_MAX_CACHED_WORKFLOWS = 100;

/** The Temporal cluster (or `npm start`'s dev server), its workers and the encryption of its payloads. */
export const temporalArea = defineArea('temporalCluster', 'Temporal', {
  TEMPORAL_ADDRESS: z.string().optional().describe('Temporal frontend `host:port`; unset means `npm start` runs the dev server.'),
  TEMPORAL_NAMESPACE: z.string().default('default').describe('Temporal namespace.'),
  TEMPORAL_UI_URL: z
    .string()
    .optional()
    .describe("Web UI base URL shown to operators (and later used for run deep links). Unset: the dev server's UI."),
  TEMPORAL_UI_ORIGINS: z
    .string()
    .refine((v) => list(v).every(isWebOrigin), 'expected comma-separated origins such as http://localhost:8233')
    .optional()
    .describe(
      'Comma-separated origins (`scheme://host:port`) of the Temporal Web UI, whose browser calls to the codec endpoint get CORS answers. Unset: `http://localhost:<TEMPORAL_UI_PORT>`, `http://127.0.0.1:<TEMPORAL_UI_PORT>` and the origin of TEMPORAL_UI_URL with its localhost/127.0.0.1 twin.',
    ),
  TEMPORAL_SDK_METRICS_ADDRESS: z
    .string()
    .regex(/^(\[[0-9a-fA-F:]+\]|[\w.-]+):\d{1,5}$/, 'expected host:port, e.g. 0.0.0.0:9464')
    .optional()
    .describe(
      "`host:port` where a worker process exports the Temporal SDK's Prometheus metrics; the API's `/metrics` includes those of a worker in its own process. Unset: a free 127.0.0.1 port.",
    ),
  TEMPORAL_PORT: z.coerce.number().int().min(1).max(65535).default(7233).describe('Dev server frontend port (`npm start` only).'),
  TEMPORAL_UI_PORT: z.coerce.number().int().min(1).max(65535).default(8233).describe('Dev server Web UI port (`npm start` only).'),
  WORKER_WORKFLOW_THREADS: z.coerce
    .number()
    .int()
    .min(1)
    .max(16)
    .default(2)
    .describe(
      "Threads a worker runs workflow code on (the SDK's default is 1). Several let other workspaces' runs go on while one run evaluates a heavy expression (docs/isolation.md).",
    ),
  WORKER_MAX_CACHED_WORKFLOWS: z.coerce
    .number()
    .int()
    .min(2)
    .max(100_000)
    .default(DEFAULT_MAX_CACHED_WORKFLOWS)
    .describe(
      'Runs a worker keeps in its sticky cache (at least 2). Beyond it the least recently used run is evicted; when it wakes (timer, approval, event) it is replayed from its Temporal history. Bounds the worker\'s memory when many runs wait (docs/decisions.md, "Sticky cache").',
    ),
  WORKFLOW_BUNDLE_PATH: z
    .string()
    .optional()
    .describe(
      'A prebuilt workflow bundle the worker loads instead of bundling its workflows with webpack at start. `npm run build` writes it to `dist/temporal/`; the compiled worker (`node dist/main/worker.js`) uses that file even without the variable. Set, the file must exist. Running from sources (`npm start`, `npm run start:worker`) bundles at start (`npm start` caches it, see above). Unset: `dist/temporal/workflow-bundle.js` when present (the Docker image sets it).',
    ),
  TEMPORAL_PAYLOAD_KEY: z
    .string()
    .min(32, 'TEMPORAL_PAYLOAD_KEY must be at least 32 characters')
    .optional()
    .meta(SECRET)
    .describe(
      '32+ characters; encrypts every Temporal payload (AES-256-GCM, key derived with HKDF). API and workers of a namespace must share it. With neither this nor SECRET_KEY set, payloads are plain JSON. Unset: SECRET_KEY is used.',
    ),
  TEMPORAL_PAYLOAD_PREVIOUS_KEYS: z
    .string()
    .optional()
    .meta(SECRET)
    .describe(
      'Comma-separated earlier payload keys, still accepted for decryption after a rotation (keep them until executions written with them are past retention).',
    ),
});

export type TemporalEnv = z.output<typeof temporalArea.schema>;

export interface TemporalConfig {
  temporal: {
    address: string | undefined;
    namespace: string;
    uiUrl: string | undefined;
    /** Origins of the Web UI whose browser calls to the codec endpoint get CORS headers. */
    uiOrigins: string[];
    devPort: number;
    devUiPort: number;
    /** `host:port` of a worker's Prometheus exporter for SDK metrics; unset: a private loopback port. */
    sdkMetricsAddress: string | undefined;
    /** Encrypts Temporal payloads; unset: SECRET_KEY is used; neither: payloads are plaintext. */
    payloadKey: string | undefined;
    /** Older payload keys, still accepted for decryption after a rotation. */
    previousPayloadKeys: string[];
    /** Runs a worker keeps in its sticky cache; the rest are evicted and replayed from history when they wake. */
    maxCachedWorkflows: number;
    /** Threads the worker runs workflow code on. */
    workflowThreads: number;
    /** A prebuilt workflow bundle the worker loads instead of bundling at start; unset: the one `npm run build` writes, when present. */
    workflowBundlePath: string | undefined;
  };
}

export function temporalConfig(e: TemporalEnv): TemporalConfig {
  return {
    temporal: {
      address: e.TEMPORAL_ADDRESS || undefined,
      namespace: e.TEMPORAL_NAMESPACE,
      uiUrl: e.TEMPORAL_UI_URL || undefined,
      uiOrigins: uiOrigins(e),
      devPort: e.TEMPORAL_PORT,
      devUiPort: e.TEMPORAL_UI_PORT,
      sdkMetricsAddress: e.TEMPORAL_SDK_METRICS_ADDRESS || undefined,
      payloadKey: e.TEMPORAL_PAYLOAD_KEY || undefined,
      previousPayloadKeys: list(e.TEMPORAL_PAYLOAD_PREVIOUS_KEYS),
      maxCachedWorkflows: e.WORKER_MAX_CACHED_WORKFLOWS,
      workflowThreads: e.WORKER_WORKFLOW_THREADS,
      workflowBundlePath: e.WORKFLOW_BUNDLE_PATH || undefined,
    },
  };
}

function isWebOrigin(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.origin !== 'null';
  } catch {
    return false;
  }
}

/** `http://localhost:p` and `http://127.0.0.1:p` for either spelling: the UI's origin is whichever host was typed. */
function withLoopbackTwin(origin: string): string[] {
  const url = new URL(origin);
  if (url.hostname !== 'localhost' && url.hostname !== '127.0.0.1') return [url.origin];
  return ['localhost', '127.0.0.1'].map((host) => {
    url.hostname = host;
    return url.origin;
  });
}

/** TEMPORAL_UI_ORIGINS as origins, or the defaults it documents (the dev server's UI port, TEMPORAL_UI_URL). */
function uiOrigins(e: Pick<TemporalEnv, 'TEMPORAL_UI_ORIGINS' | 'TEMPORAL_UI_URL' | 'TEMPORAL_UI_PORT'>): string[] {
  const configured = list(e.TEMPORAL_UI_ORIGINS);
  if (configured.length > 0) return [...new Set(configured.map((o) => new URL(o).origin))];
  const defaults = withLoopbackTwin(`http://localhost:${e.TEMPORAL_UI_PORT}`);
  if (e.TEMPORAL_UI_URL) defaults.push(...withLoopbackTwin(e.TEMPORAL_UI_URL));
  return [...new Set(defaults)];
}
