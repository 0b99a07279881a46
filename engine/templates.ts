/**
 * Built-in workflow templates offered when creating a workflow. Each one passes
 * validateGraph (a unit test enforces it).
 */
import type { GraphEdge, GraphNode } from './types';

export interface WorkflowTemplate {
  key: string;
  name: string;
  description: string;
  nodes: GraphNode[];
  edges: GraphEdge[];
}

const at = (x: number, y: number) => ({ x, y });

export const TEMPLATES: readonly WorkflowTemplate[] = [
  {
    key: 'blank-start',
    name: 'Blank workflow',
    description: 'A manual start trigger and nothing else: build your own flow from here.',
    nodes: [{ id: 'start', type: 'start', name: 'Start', config: {}, position: at(0, 0) }],
    edges: [],
  },
  {
    key: 'webhook-echo',
    name: 'Webhook echo',
    description: 'Receives a webhook call and answers it with what it received.',
    nodes: [
      { id: 'webhook', type: 'webhook', name: 'Webhook', config: { method: 'POST' }, position: at(0, 0) },
      { id: 'shape', type: 'transform', name: 'Build reply', config: { expression: '{ "received": $ }' }, position: at(250, 0) },
      {
        id: 'reply',
        type: 'response',
        name: 'Reply',
        config: { status: 200, headers: { 'content-type': 'application/json' }, body: '=$' },
        position: at(500, 0),
      },
    ],
    edges: [
      { id: 'webhook-shape', source: 'webhook', target: 'shape' },
      { id: 'shape-reply', source: 'shape', target: 'reply' },
    ],
  },
  {
    key: 'http-fetch',
    name: 'Fetch a URL',
    description: 'Starts with a URL as input, fetches it with GET and keeps the response body.',
    nodes: [
      {
        id: 'start',
        type: 'start',
        name: 'Start',
        config: { inputSchema: { type: 'object', properties: { url: { type: 'string', format: 'uri' } }, required: ['url'] } },
        position: at(0, 0),
      },
      {
        id: 'fetch',
        type: 'http',
        name: 'Fetch',
        config: { method: 'GET', url: '=$trigger.url', headers: { accept: 'application/json' } },
        retry: { maxAttempts: 3, backoffSeconds: 2 },
        position: at(250, 0),
      },
      { id: 'body', type: 'transform', name: 'Pick body', config: { expression: 'body' }, position: at(500, 0) },
    ],
    edges: [
      { id: 'start-fetch', source: 'start', target: 'fetch' },
      { id: 'fetch-body', source: 'fetch', target: 'body' },
    ],
  },
  {
    key: 'approval-flow',
    name: 'Approval',
    description: 'Asks a person to approve the request, then logs the decision on either branch.',
    nodes: [
      { id: 'start', type: 'start', name: 'Start', config: {}, position: at(0, 0) },
      {
        id: 'approval',
        type: 'approval',
        name: 'Approve request',
        config: { prompt: 'Approve this request?', timeoutSeconds: 86_400 },
        position: at(250, 0),
      },
      {
        id: 'log-approved',
        type: 'log',
        name: 'Approved',
        config: { level: 'info', message: '="Approved by " & (decidedBy ? decidedBy : "someone")' },
        position: at(500, -100),
      },
      {
        id: 'log-rejected',
        type: 'log',
        name: 'Rejected',
        config: { level: 'warn', message: 'The request was rejected' },
        position: at(500, 100),
      },
    ],
    edges: [
      { id: 'start-approval', source: 'start', target: 'approval' },
      { id: 'approval-approved', source: 'approval', target: 'log-approved', sourceHandle: 'approved' },
      { id: 'approval-rejected', source: 'approval', target: 'log-rejected', sourceHandle: 'rejected' },
    ],
  },
  {
    key: 'scheduled-report',
    name: 'Scheduled report',
    description: 'Every weekday at 09:00 UTC, fetches a report and logs its status.',
    nodes: [
      { id: 'schedule', type: 'schedule', name: 'Weekdays 09:00', config: { cron: '0 9 * * 1-5', timezone: 'UTC' }, position: at(0, 0) },
      {
        id: 'fetch-report',
        type: 'http',
        name: 'Fetch report',
        config: { method: 'GET', url: 'https://example.com/report.json', timeoutMs: 30_000 },
        retry: { maxAttempts: 3, backoffSeconds: 30 },
        position: at(250, 0),
      },
      {
        id: 'log-report',
        type: 'log',
        name: 'Log status',
        config: { level: 'info', message: '="Report fetched with status " & $string(status)' },
        position: at(500, 0),
      },
    ],
    edges: [
      { id: 'schedule-fetch', source: 'schedule', target: 'fetch-report' },
      { id: 'fetch-log', source: 'fetch-report', target: 'log-report' },
    ],
  },
];

/** The template with this key as a fresh deep copy (safe to edit), or null. */
export function findTemplate(key: string): WorkflowTemplate | null {
  const template = TEMPLATES.find((t) => t.key === key);
  return template ? (JSON.parse(JSON.stringify(template)) as WorkflowTemplate) : null;
}
