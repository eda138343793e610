// Tests run the production server build; NODE_ENV=test selects it and keeps Vite out.
process.env.NODE_ENV = "test";
import { afterEach } from "vitest";
import { assertNoUnexpectedErrors, forgetEarlierCaptures } from "./logs";

// Runs before each test file; files share a worker (vitest.config.ts), a capture belongs to one file.
forgetEarlierCaptures();
// An error-level log line that no test declared fails the test it was written in (logs.ts).
afterEach(() => assertNoUnexpectedErrors("test"));
