/**
 * The external tool's AI root nodes — AI Agent, Basic LLM Chain, Text Classifier, Information
 * Extractor — onto our `llm` node (docs/workflow-graph.md, "llm"), reading the sub-nodes
 * connected to them by `ai_languageModel`, `ai_memory`, `ai_tool` and `ai_outputParser`
 * connections (docs/migrating.md, "AI nodes"). Each root's output keeps the external tool's
 * shape (`{ output }`, `{ text }`, the input item on a category's output), built by a transform
 * after the model call.
 */
import { toStringTemplate } from '../expressions';
import type { ExtNode } from '../types';
import { Unsupported } from '../types';
import { isRecord, locatorValue, ourNode, type AiSubNode, type MapContext, type Mapped } from './context';

const LC = '@n8n/n8n-nodes-langchain.';

/** Chat model sub-nodes: their credential type. Every one is reached over the OpenAI-compatible protocol of our `llm` credential. */
export const CHAT_MODELS: Readonly<Record<string, { credential: string; provider: string; openAi: boolean }>> = {
  [`${LC}lmChatOpenAi`]: { credential: 'openAiApi', provider: 'OpenAI', openAi: true },
  [`${LC}lmOpenAi`]: { credential: 'openAiApi', provider: 'OpenAI', openAi: true },
  [`${LC}lmChatAzureOpenAi`]: { credential: 'azureOpenAiApi', provider: 'Azure OpenAI', openAi: true },
  [`${LC}lmChatAnthropic`]: { credential: 'anthropicApi', provider: 'Anthropic', openAi: false },
  [`${LC}lmChatGoogleGemini`]: { credential: 'googlePalmApi', provider: 'Google Gemini', openAi: false },
  [`${LC}lmChatMistralCloud`]: { credential: 'mistralCloudApi', provider: 'Mistral', openAi: false },
  [`${LC}lmChatGroq`]: { credential: 'groqApi', provider: 'Groq', openAi: false },
  [`${LC}lmChatOllama`]: { credential: 'ollamaApi', provider: 'Ollama', openAi: false },
  [`${LC}lmChatOpenRouter`]: { credential: 'openRouterApi', provider: 'OpenRouter', openAi: false },
  [`${LC}lmChatDeepSeek`]: { credential: 'deepSeekApi', provider: 'DeepSeek', openAi: false },
  [`${LC}lmChatXAiGrok`]: { credential: 'xAiApi', provider: 'xAI', openAi: false },
};

/** Root node types that read AI sub-nodes. */
export const AI_ROOT_TYPES = new Set([`${LC}agent`, `${LC}chainLlm`, `${LC}textClassifier`, `${LC}informationExtractor`]);

/** Reasons and replacements for sub-nodes that stay unsupported, by a part of their type name. */
const UNSUPPORTED_SUBNODES: ReadonlyArray<[RegExp, string, string]> = [
  [
    /vectorStore/i,
    'vector stores have no equivalent here',
    'Index the documents in a knowledge base and query it with an http tool (GET /api/v1/knowledge/…/search).',
  ],
  [/embeddings/i, 'embedding models have no equivalent here', 'Use a knowledge base, which embeds documents itself.'],
  [/retriever/i, 'retrievers have no equivalent here', 'Query a knowledge base with an http tool instead.'],
  [
    /toolWorkflow|toolExecutor/i,
    'workflow tools are not supported yet',
    'Give the sub-workflow a webhook trigger and call it with an HTTP Request tool.',
  ],
  [
    /toolCode/i,
    'code tools are not supported yet',
    'Run the code in a code node before the model call, or expose it behind a webhook workflow and use an HTTP Request tool.',
  ],
  [/memory/i, 'only the window buffer memory is supported', 'Use a Window Buffer Memory, or keep the conversation in a table.'],
  [/outputParser/i, 'this output parser has no equivalent here', 'Use a Structured Output Parser or an Information Extractor.'],
  [/tool/i, 'this tool has no equivalent here', 'Call the service with an HTTP Request tool.'],
];

function refuseSub(ctx: MapContext, sub: AiSubNode): void {
  const [, reason, action] = UNSUPPORTED_SUBNODES.find(([re]) => re.test(sub.node.type)) ?? [
    null,
    `sub-node type "${sub.node.type}" has no equivalent here`,
    'Rebuild this part with http or code nodes.',
  ];
  ctx.unsupportedSub(sub.node, reason, action);
}

const paramsOf = (n: ExtNode): Record<string, unknown> => (isRecord(n.parameters) ? n.parameters : {});

