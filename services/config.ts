import { availableParallelism } from 'node:os';
import path from 'node:path';
import type { SandboxHostSettings } from './kernel/sandbox/sandboxHost/client';
import type { RunAdmissionSettings } from './kernel/runAdmission';
import type { SignInLimitSettings } from './kernel/signInLimits';
import { z } from 'zod';
import { unavailable } from './kernel/errors';
import { parseKeyMaterial } from './kernel/secrets';

/**
 * Every setting the service reads from the environment, with its default and its `.describe()`
 * text: docs/configuration.md and .env.example are rendered from these schemas
 * (`npm run docs:config`; a unit test fails when they are stale).
 */
const envBool = (fallback: boolean) =>
  z
    .enum(['true', 'false', '1', '0'])
    .default(fallback ? 'true' : 'false')
    .transform((v) => v === 'true' || v === '1');

/**
 * Sticky cache of a worker (runs kept in memory between workflow tasks). The SDK's default
 * grows with the heap limit (about 2,300 on a 4 GiB heap), so thousands of parked runs would
 * stay resident. See docs/decisions.md, "Sticky cache", for why this number.
 */
export const DEFAULT_MAX_CACHED_WORKFLOWS = 100;
/** Live runs a workspace may have queued or running before new starts wait (services/runs/admission.ts). */
export const DEFAULT_RUN_ADMISSION_MAX_ACTIVE = 50;

/**
 * Runs the outbox dispatcher started that are still `queued` above which it stops handing
 * over: the backlog then waits in the outbox (durable, cheap) instead of in Temporal's task queue.
 */
export const DEFAULT_OUTBOX_MAX_QUEUED_RUNS = 200;
/**
 * Old-space heap caps of the supervised processes (`--max-old-space-size`), so a runaway ends in
 * a restart rather than in swap. The worker's is larger: it holds the sticky cache of runs and
 * the workflow bundle's V8 contexts.
 */
export const DEFAULT_API_HEAP_MB = 512;
export const DEFAULT_WORKER_HEAP_MB = 1024;

/** Run starts one outbox dispatch pass keeps in flight at once. */
export const DEFAULT_OUTBOX_START_PARALLELISM = 32;

/** The sandbox host's settings (services/sandboxHost/): parsed on their own too, by the first sandbox call of a process. */
const sandboxEnv = {
  SANDBOX_HOST_HEAP_MB: z.coerce.number().int().min(32).max(16_384).default(256).describe('`--max-old-space-size` of the sandbox host, the child process (one per API and worker process, restarted with backoff when it exits) where tenants\' code nodes and dry runs run; its threads have their own heap caps.'),
  SANDBOX_THREADS: z.coerce.number().int().min(1).max(64).optional().describe('Code threads of a sandbox host. Unset: the CPU count, at least 4 and at most 8.'),
  SANDBOX_WORKSPACE_CONCURRENCY: z.coerce.number().int().min(1).max(64).optional().describe('Code threads one workspace may hold at once; waiting workspaces take free threads in turn. Unset: half of `SANDBOX_THREADS`, rounded up.'),
  SANDBOX_DRY_RUN_THREADS: z.coerce.number().int().min(1).max(16).default(2).describe('Graph threads of a sandbox host (dry runs; one per workspace at a time).'),
  SANDBOX_DRY_RUN_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(30_000).describe('Wall-clock limit of one dry run once it holds a graph thread; past it the dry run ends `failed`.'),
  SANDBOX_DRY_RUN_HEAP_MB: z.coerce.number().int().min(32).max(16_384).default(256).describe('V8 heap of a graph thread; a dry run over it ends `failed`.'),
};

/**
 * Sandbox host settings from the environment. Threads default to the CPU count, at least 4 and
 * at most 8 (ten 1 s code nodes fit the code activity's 6 s timeout in three waves); a
 * workspace may hold at most half of them (rounded up) at once, so one workspace's spinning
 * code nodes always leave threads to the others.
 */
