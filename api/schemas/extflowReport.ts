import { z } from 'zod';

/** The conversion report of an external-tool import (`importReadiness.conversion`). */
export const conversionReportSchema = z
  .strictObject({
    source: z.literal('extflow'),
    sourceWorkflowId: z.string().nullable().describe("The workflow's id in the external tool"),
    externalId: z.string().describe('`extflow-<id>`: what bundles upsert by and subworkflow nodes reference'),
    ready: z
      .boolean()
      .describe(
        'Every node converted exactly, the graph validates, every sub-workflow is linked, every credential exists and nothing is in readinessIssues',
      ),
    nodeCount: z.number().int(),
    mappedNodes: z.number().int(),
    translatedExpressions: z.number().int(),
    unsupported: z
      .array(z.strictObject({ node: z.string(), nodeType: z.string(), reason: z.string(), action: z.string().describe('What to do') }))
      .describe('Never dropped: each stays in the graph as an `extflow:<type>` placeholder until replaced'),
    readinessIssues: z
      .array(
        z.strictObject({
          node: z.string(),
          kind: z.enum(['missingCredential', 'unsupportedOption', 'lossyConversion']),
          message: z.string(),
        }),
      )
      .describe(
        'What keeps the workflow from being ready besides unsupported nodes: a missing credential, an option not carried over, a conversion that is not exact. Each is a blocker; deploy does not refuse the graph for them',
      ),
    warnings: z.array(z.strictObject({ node: z.string(), message: z.string() })),
    credentials: z.array(
      z.strictObject({ alias: z.string(), extflowType: z.string(), type: z.string().nullable(), nodes: z.array(z.string()) }),
    ),
    subworkflows: z.array(z.strictObject({ node: z.string(), reference: z.string() })),
    pinnedData: z
      .array(z.strictObject({ node: z.string(), nodeId: z.string(), items: z.number().int() }))
      .describe(
        "Nodes with pinned data: the extflow smoke test's dry runs use it (a trigger's as the input); live runs execute every node",
      ),
  })
  .meta({ id: 'ExtflowConversionReport' });
