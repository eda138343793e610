#!/usr/bin/env node
// The CLI is TypeScript run through tsx, like the server: no build step between a change and `npx porta`.
// Its tsconfig maps @porta/admin-client to the library's source inside the repository.
import { fileURLToPath } from "node:url";
import { register } from "tsx/esm/api";

register({ tsconfig: fileURLToPath(new URL("../tsconfig.json", import.meta.url)) });
const { main } = await import("../src/main.ts");
process.exitCode = await main(process.argv.slice(2));