export function sandboxSettings(env: NodeJS.ProcessEnv = process.env): SandboxHostSettings {
  const parsed = z.object(sandboxEnv).safeParse(env);
  if (!parsed.success) throw new Error(`Invalid configuration: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  const e = parsed.data;
  const codeThreads = e.SANDBOX_THREADS ?? Math.max(4, Math.min(8, availableParallelism()));
  return {
    heapMb: e.SANDBOX_HOST_HEAP_MB,
    codeThreads,
    codePerWorkspace: Math.min(codeThreads, e.SANDBOX_WORKSPACE_CONCURRENCY ?? Math.ceil(codeThreads / 2)),
    codeKillGraceMs: SANDBOX_KILL_GRACE_MS,
    threadHeapMb: 256,
    graphThreads: e.SANDBOX_DRY_RUN_THREADS,
    graphPerWorkspace: 1,
    graphHeapMb: e.SANDBOX_DRY_RUN_HEAP_MB,
    dryRunTimeoutMs: e.SANDBOX_DRY_RUN_TIMEOUT_MS,
    // The host's own deadlines fire first; the parent's kill is for a host too stuck to enforce them.
    marginMs: 2_000,
    stallMs: 10_000,
  };
}

/**
 * Head start of a code call's inner interrupt over the thread's termination, so ordinary
 * timeouts keep the guest's logs. 500 ms leaves a busy machine room for the thread to notice its
 * interrupt (200 ms lost the logs at a load of 8 on 2 cores) and keeps three waves of 1 s calls
 * (4.5 s) inside the 6 s activity timeout.
 */
export const SANDBOX_KILL_GRACE_MS = 500;

export const envSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(3000).describe('API port.'),
  HOST: z.string().default('0.0.0.0').describe('API bind address.'),
  METRICS_PORT: z.preprocess((v) => (v === '' ? undefined : v), z.coerce.number().int().min(1).max(65535).optional()).describe('Serve `/metrics` on this port only (1 to 65535), not on `PORT`; unset: on `PORT`.'),
  METRICS_HOST: z.string().optional().describe('Bind address of `METRICS_PORT`. Unset: `HOST`.'),
  METRICS_TOKEN: z.string().refine((v) => v === '' || v.length >= 16, 'expected at least 16 characters').optional().describe('At least 16 characters; `/metrics` then needs `Authorization: Bearer <token>` (401 otherwise) on whichever port serves it. With neither this nor `METRICS_PORT`, `/metrics` answers loopback callers only (404 to others and to proxied requests).'),
  DATABASE_URL: z.string().optional().describe('PostgreSQL URL the service connects as (a non-superuser owner role, docs/postgres-roles.md); unset: `npm start` uses the local server on 127.0.0.1:5432 (or an embedded one if none answers) and connects as the `svc_owner` role it provisions there.'),
  DATABASE_ADMIN_URL: z.string().optional().describe('A superuser URL used only by `npm start` and `npm run migrate` to create or repair `DATABASE_URL`\'s owner role, hand it the database\'s objects and create the pgvector extension (docs/postgres-roles.md).'),
  TEMPORAL_ADDRESS: z.string().optional().describe('Temporal frontend `host:port`; unset means `npm start` runs the dev server.'),
  TEMPORAL_NAMESPACE: z.string().default('default').describe('Temporal namespace.'),
  TEMPORAL_UI_URL: z.string().optional().describe('Web UI base URL shown to operators (and later used for run deep links). Unset: the dev server\'s UI.'),
  TEMPORAL_SDK_METRICS_ADDRESS: z.string().regex(/^(\[[0-9a-fA-F:]+\]|[\w.-]+):\d{1,5}$/, 'expected host:port, e.g. 0.0.0.0:9464').optional().describe('`host:port` where a worker process exports the Temporal SDK\'s Prometheus metrics; the API\'s `/metrics` includes those of a worker in its own process. Unset: a free 127.0.0.1 port.'),
  TEMPORAL_PORT: z.coerce.number().int().min(1).max(65535).default(7233).describe('Dev server frontend port (`npm start` only).'),
  TEMPORAL_UI_PORT: z.coerce.number().int().min(1).max(65535).default(8233).describe('Dev server Web UI port (`npm start` only).'),
  WORKER_MAX_CACHED_WORKFLOWS: z.coerce.number().int().min(2).max(100_000).default(DEFAULT_MAX_CACHED_WORKFLOWS).describe('Runs a worker keeps in its sticky cache (at least 2). Beyond it the least recently used run is evicted; when it wakes (timer, approval, event) it is replayed from its Temporal history. Bounds the worker\'s memory when many runs wait (docs/decisions.md, "Sticky cache").'),
  WORKFLOW_BUNDLE_PATH: z.string().optional().describe('A prebuilt workflow bundle the worker loads instead of bundling its workflows with webpack at start. `npm run build` writes it next to the compiled worker; the compiled worker (`node dist/temporal/worker-main.js`) uses that file even without the variable. Set, the file must exist. Running from sources (`npm start`, `npm run start:worker`) bundles at start (`npm start` caches it, see above). Unset: `dist/temporal/workflow-bundle.js` when present (the Docker image sets it).'),
  DATA_DIR: z.string().default('.data').describe('Local state of `npm start` (Temporal SQLite file, embedded PostgreSQL).'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info').describe('Pino level: `fatal`, `error`, `warn`, `info`, `debug`, `trace`, `silent`.'),
  BODY_LIMIT: z.string().default('1mb').describe('Largest JSON or form body; larger bodies get 413.'),
  TRUST_PROXY: envBool(false).describe('Trust `X-Forwarded-*` (needed for `Secure` session cookies behind a TLS proxy).'),
  TRUST_PROXY_HOPS: z.coerce.number().int().min(1).max(10).default(1).describe('With `TRUST_PROXY`: how many proxies in front append to `X-Forwarded-For`; only those rightmost entries are believed, and the client address (which keys the sign-in limits) is the leftmost of them.'),
  SIGN_IN_MAX_PER_ADDRESS: z.coerce.number().int().min(1).max(10_000).default(10).describe('Sign-in attempts checked for one email from one client address per window; the next is refused 429 with `Retry-After` and locks that address out of that email (docs/decisions.md, "Sign-in limits").'),
  SIGN_IN_MAX_PER_ACCOUNT: z.coerce.number().int().min(2).max(100_000).default(50).describe('The same for one email from all addresses together; must be above `SIGN_IN_MAX_PER_ADDRESS`.'),
  SIGN_IN_WINDOW_SECONDS: z.coerce.number().int().min(1).max(86_400).default(900).describe('The counting window, from its first attempt.'),
  SIGN_IN_FIRST_LOCK_SECONDS: z.coerce.number().int().min(1).max(86_400).default(300).describe('The first lock; each further lock of the same counter lasts twice as long, up to `SIGN_IN_MAX_LOCK_SECONDS`.'),
  SIGN_IN_MAX_LOCK_SECONDS: z.coerce.number().int().min(1).max(86_400).default(3600).describe('The longest lock (at least `SIGN_IN_FIRST_LOCK_SECONDS`).'),
  SIGN_IN_LOCK_MEMORY_SECONDS: z.coerce.number().int().min(0).max(30 * 86_400).default(86_400).describe('A counter forgets its past locks this long after the last one ended.'),
  SESSION_TTL_HOURS: z.coerce.number().positive().default(24 * 7).describe('Session cookie lifetime.'),
  SHUTDOWN_TIMEOUT_MS: z.coerce.number().int().positive().default(15_000).describe('How long shutdown waits for in-flight requests before cutting connections.'),
  BOOTSTRAP_OWNER_EMAIL: z.string().email().default('owner@example.com').describe('Email of the owner created on the first run.'),
  END_USERS_ENABLED: envBool(false).describe('Allow `end_user_gateway` keys.'),
  OUTBOUND_ALLOW_PRIVATE_NETWORKS: envBool(false).describe('Let http nodes call private, loopback and link-local addresses (`npm start` turns it on unless set).'),
  SECRET_KEY: z.string().min(32, 'SECRET_KEY must be at least 32 characters').optional().describe('32+ characters; derives webhook URLs and encrypts stored secrets (rotating it changes every webhook URL). Unset: generated into `.data/secret-key` by `npm start`; required otherwise.'),
  TEMPORAL_PAYLOAD_KEY: z.string().min(32, 'TEMPORAL_PAYLOAD_KEY must be at least 32 characters').optional().describe('32+ characters; encrypts every Temporal payload (AES-256-GCM, key derived with HKDF). API and workers of a namespace must share it. With neither this nor SECRET_KEY set, payloads are plain JSON. Unset: SECRET_KEY is used.'),
  TEMPORAL_PAYLOAD_PREVIOUS_KEYS: z.string().optional().describe('Comma-separated earlier payload keys, still accepted for decryption after a rotation (keep them until executions written with them are past retention).'),
  OPERATOR_TOKEN: z.string().min(32, 'OPERATOR_TOKEN must be at least 32 characters').optional().describe('32+ characters; bearer token operators send to the Temporal codec endpoint (`--codec-auth "Bearer …"` in the CLI).'),
  OPERATOR_EMAILS: z.string().optional().describe('Comma-separated emails of users whose session may use the codec endpoint (the Web UI, with "include cross-origin credentials").'),
  WORKFLOW_REPOSITORY_ROOT: z.string().min(1).optional().describe('Directory holding the bare Git repositories workspace repository settings may name (`localPath` is resolved inside it); unset refuses `localPath` settings (smart-HTTP `remoteUrl` settings need no root).'),
  EXTFLOW_IMPORT_DIR: z.string().min(1).optional().describe('The only directory `bundlePath` of the extflow worker routes may read (relative paths, no `..`, symbolic links must resolve inside it); unset refuses `bundlePath`.'),
  WEBHOOK_SYNC_BUDGET_MS: z.coerce.number().int().min(100).max(300_000).default(30_000).describe('How long a webhook caller waits for a Response node before 202 `processing`.'),
  APPROVAL_ANSWER_WAIT_MS: z.coerce.number().int().min(100).max(120_000).default(10_000).describe('How long `POST /api/runs/{id}/approval` waits for a worker to decide before it queues the decision (202 `queued: true`).'),
  OUTBOX_POLL_MS: z.coerce.number().int().min(50).max(60_000).default(1_000).describe('Webhook outbox dispatcher poll interval.'),
  RUN_ADMISSION_MAX_ACTIVE: z.coerce.number().int().min(0).max(100_000).default(DEFAULT_RUN_ADMISSION_MAX_ACTIVE).describe('Live runs a workspace may have `queued` or `running` before new starts (`execute`, `rerun`, end-user runs) wait at the door; `0` turns admission off (docs/decisions.md, "Run admission").'),
  RUN_ADMISSION_MAX_WAIT_MS: z.coerce.number().int().min(0).max(600_000).default(30_000).describe('How long such a start waits for a place before it is refused 503 with `Retry-After: 1` (no run is recorded).'),
  RUN_ADMISSION_RECHECK_MS: z.coerce.number().int().min(5).max(10_000).default(50).describe('How often a waiting workspace\'s count of active runs is read again.'),
  OUTBOX_MAX_QUEUED_RUNS: z.coerce.number().int().min(1).max(100_000).default(DEFAULT_OUTBOX_MAX_QUEUED_RUNS).describe('Backpressure of the outbox dispatcher: while more runs it started are still `queued` (the workers are behind) it hands nothing over, and the backlog waits in the outbox instead of Temporal\'s task queue (1–100000).'),
  // A pass hands over at most a batch of 100 entries, so more starts in flight would never be used.
  OUTBOX_START_PARALLELISM: z.coerce.number().int().min(1).max(100).default(DEFAULT_OUTBOX_START_PARALLELISM).describe('Run starts one outbox dispatch pass keeps in flight at once (1–100; a pass takes at most 100 entries).'),
  WEBHOOK_TOKEN_CACHE_MS: z.coerce.number().int().min(0).max(60_000).default(1_000).describe('How long the invoke route reuses a resolved webhook token (0: off); changes made through the same API process apply at once.'),
  ERRTRACKER_INGRESS_ENABLED: envBool(false).describe('Feature switch of `/api/integrations/errtracker/{token}`.'),
  VALIDATE_RESPONSES: envBool(false).describe('Check every route answer against its declared response schema; a mismatch is logged and answered 500 (on in the test harness).'),
  BLOB_STORAGE: z.enum(['local', 's3']).default('local').describe('Where file contents are kept: `local` (a folder) or `s3` (S3-compatible object storage).'),
  BLOB_DIR: z.string().optional().describe('Folder of the local blob backend; the API and the workers must see the same one (a shared volume). Unset: `<DATA_DIR>/blobs`.'),
  BLOB_S3_ENDPOINT: z.string().url().optional().describe('S3-compatible endpoint URL, e.g. a MinIO, Ceph or R2 address. Unset: AWS by region.'),
  BLOB_S3_REGION: z.string().default('us-east-1').describe('Region used for signing.'),
  BLOB_S3_BUCKET: z.string().optional().describe('Bucket (required with `BLOB_STORAGE=s3`).'),
  BLOB_S3_ACCESS_KEY_ID: z.string().optional().describe('Access key id of the bucket (required with `BLOB_STORAGE=s3`).'),
  BLOB_S3_SECRET_ACCESS_KEY: z.string().optional().describe('Secret access key of the bucket (required with `BLOB_STORAGE=s3`).'),
  BLOB_S3_FORCE_PATH_STYLE: envBool(true).describe('Path-style addressing (`endpoint/bucket/key`), which most S3-compatible stores need.'),
  BLOB_ENCRYPTION_KEY: z
    .string()
    .regex(/^([0-9a-fA-F]{64}|[A-Za-z0-9+/_-]{43}=?)$/, 'expected 32 bytes as 64 hex characters or base64')
    .optional().describe('Dedicated 32-byte key (64 hex characters or base64) for blob encryption; unset: HKDF of `SECRET_KEY`, purpose `file-blobs`. Changing it makes existing blobs unreadable.'),
  FILES_WRITES_DISABLED: envBool(false).describe('Block file writes: `POST /files` answers 503 `service_unavailable` (replays of earlier creates still answer).'),
  FILES_PURGE_DELAY_SECONDS: z.coerce.number().int().min(0).max(30 * 86400).default(86400).describe('How long after `DELETE /files/{id}` the purge workflow removes the blob and marks the file `deleted` (0 to 30 days).'),
  CLAMD_ADDRESS: z.string().regex(/^((\[[0-9a-fA-F:]+\]|[\w.-]+):\d{1,5}|unix:.+)$/, 'expected host:port or unix:/path/to/clamd.sock').optional().describe('ClamAV daemon, `host:port` or `unix:/path/clamd.sock`: completed files are also streamed to it (INSTREAM); its `StreamMaxLength` must allow 100M.'),
  CLAMD_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(60_000).describe('How long one clamd scan may take before it counts as failed (the file stays `pending_scan`).'),
  CREDENTIALS_KEY: z.string().optional().describe('32-byte key (64 hex characters or base64, e.g. `openssl rand -base64 32`) that encrypts workspace credentials. Unset: derived from `SECRET_KEY` (HKDF, purpose `credentials`).'),
  CREDENTIALS_PREVIOUS_KEYS: z.string().optional().describe('Comma-separated older keys that still decrypt credentials, for a rotation (docs/operations.md, "Operators").'),
  CREDENTIAL_ENV_ALLOWLIST: z.string().optional().describe('Deployment variables credentials may be created from (`envVar`, bootstrap-from-env): `NAME` or `NAME:type`, comma-separated. Unset: none.'),
  CREDENTIAL_TEST_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(10_000).describe('Budget of one credential connection test.'),
  CREDENTIAL_PROVIDER_BASE_URLS: z.string().optional().describe('`provider=url` pairs (`repo=https://…,chat=https://…/api`): where provider credentials are tested when the credential has no `baseUrl`.'),
  DATABASE_QUERY_TIMEOUT_MS: z.coerce.number().int().min(100).max(300_000).default(5_000).describe('Statement timeout of read-only SQL over user databases (`POST /api/v1/databases/query`); over it: 408.'),
  DATABASE_QUERY_MAX_ROWS: z.coerce.number().int().min(1).max(100_000).default(1_000).describe('Rows a read-only query returns at most (`truncated: true` beyond).'),
  DATABASE_QUERY_MAX_BYTES: z.coerce.number().int().min(1024).max(64 * 1024 * 1024).default(1024 * 1024).describe('JSON bytes of rows a read-only query returns at most, measured by PostgreSQL before sending (`truncated: true` beyond).'),
  DATABASE_QUERY_POOL_MAX: z.coerce.number().int().min(1).max(100).default(4).describe('Connections of the user-SQL pool, apart from the ORM\'s (per process).'),
  DATABASE_QUERY_PER_WORKSPACE: z.coerce.number().int().min(1).max(100).default(2).describe('Read-only queries of one workspace running at once (per process); others wait their fair turn.'),
  DATABASE_QUERY_QUEUE_PER_WORKSPACE: z.coerce.number().int().min(0).max(1000).default(8).describe('Queries of one workspace waiting at once; beyond: 429 `query_queue_full` with Retry-After.'),
  CONFIGURATION_WRITES_ENABLED: envBool(true).describe('Feature switch of configuration package apply; off: the catalog says `applyEnabled: false`, `writes_disabled`, and apply is 503 unless its receipt exists.'),
  LLM_BASE_URL: z.string().url().optional().describe('The deployment\'s OpenAI-compatible chat model endpoint (e.g. `https://api.openai.com/v1`); a workspace\'s own `llm` credential replaces it for that workspace (the most recently updated one when it has several); unset and no credential: agent features answer 503; the worker status probes `GET <base>/models` (2 s, through the outbound guard).'),
  LLM_API_KEY: z.string().optional().describe('Its bearer key (local servers often need none).'),
  LLM_MODEL: z.string().min(1).default('gpt-4o-mini').describe('The model asked for.'),
  LLM_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(60_000).describe('Timeout of one chat model request.'),
  LLM_MAX_RETRIES: z.coerce.number().int().min(0).max(10).default(3).describe('Retries of 408, 409, 429 and 5xx answers and connection errors, with backoff, honouring Retry-After.'),
  COMMAND_CONFIRMATION_TTL_SECONDS: z.coerce.number().int().min(1).max(86_400).default(300).describe('How long a command job\'s `cnf_` confirmation stays valid (1 to 86400); the spec\'s 300 s, shorter in tests. The worker reads it (it issues the confirmation); set the same value for the API and workers.'),
  COMMAND_CONFIRM_WAIT_MS: z.coerce.number().int().min(0).max(600_000).default(30_000).describe('How long a confirm request waits for the confirmed plan to finish before answering with the job still `running`.'),
  LLM_PRICES: z.string().optional().describe('Credits per 1,000 input and output tokens by model name (`*` for the rest); `costCredits` of research runs and command jobs comes from it. Unset: `{"*":{"input":1,"output":2}}`.'),
  EMBEDDINGS_BASE_URL: z.string().url().optional().describe('OpenAI-compatible embeddings endpoint (e.g. `https://api.openai.com/v1`); unset: knowledge search is keyword only and says so.'),
  EMBEDDINGS_MODEL: z.string().min(1).default('text-embedding-3-small').describe('Embeddings model name; chunks embedded with another model are left out of vector search until re-indexed.'),
  EMBEDDINGS_API_KEY: z.string().optional().describe('Bearer key of the embeddings endpoint.'),
  EMBEDDINGS_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(30_000).describe('Timeout of one embeddings request.'),
  EMBEDDINGS_MAX_RETRIES: z.coerce.number().int().min(0).max(10).default(3).describe('Retries of 408/409/429/5xx answers and connection errors (exponential backoff, honouring Retry-After).'),
  KNOWLEDGE_DRIVE_BASE_URL: z.string().url().default('https://www.googleapis.com').describe('Drive API base URL of the `drive` connector provider (a credential\'s own `baseUrl` wins).'),
  KNOWLEDGE_WIKI_BASE_URL: z.string().url().optional().describe('Confluence site URL of the `wiki` provider, e.g. `https://example.atlassian.net` (or set `baseUrl` on the credential).'),
  KNOWLEDGE_CHAT_BASE_URL: z.string().url().default('https://slack.com/api').describe('Slack Web API base URL of the `chat` provider.'),
  KNOWLEDGE_REPO_BASE_URL: z.string().url().default('https://api.github.com').describe('GitHub REST base URL of the `repo` provider.'),
  KNOWLEDGE_CERTIFIED_PROVIDERS: z.string().default('drive,wiki,chat,repo').describe('Providers that passed certification; the others are listed `certified: false` and cannot be queued.'),
  KNOWLEDGE_SYNC_LEASE_MS: z.coerce.number().int().min(3_000).max(3_600_000).default(300_000).describe('A sync run\'s lease: renewed by its activity every third of it; Temporal notices a dead worker after two thirds.'),
  LOCAL_AI_CLI_A_PATH: z.string().optional().describe('Path of the `cliA` executable (relative paths resolve against the working directory; a bare name is looked up on `PATH`); unset: `cliA` sessions answer `not_configured`.'),
  LOCAL_AI_CLI_B_PATH: z.string().optional().describe('Path of the `cliB` executable (as for cliA); unset: `cliB` sessions answer `not_configured`.'),
  LOCAL_AI_CLI_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(15_000).describe('Budget of one local AI CLI invocation (and of a login\'s wait for its authorization URL and for its end after the callback); over it the CLI\'s process group is killed.'),
  GMAIL_API_BASE_URL: z.string().url().default('https://gmail.googleapis.com/gmail/v1').describe('Gmail API base (version prefix included) for `mailA` polling and replies; a credential\'s own `baseUrl` wins.'),
  GRAPH_API_BASE_URL: z.string().url().default('https://graph.microsoft.com/v1.0').describe('Microsoft Graph base (version prefix included) for `mailB` polling and replies; a credential\'s own `baseUrl` wins.'),
  GOOGLE_OAUTH_TOKEN_URL: z.string().url().optional().describe('Where delegated Gmail tokens are minted (JWT bearer grant) instead of the service-account key\'s `token_uri`; the JWT audience stays `token_uri`. For a proxy or a loopback fake.'),
  MAILER_PROVIDER_TIMEOUT_MS: z.coerce.number().int().min(100).max(300_000).default(20_000).describe('Budget of one Gmail/Graph request (and of a token grant or refresh), and of the IMAP connection, greeting and socket idle time.'),
  API_PROCESSES: z.coerce.number().int().min(1).max(64).default(1).describe('API processes `npm start` runs; they share `PORT` (node cluster), each restarted by the supervisor when it exits.'),
  WORKERS: z.coerce.number().int().min(1).max(64).default(1).describe('Worker processes `npm start` runs on `workflow-runs` (compose: `--scale worker=N`).'),
  API_HEAP_MB: z.coerce.number().int().min(64).max(65_536).default(DEFAULT_API_HEAP_MB).describe('`--max-old-space-size` of each API process (npm start and compose): a runaway heap ends in a restart, not in swap.'),
  WORKER_HEAP_MB: z.coerce.number().int().min(64).max(65_536).default(DEFAULT_WORKER_HEAP_MB).describe('The same, for each worker process.'),
  WORKER_HEARTBEAT_MS: z.coerce.number().int().min(100).max(60_000).default(1_000).describe('How often each worker process writes its row in `worker_heartbeats`.'),
  WORKER_HEARTBEAT_STALE_MS: z.coerce.number().int().min(500).max(300_000).default(3_000).describe('`/readyz` needs a `running` worker beat younger than this.'),
  ...sandboxEnv,
});

