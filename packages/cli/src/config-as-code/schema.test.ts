import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { loadConfig } from "./load";
import { configJsonSchemaText } from "./schema";

describe("docs/porta-config.schema.json", () => {
  it("is the JSON Schema generated from the zod schema that checks the file (npm run generate:config-schema)", () => {
    const committed = readFileSync(fileURLToPath(new URL("../../../../docs/porta-config.schema.json", import.meta.url)), "utf8");
    expect(committed).toBe(configJsonSchemaText());
  });
});

describe("docs/examples/porta.yaml", () => {
  it("is a valid configuration (the example the documentation shows)", () => {
    const file = fileURLToPath(new URL("../../../../docs/examples/porta.yaml", import.meta.url));
    const loaded = loadConfig(file, { ACME_GOOGLE_SECRET: "from-the-environment" });
    expect(loaded.config.organizations.map((o) => o.slug)).toEqual(["acme"]);
    expect(loaded.secrets.get("ACME_GOOGLE_SECRET")).toBe("from-the-environment");
  });
});
