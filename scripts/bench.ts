/**
 * `npm run bench -- <scenario>`: loopback-only benchmarks. The scenarios (steps, webhooks,
 * throughput) arrive with the workflow engine and webhook issues; until then this says so
 * instead of pretending to measure.
 */
const SCENARIOS: Record<string, () => Promise<void>> = {};

async function main(): Promise<void> {
  const scenario = process.argv[2];
  const run = scenario ? SCENARIOS[scenario] : undefined;
  if (!run) {
    const known = Object.keys(SCENARIOS);
    console.error(`usage: npm run bench -- <scenario>\nscenarios: ${known.length > 0 ? known.join(', ') : 'none yet'}`);
    process.exit(2);
  }
  await run();
}

void main();