export type AppConfig = {
  port: number;
  host: string;
  /** Who may scrape /metrics (api/metricsAccess.ts, docs/operations.md). */
  metrics: {
    /** METRICS_PORT: /metrics is served there only (the API port answers 404); unset: on the API port. */
    port: number | undefined;
    /** METRICS_HOST: the metrics port's bind address; default HOST. */
    host: string;
    /** METRICS_TOKEN: scrapes must send `Authorization: Bearer <token>`; unset with no port: loopback callers only. */
    token: string | undefined;
  };
  databaseUrl: string | undefined;
  /** A superuser URL used only by `npm start` and migrate to provision DATABASE_URL's owner role (scripts/lib/ownerRole.ts). */
  databaseAdminUrl: string | undefined;
  temporal: {
    address: string | undefined;
    namespace: string;
    uiUrl: string | undefined;
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
    /** A prebuilt workflow bundle the worker loads instead of bundling at start; unset: the one `npm run build` writes, when present. */
    workflowBundlePath: string | undefined;
  };
  /** Operators' access to the Temporal codec endpoint: this bearer token, or a session of one of `operatorEmails`. */
  operatorToken: string | undefined;
  operatorEmails: string[];
  dataDir: string;
  logLevel: z.infer<typeof envSchema>['LOG_LEVEL'];
  bodyLimit: string;
  trustProxy: boolean;
  /** TRUST_PROXY_HOPS: X-Forwarded-For entries (from the right) that trusted proxies wrote; Koa's `maxIpsCount`. */
  trustProxyHops: number;
  /** SIGN_IN_*: attempts checked against a password, and lock lengths (services/signInLimits.ts). */
  signInLimits: SignInLimitSettings;
  sessionTtlMs: number;
  shutdownTimeoutMs: number;
  bootstrapOwnerEmail: string;
  endUsersEnabled: boolean;
  /** Lets http nodes call private, loopback and link-local addresses. */
  outboundAllowPrivateNetworks: boolean;
  /** WORKFLOW_REPOSITORY_ROOT: where local bare repositories of workspace repository settings may live (services/repository). */
  workflowRepositoryRoot: string | undefined;
  /** EXTFLOW_IMPORT_DIR: the only directory `bundlePath` of the extflow worker routes may read (services/extflow). */
  extflowImportDir: string | undefined;
  /** Derives webhook tokens and encrypts stored secrets; required by the api process. */
  secretKey: string | undefined;
  webhookSyncBudgetMs: number;
  /** APPROVAL_ANSWER_WAIT_MS: how long an approval waits for a worker to decide it before it is queued (202). */
  approvalAnswerWaitMs: number;
  outboxPollMs: number;
  /** RUN_ADMISSION_*: new live runs wait while their workspace has this many queued or running (services/runs/admission.ts). */
  runAdmission: RunAdmissionSettings;
  /** OUTBOX_MAX_QUEUED_RUNS: the dispatcher's backpressure cap (services/outboxDispatcher.ts). */
  outboxMaxQueuedRuns: number;
  /** OUTBOX_START_PARALLELISM: run starts in flight per dispatch pass (`dispatchOutbox`). */
  outboxStartParallelism: number;
  /** How long a resolved webhook token is reused by the invoke route (0: never); changes made through this process clear it at once. */
  webhookTokenCacheMs: number;
  errtrackerIngressEnabled: boolean;
  /**
   * Checks every route answer against its declared response schema and turns a mismatch into
   * a 500. On in the test harness; it costs a parse per response, so off by default.
   */
  validateResponses: boolean;
  /** Where blobs (file contents and other areas' binary data) are kept; see services/blobs/. */
  blobs: BlobConfig;
  files: {
    /** New creates answer 503 (`FILES_WRITES_DISABLED`); replays of earlier creates still answer. */
    writesDisabled: boolean;
    /** How long after a deletion request the purge workflow removes the blob. */
    purgeDelayMs: number;
    /** clamd `host:port` or `unix:/path`; unset: only the built-in scanner runs. */
    clamdAddress: string | undefined;
    clamdTimeoutMs: number;
  };
  /** Credentials: encryption keys, the environment allowlist, connection tests (services/credentials). */
  credentials: CredentialSettings;
  /** Read-only SQL over user databases (POST /api/v1/databases/query). */
  databaseQuery: { timeoutMs: number; maxRows: number; maxBytes: number; pool?: { poolMax: number; perWorkspace: number; queuePerWorkspace: number } };
  /** Feature switch of configuration package writes (apply); the catalog reports it. */
  configurationWritesEnabled: boolean;
  knowledge: KnowledgeConfig;
  /** The deployment's chat model (OpenAI-compatible); a workspace `llm` credential can replace it. */
  llm: LlmConfig;
  /** Local AI command-line tools run per workspace (services/workers/localAiCli). */
  localAiCli: LocalAiCliConfig;
  /** Command jobs: confirmation window, and how long a confirm request waits for the confirmed plan to finish. */
  commands: { confirmationTtlSeconds: number; confirmWaitMs: number };
  mailer: MailerConfig;
  /** How `npm start` runs the service (main/supervisor.ts) and how workers report that they are alive. */
  processes: ProcessSettings;
  /** SANDBOX_*: the sandbox host that runs tenants' code and dry runs (services/sandboxHost/). */
  sandbox: SandboxHostSettings;
};

