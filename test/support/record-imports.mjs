// Preloaded with `node --import` by tests that must know which modules a process loads: every
// resolved ESM URL is appended to the file named by RECORD_IMPORTS_FILE (by the hooks below,
// which Node runs on its loader thread).
import { register } from "node:module";

register(new URL("./record-imports-hooks.mjs", import.meta.url), { data: { file: process.env.RECORD_IMPORTS_FILE } });
