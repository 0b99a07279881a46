import { z } from 'zod';
import { bootstrapOutcome } from './credentials';
import { isoDate } from './index';
import { workerDoctorSchema } from './workers';
import { importedBundleSchema } from './workflows';

export { conversionReportSchema } from './extflowReport';

const doctor = workerDoctorSchema.shape.doctor;

export const extflowImportResultSchema = z.strictObject({ importResult: importedBundleSchema, doctor });

export const extflowOriginalsResultSchema = z.strictObject({
  importResult: importedBundleSchema.extend({
    relinked: z
      .array(z.strictObject({ workflowId: z.string(), nodeId: z.string(), reference: z.string(), subworkflowId: z.string() }))
      .describe('Subworkflow nodes of the workspace now pointing at an imported original'),
  }),
  doctor,
});

export const extflowBootstrapSchema = z.strictObject({
  bootstrap: z.strictObject({
    aliases: z.number().int().describe('Distinct credential aliases considered'),
    ...bootstrapOutcome,
  }),
  doctor,
});

const outcome = z.enum(['passed', 'attention', 'failed']);

export const extflowSmokeTestSchema = z.strictObject({
  importedWorkflowSmokeTest: z.strictObject({
    status: outcome,
    message: z.string(),
    mode: z.enum(['dryRun', 'queue']),
    useQueue: z.boolean(),
    waitForWorkerMs: z.number().int(),
    queue: z.strictObject({ mode: z.literal('temporal'), queueName: z.string() }),
    persistence: z.strictObject({ durable: z.literal(true), mode: z.literal('postgresql') }),
    counts: z.strictObject({ passed: z.number().int(), attention: z.number().int(), failed: z.number().int() }),
    workflows: z.array(
      z.strictObject({
        externalId: z.string(),
        workflowId: z.string().nullable(),
        name: z.string().nullable(),
        status: outcome,
        runId: z.string().nullable(),
        runStatus: z.string().nullable(),
        message: z.string(),
        pinnedData: z
          .strictObject({
            applied: z.array(z.strictObject({ node: z.string(), as: z.enum(['input', 'output']) })),
            skipped: z.array(z.strictObject({ node: z.string(), reason: z.string() })),
          })
          .describe('The stored pinned data of the workflow: used by dry runs, skipped by live runs'),
      }),
    ),
    checkedAt: isoDate,
    durationMs: z.number().int(),
  }),
});
