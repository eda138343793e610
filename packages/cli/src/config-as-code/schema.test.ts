import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { configJsonSchemaText } from "./schema";

describe("docs/porta-config.schema.json", () => {
  it("is the JSON Schema generated from the zod schema that checks the file (npm run generate:config-schema)", () => {
    const committed = readFileSync(fileURLToPath(new URL("../../../../docs/porta-config.schema.json", import.meta.url)), "utf8");
    expect(committed).toBe(configJsonSchemaText());
  });
});
