/**
 * The external tool's AI root nodes and their sub-nodes (services/extflow/nodes/ai.ts): exports
 * shaped like the tool's own (AI Agent 1.7 with an OpenAI chat model, a window buffer memory and
 * an HTTP Request tool; Basic LLM Chain 1.5 with a structured output parser; Text Classifier 1;
 * Information Extractor 1), converted to `llm` nodes; credentials named for the readiness report;
 * sub-nodes without an equivalent named with a reason and a replacement.
 */
import { convertExtflowWorkflow } from '../../../../services/extflow/convert';
import { withConversion } from '../../../../services/extflow/readiness';
import { parseNodeConfig } from '../../../../engine/nodes';
import type { GraphNode } from '../../../../engine/types';

const LC = '@n8n/n8n-nodes-langchain.';
const trigger = {
  id: 't1',
  name: 'When clicking ‘Test workflow’',
  type: 'n8n-nodes-base.manualTrigger',
  typeVersion: 1,
  position: [0, 0],
  parameters: {},
};
const openAiModel = (name = 'OpenAI Chat Model') => ({
  id: 'm1',
  name,
  type: `${LC}lmChatOpenAi`,
  typeVersion: 1.2,
  position: [200, 200],
  parameters: {
    model: { __rl: true, value: 'gpt-4o-mini', mode: 'list', cachedResultName: 'gpt-4o-mini' },
    options: { temperature: 0.3, maxTokens: 800 },
  },
  credentials: { openAiApi: { id: 'Xy12', name: 'OpenAi account' } },
});
const link = (type: string, target: string) => ({ [type]: [[{ node: target, type, index: 0 }]] });
const main = (target: string) => ({ main: [[{ node: target, type: 'main', index: 0 }]] });

const byId = (nodes: GraphNode[], id: string) => {
  const n = nodes.find((x) => x.id === id);
  if (!n) throw new Error(`no node ${id} in ${nodes.map((x) => x.id).join(', ')}`);
  return n;
};

