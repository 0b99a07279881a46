/**
 * Heavy packages (the model client, HTML parsers, the MCP SDK, mail, S3 and git clients) are
 * loaded where they are first used, not when the module that uses them is imported: the API and
 * the worker import every area at start-up, and most processes never send mail, parse a page
 * or call a model. Loading them up front cost every process (and every test file, which gets a
 * fresh module registry) their load time and memory (issue 28 point 5, issue 30 point 5).
 *
 * The packages this applies to are listed in lazyPackages.json (beside this file): eslint.config.js
 * refuses a static import of them (`import type` is fine) and test/unit/main/lazyPackages.test.ts
 * checks that loading the API and the worker loads none of them.
 */

/**
 * A loader that runs `load` (a dynamic `import()`) once, on the first call, and answers the same
 * promise afterwards. A failed load is not kept: the next call tries again.
 *
 * Caveat: never in workflow code (temporal/workflows and the engine code bundled into it), which
 * must stay deterministic and has no module loader at run time.
 */
export function lazyModule<T>(load: () => Promise<T>): () => Promise<T> {
  let loading: Promise<T> | undefined;
  return () => {
    loading ??= load().catch((err: unknown) => {
      loading = undefined;
      throw err;
    });
    return loading;
  };
}
