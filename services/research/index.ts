/**
 * The research area: runs and their status moves (runs.ts), fetching sources with robots.txt
 * and the outbound guard (fetching.ts), the web search of runs without source URLs (search.ts), and the synthesis into the knowledge base (synthesis.ts).
 */
export {
  cancelResearchRun,
  type CreatedResearch,
  type CreateResearchInput,
  type ResearchCreateDeps,
  createResearchRun,
  getResearchRun,
  limitsWithDefaults,
  listResearchRuns,
  markResearchCanceled,
  markResearchFailed,
  markResearchRunning,
  MAX_SOURCE_URLS,
  RESEARCH_LIMIT_BOUNDS,
  RESEARCH_LIST_LIMIT,
  RESEARCH_MESSAGES,
  researchRunId,
  type ResearchRunRef,
  type ResearchRunView,
  type ResearchSourceView,
} from './runs';
export {
  extractPage,
  type FetchDeps,
  fetchResearchSource,
  type FetchSourceInput,
  type FetchSourceResult,
  hostnameOf,
  normalizeResearchUrl,
  recordSkippedSource,
  RESEARCH_USER_AGENT,
} from './fetching';
export {
  searchForResearchRun,
  WEB_SEARCH_SETTING,
  webSearch,
  type WebSearchDeps,
  WebSearchError,
  type WebSearchOutcome,
  type WebSearchResult,
} from './search';
export {
  RESEARCH_KNOWLEDGE_BASE,
  researchDocumentId,
  type SearchSummary,
  type SynthesisDeps,
  type SynthesisOutcome,
  synthesizeResearch,
} from './synthesis';