export interface ProcessSettings {
  /** API_PROCESSES: API processes `npm start` runs; they share the port (node's cluster). */
  apiProcesses: number;
  /** WORKERS: worker processes `npm start` runs on the same task queue. */
  workers: number;
  /** API_HEAP_MB / WORKER_HEAP_MB: `--max-old-space-size` of each API and worker process. */
  apiHeapMb: number;
  workerHeapMb: number;
  /** WORKER_HEARTBEAT_MS: how often a worker writes its heartbeat row. */
  heartbeatMs: number;
  /** WORKER_HEARTBEAT_STALE_MS: a beat older than this does not make the API ready. */
  heartbeatStaleMs: number;
}

export interface LlmConfig {
  /** Unset: no deployment model; agent features need a workspace `llm` credential. */
  baseUrl: string | undefined;
  apiKey: string | undefined;
  model: string;
  timeoutMs: number;
  maxRetries: number;
  /** Credits per 1,000 tokens by model name; `*` applies to models not listed. */
  prices: PriceTable;
}

export type PriceTable = Record<string, { input: number; output: number }>;

export interface LocalAiCliConfig {
  /** Absolute paths of the executables (LOCAL_AI_CLI_A_PATH, LOCAL_AI_CLI_B_PATH); unset: that CLI is not configured. */
  paths: { cliA: string | undefined; cliB: string | undefined };
  /** Budget of one CLI invocation (and of a login's wait for its authorization URL). */
  timeoutMs: number;
  /** Parent of the per-workspace CLI configuration directories (`<DATA_DIR>/local-ai-cli`). */
  rootDir: string;
}