test('AI Agent with its chat model, window buffer memory and HTTP Request tool becomes an llm node with an HTTP tool', () => {
  const wf = convertExtflowWorkflow({
    id: 'agent-1',
    name: 'Weather agent',
    nodes: [
      trigger,
      {
        id: 'a1',
        name: 'AI Agent',
        type: `${LC}agent`,
        typeVersion: 1.7,
        position: [200, 0],
        parameters: {
          promptType: 'define',
          text: '={{ $json.question }}',
          options: { systemMessage: 'You answer about weather.', maxIterations: 4 },
        },
      },
      openAiModel(),
      {
        id: 'mem',
        name: 'Window Buffer Memory',
        type: `${LC}memoryBufferWindow`,
        typeVersion: 1.3,
        position: [300, 200],
        parameters: { sessionIdType: 'customKey', sessionKey: '={{ $json.sessionId }}', contextWindowLength: 3 },
      },
      {
        id: 'tool',
        name: 'Get weather',
        type: `${LC}toolHttpRequest`,
        typeVersion: 1.1,
        position: [400, 200],
        parameters: {
          toolDescription: 'Current weather of a city',
          url: 'https://api.weather.example/v1/current/{city}',
          sendQuery: true,
          parametersQuery: { values: [{ name: 'units', valueProvider: 'fieldValue', value: 'metric' }, { name: 'lang' }] },
          placeholderDefinitions: { values: [{ name: 'city', description: 'City name', type: 'string' }] },
        },
      },
    ],
    connections: {
      [trigger.name]: main('AI Agent'),
      'OpenAI Chat Model': link('ai_languageModel', 'AI Agent'),
      'Window Buffer Memory': link('ai_memory', 'AI Agent'),
      'Get weather': link('ai_tool', 'AI Agent'),
    },
  });
  expect(wf.conversion.unsupported).toEqual([]);
  expect(wf.conversion.mappedNodes).toBe(wf.conversion.nodeCount);
  const llm = byId(wf.nodes, 'ai_agent__llm');
  expect(llm.type).toBe('llm');
  expect(llm.config).toEqual({
    credentialId: 'OpenAi account',
    model: 'gpt-4o-mini',
    temperature: 0.3,
    maxTokens: 800,
    system: 'You answer about weather.',
    prompt: '=$string($input.question)',
    history: '=$nodes.ai_agent__llm.messages',
    historyWindow: 6,
    maxToolRounds: 4,
    tools: [
      {
        name: 'Get_weather',
        description: 'Current weather of a city',
        parameters: {
          type: 'object',
          properties: { city: { type: 'string', description: 'City name' }, lang: { type: 'string' } },
          required: ['city', 'lang'],
        },
        http: { method: 'GET', url: 'https://api.weather.example/v1/current/{city}', query: { units: 'metric' } },
      },
    ],
  });
  // The config is one the engine accepts.
  expect(() => parseNodeConfig('llm', llm.config)).not.toThrow();
  expect(byId(wf.nodes, 'ai_agent').config).toEqual({ expression: '{ "output": $nodes.ai_agent__llm.text }' });
  // The sub-nodes are not nodes of the graph; the edges run trigger → llm → output.
  expect(wf.nodes.map((n) => n.id)).not.toEqual(expect.arrayContaining([expect.stringMatching(/openai|memory|weather/)]));
  expect(wf.edges.filter((e) => e.target.startsWith('ai_agent')).map((e) => `${e.source}>${e.target}`)).toEqual([
    'ai_agent__llm>ai_agent',
    'when_clicking_test_workflow__item>ai_agent__llm',
  ]);
  // The chat model's credential is an llm credential; memory within one run is named.
  expect(wf.conversion.credentials).toEqual([
    { alias: 'OpenAi account', extflowType: 'openAiApi', type: 'llm', nodes: ['OpenAI Chat Model'] },
  ]);
  expect(wf.connections).toEqual({ 'OpenAi account': 'llm' });
  expect(wf.conversion.readinessIssues).toEqual([
    expect.objectContaining({ node: 'AI Agent', kind: 'lossyConversion', message: expect.stringContaining('within one run only') }),
  ]);
});

test('a missing llm credential is named in the readiness report and lowers readiness', () => {
  const wf = convertExtflowWorkflow({
    id: 'chain-cred',
    name: 'Chain',
    nodes: [
      trigger,
      {
        id: 'c',
        name: 'Basic LLM Chain',
        type: `${LC}chainLlm`,
        typeVersion: 1.5,
        position: [0, 0],
        parameters: { promptType: 'define', text: 'Hi' },
      },
      openAiModel(),
    ],
    connections: { [trigger.name]: main('Basic LLM Chain'), 'OpenAI Chat Model': link('ai_languageModel', 'Basic LLM Chain') },
  });
  expect(wf.conversion.ready).toBe(true);
  const validation = {
    report: { valid: true, errors: [], warnings: [], nodeCount: 3, edgeCount: 2 },
    deploymentReadiness: { ready: true, blockers: [] },
  };
  const without = withConversion(validation, wf.conversion, [], new Set());
  expect(without.conversion!.ready).toBe(false);
  expect(without.deploymentReadiness.blockers).toEqual([
    expect.stringMatching(/^OpenAI Chat Model: credential "OpenAi account" does not exist in this workspace; .*type llm/),
  ]);
  expect(withConversion(validation, wf.conversion, [], new Set(['openai account'])).conversion!.ready).toBe(true);
});

