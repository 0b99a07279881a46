/**
 * The bare-Temporal counterpart of the service's webhook route for the `webhooks` scenario: a
 * plain `node:http` server (no Koa, no database, no auth, no outbox) that starts one
 * `baselineWebhook` workflow per POST with `client.workflow.start` and answers 202 once the
 * start has returned, so an accepted request is as durable as Temporal makes it.
 */
import http from 'node:http';
import type { Client } from '@temporalio/client';
import { listenOnLoopback } from '../../lib/loopback';
import { BASELINE_TASK_QUEUE } from './worker';

export const BASELINE_WEBHOOK_WORKFLOW = 'baselineWebhook';

export interface BareWebhookServer {
  url: string;
  /** Requests answered 202 so far (the server's own count: autocannon misses those in flight when a run stops). */
  accepted(): number;
  /** Requests whose start failed (answered 500). */
  failed(): number;
  close(): Promise<void>;
}

/** Starts the server on 127.0.0.1; workflow ids are `<idPrefix>-<n>`. */
export async function startBareWebhookServer(client: Client, idPrefix: string): Promise<BareWebhookServer> {
  let next = 0;
  let accepted = 0;
  let failed = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST') {
        res.writeHead(405).end();
        return;
      }
      let body: unknown;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        res.writeHead(400).end();
        return;
      }
      const workflowId = `${idPrefix}-${++next}`;
      client.workflow.start(BASELINE_WEBHOOK_WORKFLOW, { taskQueue: BASELINE_TASK_QUEUE, workflowId, args: [body] }).then(
        () => {
          accepted++;
          res.writeHead(202, { 'content-type': 'application/json' }).end(JSON.stringify({ accepted: true, workflowId }));
        },
        () => {
          failed++;
          res.writeHead(500).end();
        },
      );
    });
  });
  server.keepAliveTimeout = 60_000;
  const listening = await listenOnLoopback(server);
  return { url: `${listening.url}/hook`, accepted: () => accepted, failed: () => failed, close: listening.close };
}