/** Mail provider APIs of polling and replies (services/mailer); a credential's own `baseUrl` wins. */
export interface MailerConfig {
  /** GMAIL_API_BASE_URL, version prefix included (`…/gmail/v1`). */
  gmailBaseUrl: string;
  /** GRAPH_API_BASE_URL, version prefix included (`…/v1.0`). */
  graphBaseUrl: string;
  /** MAILER_PROVIDER_TIMEOUT_MS: one provider request (and one IMAP session step). */
  timeoutMs: number;
  /** GOOGLE_OAUTH_TOKEN_URL: where delegated tokens are minted instead of a service-account key's token_uri. */
  googleTokenUrl?: string;
}

export interface KnowledgeConfig {
  /** The OpenAI-compatible embeddings endpoint; without `baseUrl` search is keyword only. */
  embeddings: { baseUrl: string | undefined; model: string; apiKey: string | undefined; timeoutMs: number; maxRetries: number };
  /** API base URLs of the connector providers (a credential's own `baseUrl` wins). */
  providerBaseUrls: { drive: string; wiki: string | undefined; chat: string; repo: string };
  /** Providers that passed certification; others are listed uncertified and cannot be queued. */
  certifiedProviders: string[];
  /** How long a sync run's lease (its running execution) lasts without a heartbeat; heartbeats renew it at one third. */
  syncLeaseMs: number;
}