test('Basic LLM Chain with a system message and a structured output parser answers { text } with the parsed JSON', () => {
  const wf = convertExtflowWorkflow({
    id: 'chain-1',
    name: 'Summaries',
    nodes: [
      trigger,
      {
        id: 'c',
        name: 'Basic LLM Chain',
        type: `${LC}chainLlm`,
        typeVersion: 1.5,
        position: [200, 0],
        parameters: {
          promptType: 'define',
          text: '=Summarise: {{ $json.body }}',
          hasOutputParser: true,
          messages: { messageValues: [{ message: 'You write short summaries.' }] },
        },
      },
      openAiModel(),
      {
        id: 'p',
        name: 'Structured Output Parser',
        type: `${LC}outputParserStructured`,
        typeVersion: 1.2,
        position: [300, 200],
        parameters: { jsonSchemaExample: '{\n  "summary": "text",\n  "words": 12,\n  "tags": ["a"]\n}' },
      },
    ],
    connections: {
      [trigger.name]: main('Basic LLM Chain'),
      'OpenAI Chat Model': link('ai_languageModel', 'Basic LLM Chain'),
      'Structured Output Parser': link('ai_outputParser', 'Basic LLM Chain'),
    },
  });
  expect(wf.conversion.unsupported).toEqual([]);
  const llm = byId(wf.nodes, 'basic_llm_chain__llm');
  expect(llm.config).toMatchObject({
    system: 'You write short summaries.',
    prompt: '=$string(("Summarise: " & $string($input.body)))',
    outputSchema: {
      type: 'object',
      properties: { summary: { type: 'string' }, words: { type: 'number' }, tags: { type: 'array', items: { type: 'string' } } },
      required: ['summary', 'words', 'tags'],
    },
  });
  expect(byId(wf.nodes, 'basic_llm_chain').config).toEqual({ expression: '{ "text": $nodes.basic_llm_chain__llm.json }' });
  expect(wf.conversion.ready).toBe(true);
});

test('Text Classifier: its categories become the answer schema and one output each, passing the input item on', () => {
  const wf = convertExtflowWorkflow({
    id: 'cls-1',
    name: 'Triage',
    nodes: [
      trigger,
      {
        id: 'tc',
        name: 'Text Classifier',
        type: `${LC}textClassifier`,
        typeVersion: 1,
        position: [200, 0],
        parameters: {
          inputText: '={{ $json.message }}',
          categories: {
            categories: [
              { category: 'billing', description: 'Invoices and payments' },
              { category: 'bug', description: 'Something is broken' },
            ],
          },
          options: { fallback: 'other' },
        },
      },
      openAiModel(),
      { id: 'b', name: 'Billing', type: 'n8n-nodes-base.noOp', typeVersion: 1, position: [400, 0], parameters: {} },
      { id: 'g', name: 'Bug', type: 'n8n-nodes-base.noOp', typeVersion: 1, position: [400, 100], parameters: {} },
      { id: 'o', name: 'Other', type: 'n8n-nodes-base.noOp', typeVersion: 1, position: [400, 200], parameters: {} },
    ],
    connections: {
      [trigger.name]: main('Text Classifier'),
      'Text Classifier': {
        main: [
          [{ node: 'Billing', type: 'main', index: 0 }],
          [{ node: 'Bug', type: 'main', index: 0 }],
          [{ node: 'Other', type: 'main', index: 0 }],
        ],
      },
      'OpenAI Chat Model': link('ai_languageModel', 'Text Classifier'),
    },
  });
  expect(wf.conversion.unsupported).toEqual([]);
  const llm = byId(wf.nodes, 'text_classifier__llm');
  expect(llm.config).toMatchObject({
    prompt: '=$string($input.message)',
    outputSchema: {
      type: 'object',
      properties: { category: { type: 'string', enum: ['billing', 'bug', 'other'] } },
      required: ['category'],
    },
  });
  expect(String(llm.config.system)).toContain('- billing: Invoices and payments');
  expect(byId(wf.nodes, 'text_classifier')).toMatchObject({
    type: 'switch',
    config: {
      expression: '$nodes.text_classifier__llm.json.category',
      cases: [
        { value: 'billing', handle: 'c0' },
        { value: 'bug', handle: 'c1' },
        { value: 'other', handle: 'c2' },
      ],
    },
  });
  // The item goes on, not the model's answer.
  expect(byId(wf.nodes, 'text_classifier__item').config).toEqual({ expression: '$nodes.text_classifier__in' });
  const out = (handle: string) => wf.edges.find((e) => e.source === 'text_classifier' && e.sourceHandle === handle)?.target;
  expect([out('c0'), out('c1'), out('c2')]).toEqual(['billing', 'bug', 'other']);
  expect(wf.conversion.ready).toBe(true);
});

