#!/usr/bin/env node
// The CLI is TypeScript run through tsx, like the server; no build step between a change and `npx porta`.
import { register } from "tsx/esm/api";

register();
const { main } = await import("../src/main.ts");
process.exitCode = await main(process.argv.slice(2));
