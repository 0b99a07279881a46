/**
 * The research area: runs and their status moves (runs.ts), fetching sources with robots.txt
 * and the outbound guard (fetching.ts), and the synthesis into the knowledge base (synthesis.ts).
 */
export * from './runs';
export * from './fetching';
export * from './synthesis';
