// Types of build-if-changed.mjs for the TypeScript that imports it (its test).
export declare const HASH_FILE: string;
export declare const BUILD_LOG: string;
export declare const OUTPUTS: string[];
export declare function sourceHash(root: string): string;
export declare class BuildError extends Error {
  constructor(message: string, logTail: string);
  readonly logTail: string;
}
export type Command = [string, ...string[]];
export interface BuildOptions {
  root: string;
  /** Compiles the server; `node scripts/compile.mjs server` unless a test gives another. */
  server?: Command;
  /** Builds the pages; `remix vite:build` unless a test gives another. */
  pages?: Command;
  /** The files a build leaves; no build without all of them counts as current. */
  outputs?: string[];
}
export interface PendingBuild {
  buildServer(): Promise<void>;
  buildPages(): Promise<void>;
}
export declare function pendingBuild(options: BuildOptions): PendingBuild | null;
