/**
 * The agent's research and skills tools (services/commands/tools.ts, plugged in by
 * activities/commands.ts) over real HTTP, PostgreSQL and Temporal, with the loopback model
 * choosing the tools: load_skills is read-only and runs without a confirmation, with the job
 * creator's visibility; start_research has side effects, waits for the confirmation and starts a
 * research run of the job's workspace, once per job and question.
 */
import { startFakeLlm, lastMessage, toolResults, type FakeLlmServer } from '../../fakes/llm';
import { createWorkspace, http, useTestStack } from '../../kit';
import { createSkill } from '../skills/support';
import { commandsConfig, confirmV1, createJob, createThread, isStatus, waitForJob } from './support';

let llm: FakeLlmServer;

beforeAll(async () => {
  llm = await startFakeLlm();
  llm.reply((req) => {
    const results = toolResults(req);
    if (results.length) return { content: `done: ${results.map((r) => r.content).join(' | ')}` };
    const [verb, arg] = lastMessage(req).split('\n')[0].split(' ');
    if (verb === 'skills') return { toolCalls: [{ name: 'load_skills', arguments: { skillIds: [arg] } }] };
    if (verb === 'research')
      return {
        content: 'I will research it.',
        toolCalls: [{ name: 'start_research', arguments: { query: 'What is on the page?', sourceUrls: [arg] } }],
      };
    return { content: 'reply' };
  });
});
const stack = useTestStack(() => ({ config: commandsConfig(llm) }));
afterAll(async () => {
  await llm?.close();
});

/** The research list in its `{ ok, data }` envelope (the test counts the runs). */
type ResearchList = { data: { runs: unknown[] } };

async function job(message: string, status: string, token = stack.ws.token): Promise<any> {
  const res = await createJob(stack.app, token, { threadId: await createThread(stack.app, token), message });
  expect(res.status).toBe(202);
  return waitForJob(stack.app, token, res.body.data.job.id, isStatus(status));
}

test("load_skills offers the creator's skills to the model without a confirmation", async () => {
  const skill = await createSkill(stack.app, stack.ws.token, {
    name: 'tone-guide',
    description: 'House tone',
    instructions: 'Write in short sentences.',
  });
  expect(skill.status).toBe(201);
  const done = await job(`skills ${skill.body.skill.id}`, 'succeeded');
  // The planning call offered both tools (the answer call after the tool results offers none).
  const planning = llm.chats.find((c) => lastMessage(c).startsWith(`skills ${skill.body.skill.id}`) && c.tools.length > 0);
  expect(planning?.tools.map((t) => t.function.name)).toEqual(expect.arrayContaining(['load_skills', 'start_research']));
  const [trace] = done.traces;
  expect(trace).toMatchObject({
    tool: 'load_skills',
    status: 'succeeded',
    output: { skills: [{ id: skill.body.skill.id, name: 'tone-guide', instructions: 'Write in short sentences.' }] },
  });
  expect(done.confirmation).toBeNull();
});

test("another workspace's skill is not available to the agent: the read-only tool fails, the job goes on", async () => {
  const other = await createWorkspace(stack.app);
  const foreign = await createSkill(stack.app, other.token, { name: 'secret-skill', instructions: 'never shown' });
  expect(foreign.status).toBe(201);
  const done = await job(`skills ${foreign.body.skill.id}`, 'succeeded');
  expect(done.traces[0]).toMatchObject({ tool: 'load_skills', status: 'failed' });
  expect(JSON.stringify(done)).not.toContain('never shown');
});

test('start_research waits for the confirmation, then starts one research run in the job workspace', async () => {
  const waiting = await job('research http://127.0.0.1:9/page', 'waiting_confirmation');
  expect(waiting.confirmation.id).toMatch(/^cnf_/);
  const before = await http<ResearchList>(stack.app, 'GET', '/api/v1/research', { token: stack.ws.token });
  expect(before.body.data.runs).toHaveLength(0);

  const confirmed = await confirmV1(stack.app, stack.ws.token, waiting.id, waiting.confirmation.id);
  expect(confirmed.status).toBe(200);
  const done = await waitForJob(stack.app, stack.ws.token, waiting.id, isStatus('succeeded'));
  const [trace] = done.traces;
  expect(trace).toMatchObject({
    tool: 'start_research',
    status: 'succeeded',
    output: { runId: expect.stringMatching(/^research_[0-9a-f]{32}$/) },
  });
  const run = await http<{ data: { run: unknown } }>(stack.app, 'GET', `/api/v1/research/${(trace.output as { runId: string }).runId}`, {
    token: stack.ws.token,
  });
  expect(run.status).toBe(200);
  expect(run.body.data.run).toMatchObject({
    query: 'What is on the page?',
    sourceUrls: ['http://127.0.0.1:9/page'],
    createdById: stack.ws.ownerId,
  });
  const after = await http<ResearchList>(stack.app, 'GET', '/api/v1/research', { token: stack.ws.token });
  expect(after.body.data.runs).toHaveLength(1);
});
