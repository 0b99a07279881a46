/** The node families the converter maps, by the external tool's node type. */
import { agentNode, chainLlmNode, informationExtractorNode, textClassifierNode } from './ai';
import { filterNode, ifNode, switchNode } from './branching';
import { codeNode } from './code';
import type { Mapper } from './context';
import { noOp, splitInBatches, stopAndError } from './control';
import { httpRequest } from './http';
import { aggregate, itemLists, limit, removeDuplicates, renameKeys, sort, splitOut, summarize } from './items';
import { mergeNode } from './merge';
import { respondToWebhook } from './respond';
import { setNode } from './set';
import { executeWorkflow } from './subworkflow';
import { chatTrigger, cronTrigger, manualTrigger, scheduleTrigger, webhook } from './triggers';
import { waitNode } from './wait';

const BASE = 'n8n-nodes-base.';
const LC = '@n8n/n8n-nodes-langchain.';

export const MAPPERS: Readonly<Record<string, Mapper>> = {
  [`${BASE}manualTrigger`]: manualTrigger,
  [`${BASE}start`]: manualTrigger,
  [`${BASE}executeWorkflowTrigger`]: manualTrigger,
  [`${BASE}webhook`]: webhook,
  [`${BASE}scheduleTrigger`]: scheduleTrigger,
  [`${BASE}cron`]: cronTrigger,
  [`${BASE}if`]: ifNode,
  [`${BASE}filter`]: filterNode,
  [`${BASE}switch`]: switchNode,
  [`${BASE}set`]: setNode,
  [`${BASE}code`]: codeNode,
  [`${BASE}function`]: codeNode,
  [`${BASE}functionItem`]: codeNode,
  [`${BASE}httpRequest`]: httpRequest,
  [`${BASE}wait`]: waitNode,
  [`${BASE}respondToWebhook`]: respondToWebhook,
  [`${BASE}merge`]: mergeNode,
  [`${BASE}executeWorkflow`]: executeWorkflow,
  [`${BASE}noOp`]: noOp,
  [`${BASE}stopAndError`]: stopAndError,
  [`${BASE}splitInBatches`]: splitInBatches,
  [`${BASE}splitOut`]: splitOut,
  [`${BASE}aggregate`]: aggregate,
  [`${BASE}summarize`]: summarize,
  [`${BASE}sort`]: sort,
  [`${BASE}limit`]: limit,
  [`${BASE}removeDuplicates`]: removeDuplicates,
  [`${BASE}renameKeys`]: renameKeys,
  [`${BASE}itemLists`]: itemLists,
  [`${LC}chatTrigger`]: chatTrigger,
  [`${LC}agent`]: agentNode,
  [`${LC}chainLlm`]: chainLlmNode,
  [`${LC}textClassifier`]: textClassifierNode,
  [`${LC}informationExtractor`]: informationExtractorNode,
};

/** Node types that only annotate the canvas: skipped, and said so in the warnings. */
export const ANNOTATION_TYPES = new Set([`${BASE}stickyNote`]);

/** Trigger node types (no incoming connections). */
export const TRIGGER_EXT_TYPES = new Set([
  `${BASE}manualTrigger`,
  `${BASE}start`,
  `${BASE}executeWorkflowTrigger`,
  `${BASE}webhook`,
  `${BASE}scheduleTrigger`,
  `${BASE}cron`,
  `${LC}chatTrigger`,
]);
