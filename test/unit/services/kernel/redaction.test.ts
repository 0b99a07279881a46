import { projectFor, RUN_RESTRICTED_FIELDS, RUN_UNLISTED_RESTRICTED_FIELDS, toSafeProjection } from '../../../../services/kernel/redaction';
import type { Principal } from '../../../../services/kernel/principal';

const run = {
  id: 'run_1',
  workspaceId: 'ws_1',
  status: 'succeeded',
  input: { secret: 1 },
  output: { result: 2 },
  error: null,
  logs: [{ level: 'info', message: 'hi' }],
  waits: [{ kind: 'event' }],
  executionSnapshots: [{}],
  steps: [
    { nodeId: 'a', status: 'succeeded', input: 1, output: 2, error: null, startedAt: 't' },
    { nodeId: 'b', status: 'failed', input: 3, output: null, error: 'boom', startedAt: 't' },
  ],
};

const principal = (scope: 'workspace' | 'personal', role: 'member' | 'viewer'): Principal => ({
  kind: 'api_key',
  apiKeyId: 'k',
  principalId: 'key:k',
  userId: 'u',
  scope,
  workspaceId: 'ws_1',
  role,
  organization: null,
  allowedWorkflowIds: null,
});

test('the safe run projection drops restricted and unlisted fields, keeps step identity, and says so', () => {
  const safe = toSafeProjection(run, RUN_RESTRICTED_FIELDS, RUN_UNLISTED_RESTRICTED_FIELDS);
  expect(safe).toEqual({
    id: 'run_1',
    workspaceId: 'ws_1',
    status: 'succeeded',
    steps: [
      { nodeId: 'a', status: 'succeeded', startedAt: 't' },
      { nodeId: 'b', status: 'failed', startedAt: 't' },
    ],
    redaction: {
      applied: true,
      projection: 'safe-content',
      contractVersion: 'workspace-safe.v1',
      restrictedFields: ['input', 'output', 'error', 'steps.input', 'steps.output', 'steps.error', 'logs'],
    },
  });
  expect(run.steps[0].input).toBe(1); // the original is untouched
});

test('projectFor gives members of a workspace key the full object and viewers or personal keys the safe one', () => {
  expect(projectFor(principal('workspace', 'member'), run, RUN_RESTRICTED_FIELDS)).toBe(run);
  expect(projectFor(principal('workspace', 'viewer'), run, RUN_RESTRICTED_FIELDS)).toHaveProperty('redaction.applied', true);
  expect(projectFor(principal('personal', 'member'), run, RUN_RESTRICTED_FIELDS)).not.toHaveProperty('input');
});