/** The model part of an llm config, from the root's `ai_languageModel` sub-node. */
function modelConfig(ctx: MapContext): Record<string, unknown> {
  const models = ctx.subNodes.filter((s) => s.type === 'ai_languageModel');
  const [first, ...more] = models;
  if (!first) throw new Unsupported('no chat model is connected', 'Connect a chat model (OpenAI Chat Model or another) to the node.');
  for (const extra of more) ctx.warn(`"${extra.node.name}" is a fallback model: only the first model ("${first.node.name}") is used.`);
  const known = CHAT_MODELS[first.node.type];
  if (!known) {
    refuseSub(ctx, first);
    return {};
  }
  const params = paramsOf(first.node);
  const config: Record<string, unknown> = {};
  const cred = first.node.credentials?.[known.credential] ?? Object.values(first.node.credentials ?? {})[0];
  if (cred) config.credentialId = ctx.subCredential(first.node, known.credential, 'llm');
  if (!known.openAi)
    ctx.warn(
      `"${first.node.name}" (${known.provider}) is called over the OpenAI-compatible protocol: its llm credential's baseUrl must be ${known.provider}'s OpenAI-compatible endpoint.`,
    );
  const model = locatorValue(params.model) ?? locatorValue(params.modelName);
  if (model && !model.startsWith('=')) config.model = model;
  else if (model)
    ctx.lossy('unsupportedOption', `the model of "${first.node.name}" is an expression; the credential's model is used instead.`);
  const options = isRecord(params.options) ? params.options : {};
  if (typeof options.temperature === 'number') config.temperature = Math.min(2, Math.max(0, options.temperature));
  const maxTokens = options.maxTokens ?? options.maxTokensToSample;
  if (typeof maxTokens === 'number' && maxTokens > 0) config.maxTokens = Math.min(200_000, Math.floor(maxTokens));
  return config;
}

/** The prompt: the node's own text, or (prompt type "auto", taken from a chat trigger) `$json.chatInput`. */
function promptOf(ctx: MapContext, field = 'text'): string {
  // Versions before the prompt type (Basic LLM Chain 1.0-1.3) name the field `prompt`.
  const own = ctx.params[field] ?? ctx.params.prompt;
  const define = ctx.params.promptType === 'define' || (ctx.params.promptType === undefined && own !== undefined);
  const text = define ? own : '={{ $json.chatInput }}';
  const prompt = toStringTemplate(text ?? '', ctx.scope);
  if (prompt.trim() === '') throw new Unsupported('the prompt is empty', 'Set the prompt text of the node.');
  return prompt;
}

/** A JSON Schema from a Structured Output Parser (`jsonSchemaExample`, or `inputSchema` when schemaType is manual). */
function parserSchema(ctx: MapContext): Record<string, unknown> | undefined {
  const parsers = ctx.subNodes.filter((s) => s.type === 'ai_outputParser');
  const [parser] = parsers;
  if (!parser) return undefined;
  if (parser.node.type !== `${LC}outputParserStructured`) {
    refuseSub(ctx, parser);
    return undefined;
  }
  const params = paramsOf(parser.node);
  const manual = params.schemaType === 'manual';
  const text = manual ? params.inputSchema : (params.jsonSchemaExample ?? params.jsonSchema);
  try {
    const value = JSON.parse(typeof text === 'string' ? text : '{}') as unknown;
    if (!isRecord(value)) throw new Error('not an object');
    return manual || params.jsonSchema !== undefined ? value : schemaFromExample(value);
  } catch {
    ctx.unsupportedSub(parser.node, 'its schema is not valid JSON', 'Fix the JSON example or schema of the output parser.');
    return undefined;
  }
}

/** The JSON Schema an example value follows (as the external tool derives it: every key present is required). */
export function schemaFromExample(value: unknown): Record<string, unknown> {
  if (Array.isArray(value)) return { type: 'array', items: value.length ? schemaFromExample(value[0]) : {} };
  if (isRecord(value)) {
    const properties = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, schemaFromExample(v)]));
    return { type: 'object', properties, required: Object.keys(value) };
  }
  if (typeof value === 'number') return { type: 'number' };
  if (typeof value === 'boolean') return { type: 'boolean' };
  return { type: 'string' };
}

/** Tools from `ai_tool` sub-nodes; the ones without an equivalent are named. */
function toolsOf(ctx: MapContext): Array<Record<string, unknown>> {
  const tools: Array<Record<string, unknown>> = [];
  const names = new Set<string>();
  for (const sub of ctx.subNodes.filter((s) => s.type === 'ai_tool')) {
    if (sub.node.type !== `${LC}toolHttpRequest`) {
      refuseSub(ctx, sub);
      continue;
    }
    const tool = httpTool(ctx, sub.node);
    if (!tool) continue;
    let name = tool.name as string;
    for (let k = 2; names.has(name); k++) name = `${(tool.name as string).slice(0, 60)}_${k}`;
    names.add(name);
    tools.push({ ...tool, name });
  }
  return tools;
}