test('Information Extractor: attributes become a JSON Schema; its answer is { output }', () => {
  const wf = convertExtflowWorkflow({
    id: 'ie-1',
    name: 'Extract',
    nodes: [
      trigger,
      {
        id: 'ie',
        name: 'Information Extractor',
        type: `${LC}informationExtractor`,
        typeVersion: 1,
        position: [200, 0],
        parameters: {
          text: '={{ $json.email }}',
          attributes: {
            attributes: [
              { name: 'company', description: 'The sender’s company', required: true },
              { name: 'budget', type: 'number', description: 'Budget in EUR' },
              { name: 'deadline', type: 'date' },
            ],
          },
          options: {},
        },
      },
      {
        ...openAiModel(),
        type: `${LC}lmChatAnthropic`,
        typeVersion: 1.3,
        parameters: { model: 'claude-3-5-sonnet-20240620', options: {} },
        credentials: { anthropicApi: { id: 'k', name: 'Anthropic account' } },
      },
    ],
    connections: { [trigger.name]: main('Information Extractor'), 'OpenAI Chat Model': link('ai_languageModel', 'Information Extractor') },
  });
  expect(wf.conversion.unsupported).toEqual([]);
  expect(byId(wf.nodes, 'information_extractor__llm').config).toMatchObject({
    credentialId: 'Anthropic account',
    model: 'claude-3-5-sonnet-20240620',
    prompt: '=$string($input.email)',
    outputSchema: {
      type: 'object',
      properties: {
        company: { type: 'string', description: 'The sender’s company' },
        budget: { type: 'number', description: 'Budget in EUR' },
        deadline: { type: 'string', format: 'date' },
      },
      required: ['company'],
    },
  });
  expect(byId(wf.nodes, 'information_extractor').config).toEqual({ expression: '{ "output": $nodes.information_extractor__llm.json }' });
  expect(wf.conversion.credentials).toEqual([
    { alias: 'Anthropic account', extflowType: 'anthropicApi', type: 'llm', nodes: ['OpenAI Chat Model'] },
  ]);
  expect(wf.conversion.warnings).toContainEqual(
    expect.objectContaining({ message: expect.stringContaining("Anthropic's OpenAI-compatible endpoint") }),
  );
});

test('sub-nodes without an equivalent are named with a reason and a replacement; the root still maps', () => {
  const wf = convertExtflowWorkflow({
    id: 'rag-1',
    name: 'RAG',
    nodes: [
      trigger,
      {
        id: 'a',
        name: 'AI Agent',
        type: `${LC}agent`,
        typeVersion: 1.7,
        position: [0, 0],
        parameters: { promptType: 'define', text: 'Hi' },
      },
      openAiModel(),
      {
        id: 'v',
        name: 'Answer questions with a vector store',
        type: `${LC}toolVectorStore`,
        typeVersion: 1,
        position: [0, 0],
        parameters: {},
      },
      { id: 'w', name: 'Call workflow', type: `${LC}toolWorkflow`, typeVersion: 2, position: [0, 0], parameters: { workflowId: '42' } },
      { id: 'p', name: 'Postgres Chat Memory', type: `${LC}memoryPostgresChat`, typeVersion: 1.3, position: [0, 0], parameters: {} },
    ],
    connections: {
      [trigger.name]: main('AI Agent'),
      'OpenAI Chat Model': link('ai_languageModel', 'AI Agent'),
      'Answer questions with a vector store': link('ai_tool', 'AI Agent'),
      'Call workflow': link('ai_tool', 'AI Agent'),
      'Postgres Chat Memory': link('ai_memory', 'AI Agent'),
    },
  });
  expect(wf.conversion.unsupported).toEqual([
    expect.objectContaining({ node: 'Postgres Chat Memory', reason: 'only the window buffer memory is supported' }),
    expect.objectContaining({
      node: 'Answer questions with a vector store',
      reason: 'vector stores have no equivalent here',
      action: expect.stringContaining('knowledge base'),
    }),
    expect.objectContaining({
      node: 'Call workflow',
      reason: 'workflow tools are not supported yet',
      action: expect.stringContaining('HTTP Request tool'),
    }),
  ]);
  expect(wf.conversion.ready).toBe(false);
  expect(byId(wf.nodes, 'ai_agent__llm').type).toBe('llm');
  expect(wf.conversion.mappedNodes).toBe(wf.conversion.nodeCount - 3);
});

