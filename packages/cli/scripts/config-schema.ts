/**
 * Writes docs/porta-config.schema.json, the JSON Schema of `porta apply`'s file, from the zod
 * schema that checks the file (`npm run generate:config-schema`); schema.test.ts holds the
 * committed file to what this writes.
 */
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { configJsonSchemaText } from "../src/config-as-code/schema";

const target = fileURLToPath(new URL("../../../docs/porta-config.schema.json", import.meta.url));
writeFileSync(target, configJsonSchemaText());
process.stdout.write(`wrote ${target}\n`);
