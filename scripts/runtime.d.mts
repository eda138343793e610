// Types of runtime.mjs for the TypeScript that imports it (the tests' global setup).
export declare const REQUIRED_MAJOR: number;
export declare function runtimeProblem(version?: string, execPath?: string): string | undefined;
export declare function requireSupportedRuntime(): void;