/** An HTTP Request tool: `{placeholder}`s in the URL and query values the model fills become the tool's parameters. */
function httpTool(ctx: MapContext, sub: ExtNode): Record<string, unknown> | null {
  const p = paramsOf(sub);
  const url = typeof p.url === 'string' ? p.url : '';
  const refuse = (reason: string, action: string) => {
    ctx.unsupportedSub(sub, reason, action);
    return null;
  };
  if (url.startsWith('=')) return refuse('its URL is an expression', 'Write the URL with {placeholders} the model fills instead.');
  if (!/^https?:\/\/[^\s/?#]+\S*$/i.test(url)) return refuse('its URL is not an http(s) URL', 'Set a full http(s) URL.');
  const described = new Map<string, { description?: string; type?: string }>();
  const defs = isRecord(p.placeholderDefinitions) && Array.isArray(p.placeholderDefinitions.values) ? p.placeholderDefinitions.values : [];
  for (const d of defs) if (isRecord(d) && typeof d.name === 'string') described.set(d.name, d);
  const properties: Record<string, unknown> = {};
  const property = (name: string) => {
    const d = described.get(name);
    const type = d?.type === 'number' || d?.type === 'boolean' ? d.type : 'string';
    properties[name] = { type, ...(d?.description ? { description: d.description } : {}) };
  };
  for (const m of url.matchAll(/\{([A-Za-z0-9_-]{1,64})\}/g)) property(m[1] ?? '');
  const query: Record<string, string> = {};
  const queryParams =
    p.sendQuery === true && isRecord(p.parametersQuery) && Array.isArray(p.parametersQuery.values) ? p.parametersQuery.values : [];
  for (const q of queryParams) {
    if (!isRecord(q) || typeof q.name !== 'string') continue;
    if (q.valueProvider === 'fieldValue') {
      if (typeof q.value === 'string' && q.value.startsWith('='))
        return refuse(`query parameter "${q.name}" is an expression`, 'Give it a fixed value, or let the model fill it.');
      query[q.name] = String(q.value ?? '');
    } else property(q.name);
  }
  if (p.sendHeaders === true || p.sendBody === true)
    return refuse(
      'headers and bodies of HTTP Request tools are not converted',
      'Put the values in the URL or the query, or use an http node before the model call.',
    );
  const method = typeof p.method === 'string' ? p.method.toUpperCase() : 'GET';
  if (!['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].includes(method))
    return refuse(`method ${method} is not supported for tools`, 'Use GET, POST, PUT, PATCH or DELETE.');
  const http: Record<string, unknown> = { method, url };
  if (Object.keys(query).length) http.query = query;
  if (p.authentication !== undefined && p.authentication !== 'none') {
    const [extType] = Object.keys(sub.credentials ?? {});
    http.credentialId = ctx.subCredential(sub, extType ?? 'httpHeaderAuth', null);
  }
  const name =
    sub.name
      .replace(/[^A-Za-z0-9_-]+/g, '_')
      .replace(/^_+|_+$/g, '')
      .slice(0, 64) || 'http_tool';
  return {
    name,
    description: typeof p.toolDescription === 'string' ? p.toolDescription.slice(0, 4000) : '',
    parameters: { type: 'object', properties, required: Object.keys(properties) },
    http,
  };
}

/** Buffer window memory: the conversation kept within the run, read back by the node's next call. */
function memoryConfig(ctx: MapContext, llmId: string): Record<string, unknown> {
  const [memory, ...more] = ctx.subNodes.filter((s) => s.type === 'ai_memory');
  for (const extra of more) refuseSub(ctx, extra);
  if (!memory) return {};
  if (memory.node.type !== `${LC}memoryBufferWindow`) {
    refuseSub(ctx, memory);
    return {};
  }
  const turns = Number(paramsOf(memory.node).contextWindowLength ?? 5);
  ctx.lossy(
    'lossyConversion',
    `"${memory.node.name}" keeps the conversation within one run only: each run (each chat message) starts a new conversation, where the external tool remembers earlier messages of the session.`,
  );
  return { history: `=$nodes.${llmId}.messages`, historyWindow: Math.min(200, Math.max(1, Math.floor(turns)) * 2) };
}

function otherSubNodes(ctx: MapContext, known: readonly string[]): void {
  for (const sub of ctx.subNodes) if (!known.includes(sub.type)) refuseSub(ctx, sub);
}

/** A transform of the node's id shaping the llm output like the external tool's. */
function shaped(ctx: MapContext, llm: Record<string, unknown>, expression: string): Mapped {
  const llmId = `${ctx.id}__llm`;
  return { nodes: [ourNode(ctx, llmId, 'llm', llm, 1), ourNode(ctx, ctx.id, 'transform', { expression })], errorSource: llmId };
}

const systemOf = (value: unknown, ctx: MapContext): Record<string, unknown> =>
  typeof value === 'string' && value.trim() !== '' ? { system: toStringTemplate(value, ctx.scope) } : {};

/** AI Agent: a tools agent; its answer is `{ output }`. */
export function agentNode(ctx: MapContext): Mapped {
  const options = isRecord(ctx.params.options) ? ctx.params.options : {};
  const agent = ctx.params.agent;
  if (typeof agent === 'string' && !['toolsAgent', 'conversationalAgent', 'openAiFunctionsAgent'].includes(agent))
    throw new Unsupported(`the "${agent}" agent type has no equivalent here`, 'Switch the agent to the Tools Agent.');
  otherSubNodes(ctx, ['ai_languageModel', 'ai_tool', 'ai_memory', 'ai_outputParser']);
  const llmId = `${ctx.id}__llm`;
  const schema = ctx.params.hasOutputParser === true ? parserSchema(ctx) : undefined;
  const maxIterations = Number(options.maxIterations ?? 10);
  const llm = {
    ...modelConfig(ctx),
    ...systemOf(options.systemMessage ?? 'You are a helpful assistant', ctx),
    prompt: promptOf(ctx),
    ...memoryConfig(ctx, llmId),
    ...(schema ? { outputSchema: schema } : {}),
    maxToolRounds: Math.min(20, Math.max(0, Math.floor(maxIterations))),
  };
  const tools = toolsOf(ctx);
  if (tools.length) Object.assign(llm, { tools });
  if (maxIterations > 20) ctx.warn(`maxIterations ${maxIterations} is cut to 20 tool rounds.`);
  if (options.returnIntermediateSteps === true)
    ctx.lossy(
      'unsupportedOption',
      '"Return intermediate steps" is not carried over: the tool calls are in the model step\'s output (toolCalls) instead.',
    );
  return shaped(ctx, llm, schema ? `{ "output": $nodes.${llmId}.json }` : `{ "output": $nodes.${llmId}.text }`);
}

/** Basic LLM Chain: one model call; its answer is `{ text }`. */
export function chainLlmNode(ctx: MapContext): Mapped {
  otherSubNodes(ctx, ['ai_languageModel', 'ai_outputParser']);
  const llmId = `${ctx.id}__llm`;
  const messages =
    isRecord(ctx.params.messages) && Array.isArray(ctx.params.messages.messageValues) ? ctx.params.messages.messageValues : [];
  const system: string[] = [];
  for (const m of messages) {
    if (!isRecord(m)) continue;
    const type = m.type ?? 'SystemMessagePromptTemplate';
    if (type === 'SystemMessagePromptTemplate' && typeof m.message === 'string') system.push(m.message);
    else
      throw new Unsupported(
        `"${String(type)}" prompt messages have no equivalent here`,
        'Fold the message into the prompt or the system message.',
      );
  }
  if (system.some((s) => s.startsWith('=')) && system.length > 1)
    throw new Unsupported('several system messages with expressions', 'Join them into one system message.');
  const schema = ctx.params.hasOutputParser === true ? parserSchema(ctx) : undefined;
  const llm = {
    ...modelConfig(ctx),
    ...systemOf(system.length === 1 ? system[0] : system.join('\n\n'), ctx),
    prompt: promptOf(ctx),
    ...(schema ? { outputSchema: schema } : {}),
  };
  return shaped(ctx, llm, schema ? `{ "text": $nodes.${llmId}.json }` : `{ "text": $nodes.${llmId}.text }`);
}

/** Information Extractor: the attributes (or the JSON example or schema) as the answer's JSON Schema; its answer is `{ output }`. */
export function informationExtractorNode(ctx: MapContext): Mapped {
  otherSubNodes(ctx, ['ai_languageModel']);
  const llmId = `${ctx.id}__llm`;
  const p = ctx.params;
  let schema: Record<string, unknown>;
  const schemaType = p.schemaType ?? 'fromAttributes';
  if (schemaType === 'fromAttributes') {
    const attrs = isRecord(p.attributes) && Array.isArray(p.attributes.attributes) ? p.attributes.attributes.filter(isRecord) : [];
    if (attrs.length === 0) throw new Unsupported('no attributes to extract', 'Add the attributes to extract.');
    const properties: Record<string, unknown> = {};
    const required: string[] = [];
    for (const a of attrs) {
      const name = String(a.name ?? '');
      const type = ['number', 'boolean', 'date'].includes(String(a.type)) ? String(a.type) : 'string';
      properties[name] = {
        type: type === 'date' ? 'string' : type,
        ...(type === 'date' ? { format: 'date' } : {}),
        ...(typeof a.description === 'string' && a.description ? { description: a.description } : {}),
      };
      if (a.required === true) required.push(name);
    }
    schema = { type: 'object', properties, ...(required.length ? { required } : {}) };
  } else {
    const text = schemaType === 'manual' ? p.inputSchema : p.jsonSchemaExample;
    let value: unknown;
    try {
      value = JSON.parse(typeof text === 'string' ? text : '');
    } catch {
      throw new Unsupported('its schema is not valid JSON', 'Fix the JSON example or schema.');
    }
    if (!isRecord(value)) throw new Unsupported('its schema is not a JSON object', 'Give an object example or schema.');
    schema = schemaType === 'manual' ? value : schemaFromExample(value);
  }
  const options = isRecord(p.options) ? p.options : {};
  const system =
    typeof options.systemPromptTemplate === 'string'
      ? options.systemPromptTemplate
      : "You are an expert extraction algorithm. Only extract relevant information from the text. If you do not know the value of an attribute asked to extract, you may omit the attribute's value.";
  const llm = { ...modelConfig(ctx), ...systemOf(system, ctx), prompt: promptOf(ctx), outputSchema: schema };
  return shaped(ctx, llm, `{ "output": $nodes.${llmId}.json }`);
}

/** Text Classifier: the category the model picks sends the input item on to that category's output. */
export function textClassifierNode(ctx: MapContext): Mapped {
  otherSubNodes(ctx, ['ai_languageModel']);
  const p = ctx.params;
  const categories = isRecord(p.categories) && Array.isArray(p.categories.categories) ? p.categories.categories.filter(isRecord) : [];
  if (categories.length === 0) throw new Unsupported('no categories', 'Add the categories to classify into.');
  const options = isRecord(p.options) ? p.options : {};
  if (options.multiClass === true)
    throw new Unsupported(
      '"Allow multiple classes" has no equivalent here (one output per item)',
      'Turn it off, or use an Information Extractor with one boolean per category.',
    );
  const names = categories.map((c) => String(c.category ?? ''));
  const other = options.fallback === 'other';
  const enumValues = other ? [...names, 'other'] : names;
  const list = categories
    .map((c) => `- ${String(c.category)}${typeof c.description === 'string' && c.description ? `: ${c.description}` : ''}`)
    .join('\n');
  const system =
    typeof options.systemPromptTemplate === 'string'
      ? `${options.systemPromptTemplate}\n\nCategories:\n${list}`
      : `Please classify the text provided by the user into one of the following categories:\n${list}${other ? '\n- other: none of the above' : ''}\nAnswer with the category's name in "category".`;
  const inId = `${ctx.id}__in`;
  const llmId = `${ctx.id}__llm`;
  const pickId = `${ctx.id}__item`;
  const llm = {
    ...modelConfig(ctx),
    system,
    prompt: toStringTemplate(p.inputText ?? '', ctx.scope),
    outputSchema: { type: 'object', properties: { category: { type: 'string', enum: enumValues } }, required: ['category'] },
  };
  const handles = enumValues.map((_, i) => `c${i}`);
  const cases = enumValues.map((value, i) => ({ value, handle: handles[i] }));
  if (options.fallback !== 'other' && options.fallback !== 'discard' && options.fallback !== undefined)
    ctx.lossy('unsupportedOption', `fallback "${String(options.fallback)}" is read as "discard".`);
  return {
    nodes: [
      ourNode(ctx, inId, 'transform', { expression: '$' }, 1),
      ourNode(ctx, llmId, 'llm', llm, 2),
      ourNode(ctx, pickId, 'transform', { expression: `$nodes.${inId}` }, 3),
      ourNode(ctx, ctx.id, 'switch', { expression: `$nodes.${llmId}.json.category`, cases }),
    ],
    entry: inId,
    errorSource: llmId,
    regularOutputs: enumValues.length,
    output: (i) => (i < handles.length ? { source: ctx.id, handle: handles[i] } : null),
  };
}
