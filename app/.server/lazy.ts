import { createRequire } from "node:module";

/**
 * A library that loads on first use instead of at start (decision 056): the first call starts
 * the load and every later call shares it. A load that failed is tried again by the next call,
 * so that one bad moment does not break the feature until a restart.
 */
export function onFirstUse<T>(load: () => Promise<T>): () => Promise<T> {
  let loading: Promise<T> | undefined;
  return () =>
    (loading ??= load().catch((error: unknown) => {
      loading = undefined;
      throw error;
    }));
}

const require = createRequire(import.meta.url);

/**
 * The same for a library used by synchronous code: required (its CommonJS build) on first use.
 * A failed require throws to the caller and is tried again next time.
 */
export function requiredOnFirstUse<T>(specifier: string): () => T {
  let loaded: T | undefined;
  return () => (loaded ??= require(specifier) as T);
}