test('an agent without a chat model is unsupported, and so are its sub-nodes', () => {
  const wf = convertExtflowWorkflow({
    id: 'nomodel',
    name: 'No model',
    nodes: [
      trigger,
      {
        id: 'a',
        name: 'AI Agent',
        type: `${LC}agent`,
        typeVersion: 1.7,
        position: [0, 0],
        parameters: { promptType: 'define', text: 'Hi' },
      },
      { id: 'm', name: 'Window Buffer Memory', type: `${LC}memoryBufferWindow`, typeVersion: 1.3, position: [0, 0], parameters: {} },
    ],
    connections: { [trigger.name]: main('AI Agent'), 'Window Buffer Memory': link('ai_memory', 'AI Agent') },
  });
  expect(wf.conversion.unsupported.map((u) => [u.node, u.reason])).toEqual([
    ['AI Agent', 'no chat model is connected'],
    ['Window Buffer Memory', 'it belongs to "AI Agent", which is not converted'],
  ]);
});

test('after a split, a Basic LLM Chain asks the model once per item, in a loop (the tool runs it per item)', () => {
  const wf = convertExtflowWorkflow({
    id: 'chain-per-item',
    name: 'Summaries per item',
    nodes: [
      trigger,
      {
        id: 's',
        name: 'Split Out',
        type: 'n8n-nodes-base.splitOut',
        typeVersion: 1,
        position: [100, 0],
        parameters: { fieldToSplitOut: 'posts' },
      },
      {
        id: 'c',
        name: 'Basic LLM Chain',
        type: `${LC}chainLlm`,
        typeVersion: 1.5,
        position: [200, 0],
        parameters: { promptType: 'define', text: '=Summarise: {{ $json.body }}' },
      },
      openAiModel(),
    ],
    connections: {
      [trigger.name]: main('Split Out'),
      'Split Out': main('Basic LLM Chain'),
      'OpenAI Chat Model': link('ai_languageModel', 'Basic LLM Chain'),
    },
  });
  expect(wf.conversion.unsupported).toEqual([]);
  expect(byId(wf.nodes, 'basic_llm_chain__each').type).toBe('loop');
  // The prompt reads the current item's JSON, which `__json` gives the loop's body.
  expect(byId(wf.nodes, 'basic_llm_chain__run__llm').config).toMatchObject({ prompt: '=$string(("Summarise: " & $string($input.body)))' });
  expect(wf.edges).toEqual(
    expect.arrayContaining([
      expect.objectContaining({ source: 'basic_llm_chain__json', target: 'basic_llm_chain__run__llm' }),
      expect.objectContaining({ source: 'basic_llm_chain__back', target: 'basic_llm_chain__each', loop: true }),
    ]),
  );
  expect(wf.conversion.readinessIssues.filter((i) => i.kind === 'lossyConversion')).toEqual([]);
});
