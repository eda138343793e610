// Tests run the production server build; NODE_ENV=test selects it and keeps Vite out.
process.env.NODE_ENV = "test";
import { afterEach } from "vitest";
import { assertNoUnexpectedErrors } from "./logs";

// An error-level log line that no test declared fails the test it was written in (logs.ts).
afterEach(() => assertNoUnexpectedErrors("test"));