const list = (value: string | undefined) => (value ?? '').split(',').map((v) => v.trim()).filter(Boolean);

export interface BlobConfig {
  backend: 'local' | 's3';
  /** Local backend: the folder blobs are written under (default `<DATA_DIR>/blobs`). */
  localDir: string;
  s3: {
    endpoint: string | undefined;
    region: string;
    bucket: string | undefined;
    accessKeyId: string | undefined;
    secretAccessKey: string | undefined;
    forcePathStyle: boolean;
  };
  /** Dedicated 32-byte key (`BLOB_ENCRYPTION_KEY`); unset: derived from SECRET_KEY for purpose `file-blobs`. */
  encryptionKey: Buffer | undefined;
}

/** Configuration of the credentials area; keys are checked here, parsed by services/credentials/keys.ts. */
export interface CredentialSettings {
  /** CREDENTIALS_KEY: the key that encrypts; unset means one derived from SECRET_KEY (HKDF, purpose `credentials`). */
  key: string | undefined;
  /** CREDENTIALS_PREVIOUS_KEYS: older keys that still decrypt (comma-separated), for rotation. */
  previousKeys: string[];
  /** CREDENTIAL_ENV_ALLOWLIST: deployment variables credentials may be created from, each with an optional type (`NAME` or `NAME:type`). */
  envAllowlist: Array<{ name: string; type: string | null }>;
  /** CREDENTIAL_TEST_TIMEOUT_MS: budget of one connection test. */
  testTimeoutMs: number;
  /** CREDENTIAL_PROVIDER_BASE_URLS: `provider=url` pairs, where provider credentials are tested. */
  providerBaseUrls: Record<string, string>;
}

