/**
 * "Respond when last node finishes" (a Webhook's or Chat Trigger's `responseMode: lastNode`): the
 * external tool answers the caller with the first item of the node that ran last. Where one node
 * ends every path from the trigger, that is the node: the export is given a Respond to Webhook
 * node after it (respond with the first incoming item, execute once; the trigger's response code
 * and headers moved onto it) and the trigger is switched to "using a response node", so the
 * converter maps both the usual way. Where several nodes end the workflow, or the trigger answers
 * all items, binary data or one property, the export is left as it is and the converter names
 * the option it does not map. A pure rewrite of the export (a copy); the input is not changed.
 */
import { isRecord } from './nodes/context';
import type { ExtNode, ExtWorkflow } from './types';

/** Trigger types whose `lastNode` answer is added this way (both keep their response options in `options`). */
const REPLYING_TRIGGERS = new Set(['n8n-nodes-base.webhook', '@n8n/n8n-nodes-langchain.chatTrigger']);

/** Where the Chat Trigger keeps its response mode (in its options) and the Webhook (a parameter). */
function responseModeOf(n: ExtNode): unknown {
  const options = isRecord(n.parameters?.options) ? n.parameters.options : {};
  return n.type.endsWith('chatTrigger') ? (options.responseMode ?? 'lastNode') : n.parameters?.responseMode;
}

/** Names of the nodes `name` connects to by main connections. */
function mainTargets(wf: ExtWorkflow, name: string): string[] {
  const main = wf.connections[name]?.main;
  if (!Array.isArray(main)) return [];
  return main
    .flatMap((targets) => (Array.isArray(targets) ? targets : []))
    .flatMap((t) => (isRecord(t) && typeof t.node === 'string' ? [t.node] : []));
}

/** The nodes a trigger reaches that connect to nothing (the trigger itself when it connects to nothing). */
function endsOf(wf: ExtWorkflow, trigger: string): string[] {
  const known = new Set(wf.nodes.map((n) => n.name));
  const seen = new Set<string>([trigger]);
  const queue = [trigger];
  const ends: string[] = [];
  while (queue.length > 0) {
    const name = queue.shift();
    if (name === undefined) break;
    const next = mainTargets(wf, name).filter((t) => known.has(t));
    if (next.length === 0) ends.push(name);
    for (const t of next) if (!seen.has(t) && seen.add(t)) queue.push(t);
  }
  return ends;
}

/** A node name not used in the workflow, from `base`. */
function freeName(wf: ExtWorkflow, base: string): string {
  const used = new Set(wf.nodes.map((n) => n.name));
  let name = base;
  for (let k = 2; used.has(name); k++) name = `${base} ${k}`;
  return name;
}

/** The export with a reply node for each trigger answering with the last node's first item; the same object when there is none. */
export function withLastNodeReply(wf: ExtWorkflow): {
  workflow: ExtWorkflow;
  added: Array<{ trigger: string; reply: string; after: string }>;
} {
  const added: Array<{ trigger: string; reply: string; after: string }> = [];
  let out = wf;
  for (const trigger of wf.nodes) {
    if (!REPLYING_TRIGGERS.has(trigger.type) || responseModeOf(trigger) !== 'lastNode') continue;
    const options = isRecord(trigger.parameters?.options) ? trigger.parameters.options : {};
    const data = options.responseData ?? 'firstEntryJson';
    if ((data !== 'firstEntryJson' && data !== 'noData') || options.responsePropertyName !== undefined) continue;
    const ends = endsOf(out, trigger.name);
    const after = ends.at(0);
    if (ends.length !== 1 || after === undefined) continue;
    const reply = freeName(out, `${trigger.name} (reply)`);
    const { responseCode, responseHeaders, responseData: _data, responseMode: _mode, ...keptOptions } = options;
    const replyOptions = {
      ...(responseCode !== undefined ? { responseCode } : {}),
      ...(responseHeaders !== undefined ? { responseHeaders } : {}),
    };
    const switched: ExtNode = trigger.type.endsWith('chatTrigger')
      ? { ...trigger, parameters: { ...trigger.parameters, options: { ...keptOptions, responseMode: 'responseNode' } } }
      : { ...trigger, parameters: { ...trigger.parameters, responseMode: 'responseNode', options: keptOptions } };
    const replyNode: ExtNode = {
      name: reply,
      type: 'n8n-nodes-base.respondToWebhook',
      typeVersion: 1.1,
      // The tool answers with the first item (or nothing): execute once takes it from a list.
      executeOnce: true,
      parameters: { respondWith: data === 'noData' ? 'noData' : 'firstIncomingItem', options: replyOptions },
      ...(trigger.position ? { position: [trigger.position[0], trigger.position[1] + 200] as [number, number] } : {}),
    };
    const previous = out.connections[after] ?? {};
    out = {
      ...out,
      nodes: [...out.nodes.map((n) => (n.name === trigger.name ? switched : n)), replyNode],
      connections: { ...out.connections, [after]: { ...previous, main: [[{ node: reply, type: 'main', index: 0 }]] } },
    };
    added.push({ trigger: trigger.name, reply, after });
  }
  return { workflow: out, added };
}