/** Reads the configuration once; throws a readable error naming the bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): AppConfig {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new Error(`Invalid configuration: ${issues}`);
  }
  const e = parsed.data;
  if (e.SIGN_IN_MAX_PER_ACCOUNT <= e.SIGN_IN_MAX_PER_ADDRESS) {
    throw new Error('Invalid configuration: SIGN_IN_MAX_PER_ACCOUNT must be above SIGN_IN_MAX_PER_ADDRESS (or one address could lock the account out everywhere).');
  }
  if (e.SIGN_IN_MAX_LOCK_SECONDS < e.SIGN_IN_FIRST_LOCK_SECONDS) {
    throw new Error('Invalid configuration: SIGN_IN_MAX_LOCK_SECONDS must be at least SIGN_IN_FIRST_LOCK_SECONDS.');
  }
  if (e.WORKER_HEARTBEAT_STALE_MS < 2 * e.WORKER_HEARTBEAT_MS) {
    throw new Error('Invalid configuration: WORKER_HEARTBEAT_STALE_MS must be at least twice WORKER_HEARTBEAT_MS (one late beat must not make the API unready).');
  }
  return {
    port: e.PORT,
    host: e.HOST,
    metrics: { port: e.METRICS_PORT, host: e.METRICS_HOST || e.HOST, token: e.METRICS_TOKEN || undefined },
    databaseUrl: e.DATABASE_URL || undefined,
    databaseAdminUrl: e.DATABASE_ADMIN_URL || undefined,
    temporal: {
      address: e.TEMPORAL_ADDRESS || undefined,
      namespace: e.TEMPORAL_NAMESPACE,
      uiUrl: e.TEMPORAL_UI_URL || undefined,
      devPort: e.TEMPORAL_PORT,
      devUiPort: e.TEMPORAL_UI_PORT,
      sdkMetricsAddress: e.TEMPORAL_SDK_METRICS_ADDRESS || undefined,
      payloadKey: e.TEMPORAL_PAYLOAD_KEY || undefined,
      previousPayloadKeys: list(e.TEMPORAL_PAYLOAD_PREVIOUS_KEYS),
      maxCachedWorkflows: e.WORKER_MAX_CACHED_WORKFLOWS,
      workflowBundlePath: e.WORKFLOW_BUNDLE_PATH || undefined,
    },
    operatorToken: e.OPERATOR_TOKEN || undefined,
    operatorEmails: list(e.OPERATOR_EMAILS).map((email) => email.toLowerCase()),
    dataDir: path.resolve(e.DATA_DIR),
    logLevel: e.LOG_LEVEL,
    bodyLimit: e.BODY_LIMIT,
    trustProxy: e.TRUST_PROXY,
    trustProxyHops: e.TRUST_PROXY_HOPS,
    signInLimits: {
      maxPerAddress: e.SIGN_IN_MAX_PER_ADDRESS,
      maxPerAccount: e.SIGN_IN_MAX_PER_ACCOUNT,
      windowMs: e.SIGN_IN_WINDOW_SECONDS * 1000,
      firstLockMs: e.SIGN_IN_FIRST_LOCK_SECONDS * 1000,
      maxLockMs: e.SIGN_IN_MAX_LOCK_SECONDS * 1000,
      lockMemoryMs: e.SIGN_IN_LOCK_MEMORY_SECONDS * 1000,
    },
    sessionTtlMs: e.SESSION_TTL_HOURS * 3600_000,
    shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT_MS,
    bootstrapOwnerEmail: e.BOOTSTRAP_OWNER_EMAIL,
    endUsersEnabled: e.END_USERS_ENABLED,
    outboundAllowPrivateNetworks: e.OUTBOUND_ALLOW_PRIVATE_NETWORKS,
    workflowRepositoryRoot: e.WORKFLOW_REPOSITORY_ROOT,
    extflowImportDir: e.EXTFLOW_IMPORT_DIR,
    secretKey: e.SECRET_KEY,
    webhookSyncBudgetMs: e.WEBHOOK_SYNC_BUDGET_MS,
    approvalAnswerWaitMs: e.APPROVAL_ANSWER_WAIT_MS,
    outboxPollMs: e.OUTBOX_POLL_MS,
    runAdmission: { maxActivePerWorkspace: e.RUN_ADMISSION_MAX_ACTIVE, maxWaitMs: e.RUN_ADMISSION_MAX_WAIT_MS, recheckMs: e.RUN_ADMISSION_RECHECK_MS },
    outboxMaxQueuedRuns: e.OUTBOX_MAX_QUEUED_RUNS,
    outboxStartParallelism: e.OUTBOX_START_PARALLELISM,
    webhookTokenCacheMs: e.WEBHOOK_TOKEN_CACHE_MS,
    errtrackerIngressEnabled: e.ERRTRACKER_INGRESS_ENABLED,
    validateResponses: e.VALIDATE_RESPONSES,
    blobs: {
      backend: e.BLOB_STORAGE,
      localDir: path.resolve(e.BLOB_DIR || path.join(e.DATA_DIR, 'blobs')),
      s3: {
        endpoint: e.BLOB_S3_ENDPOINT || undefined,
        region: e.BLOB_S3_REGION,
        bucket: e.BLOB_S3_BUCKET || undefined,
        accessKeyId: e.BLOB_S3_ACCESS_KEY_ID || undefined,
        secretAccessKey: e.BLOB_S3_SECRET_ACCESS_KEY || undefined,
        forcePathStyle: e.BLOB_S3_FORCE_PATH_STYLE,
      },
      encryptionKey: e.BLOB_ENCRYPTION_KEY ? Buffer.from(e.BLOB_ENCRYPTION_KEY, /^[0-9a-fA-F]{64}$/.test(e.BLOB_ENCRYPTION_KEY) ? 'hex' : 'base64') : undefined,
    },
    files: {
      writesDisabled: e.FILES_WRITES_DISABLED,
      purgeDelayMs: e.FILES_PURGE_DELAY_SECONDS * 1000,
      clamdAddress: e.CLAMD_ADDRESS || undefined,
      clamdTimeoutMs: e.CLAMD_TIMEOUT_MS,
    },
    credentials: credentialSettings(e),
    databaseQuery: {
      timeoutMs: e.DATABASE_QUERY_TIMEOUT_MS,
      maxRows: e.DATABASE_QUERY_MAX_ROWS,
      maxBytes: e.DATABASE_QUERY_MAX_BYTES,
      pool: { poolMax: e.DATABASE_QUERY_POOL_MAX, perWorkspace: e.DATABASE_QUERY_PER_WORKSPACE, queuePerWorkspace: e.DATABASE_QUERY_QUEUE_PER_WORKSPACE },
    },
    configurationWritesEnabled: e.CONFIGURATION_WRITES_ENABLED,
    llm: {
      baseUrl: e.LLM_BASE_URL || undefined,
      apiKey: e.LLM_API_KEY || undefined,
      model: e.LLM_MODEL,
      timeoutMs: e.LLM_TIMEOUT_MS,
      maxRetries: e.LLM_MAX_RETRIES,
      prices: parsePriceTable(e.LLM_PRICES),
    },
    commands: { confirmationTtlSeconds: e.COMMAND_CONFIRMATION_TTL_SECONDS, confirmWaitMs: e.COMMAND_CONFIRM_WAIT_MS },
    knowledge: {
      embeddings: {
        baseUrl: e.EMBEDDINGS_BASE_URL || undefined,
        model: e.EMBEDDINGS_MODEL,
        apiKey: e.EMBEDDINGS_API_KEY || undefined,
        timeoutMs: e.EMBEDDINGS_TIMEOUT_MS,
        maxRetries: e.EMBEDDINGS_MAX_RETRIES,
      },
      providerBaseUrls: {
        drive: e.KNOWLEDGE_DRIVE_BASE_URL,
        wiki: e.KNOWLEDGE_WIKI_BASE_URL || undefined,
        chat: e.KNOWLEDGE_CHAT_BASE_URL,
        repo: e.KNOWLEDGE_REPO_BASE_URL,
      },
      certifiedProviders: list(e.KNOWLEDGE_CERTIFIED_PROVIDERS),
      syncLeaseMs: e.KNOWLEDGE_SYNC_LEASE_MS,
    },
    localAiCli: {
      paths: { cliA: executablePath(e.LOCAL_AI_CLI_A_PATH), cliB: executablePath(e.LOCAL_AI_CLI_B_PATH) },
      timeoutMs: e.LOCAL_AI_CLI_TIMEOUT_MS,
      rootDir: path.resolve(e.DATA_DIR, 'local-ai-cli'),
    },
    mailer: { gmailBaseUrl: e.GMAIL_API_BASE_URL, graphBaseUrl: e.GRAPH_API_BASE_URL, timeoutMs: e.MAILER_PROVIDER_TIMEOUT_MS, googleTokenUrl: e.GOOGLE_OAUTH_TOKEN_URL },
    processes: {
      apiProcesses: e.API_PROCESSES,
      workers: e.WORKERS,
      apiHeapMb: e.API_HEAP_MB,
      workerHeapMb: e.WORKER_HEAP_MB,
      heartbeatMs: e.WORKER_HEARTBEAT_MS,
      heartbeatStaleMs: e.WORKER_HEARTBEAT_STALE_MS,
    },
    sandbox: sandboxSettings(env),
  };
}

/** A configured executable: a path with a slash resolves against the working directory (CLIs run elsewhere); a bare name is looked up on PATH. */
function executablePath(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  if (!trimmed) return undefined;
  return trimmed.includes('/') ? path.resolve(trimmed) : trimmed;
}

function credentialSettings(e: z.infer<typeof envSchema>): CredentialSettings {
  const key = e.CREDENTIALS_KEY?.trim() || undefined;
  const previousKeys = list(e.CREDENTIALS_PREVIOUS_KEYS);
  for (const [i, k] of [key, ...previousKeys].entries()) {
    try {
      if (k !== undefined) parseKeyMaterial(k, i === 0 ? 'CREDENTIALS_KEY' : 'Each key of CREDENTIALS_PREVIOUS_KEYS');
    } catch (err) {
      throw new Error(`Invalid configuration: ${(err as Error).message}`);
    }
  }
  const envAllowlist = list(e.CREDENTIAL_ENV_ALLOWLIST).map((entry) => {
    const [name, type] = entry.split(':').map((p) => p.trim());
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new Error(`Invalid configuration: CREDENTIAL_ENV_ALLOWLIST: "${name}" is not a variable name`);
    return { name, type: type || null };
  });
  const providerBaseUrls: Record<string, string> = {};
  for (const entry of list(e.CREDENTIAL_PROVIDER_BASE_URLS)) {
    const at = entry.indexOf('=');
    const url = entry.slice(at + 1).trim();
    if (at <= 0 || !/^https?:\/\/\S+$/.test(url)) throw new Error('Invalid configuration: CREDENTIAL_PROVIDER_BASE_URLS: expected provider=https://… pairs separated by commas');
    providerBaseUrls[entry.slice(0, at).trim()] = url;
  }
  return { key, previousKeys, envAllowlist, testTimeoutMs: e.CREDENTIAL_TEST_TIMEOUT_MS, providerBaseUrls };
}

/**
 * SECRET_KEY, which webhook tokens and stored secrets derive from. The api process may start
 * without it (deploys without webhook triggers work), so the features that need it refuse
 * with `unavailable` when it is missing.
 */
export function requireSecretKey(secretKey: string | undefined): string {
  if (!secretKey) throw unavailable('Webhooks are unavailable: SECRET_KEY is not configured.');
  return secretKey;
}

const priceTableSchema = z.record(z.string().min(1), z.strictObject({ input: z.number().min(0), output: z.number().min(0) }));

/** Default prices, in credits per 1,000 tokens, for models the table does not name. */
const DEFAULT_PRICES: PriceTable = { '*': { input: 1, output: 2 } };

/** LLM_PRICES: JSON `{ "<model>": { "input": n, "output": n } }` in credits per 1,000 tokens; `*` for the rest. */
function parsePriceTable(raw: string | undefined): PriceTable {
  if (!raw) return DEFAULT_PRICES;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new Error('Invalid configuration: LLM_PRICES: expected JSON such as {"gpt-4o-mini":{"input":0.15,"output":0.6},"*":{"input":1,"output":2}}');
  }
  const result = priceTableSchema.safeParse(parsed);
  if (!result.success) throw new Error(`Invalid configuration: LLM_PRICES: ${result.error.issues[0]?.message ?? 'invalid'} (each model maps to { input, output } credits per 1,000 tokens)`);
  return { ...DEFAULT_PRICES, ...result.data };
}
