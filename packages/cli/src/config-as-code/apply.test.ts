import { describe, expect, it } from "vitest";
import { orderedChanges } from "./apply";
import type { Change } from "./plan";

const change = (action: Change["action"], kind: Change["kind"], key: string): Change => ({ action, kind, key, organization: "acme", fields: [] }) as Change;

describe("orderedChanges", () => {
  const plan = {
    changes: [change("create", "client", "Web"), change("create", "role", "Viewer"), change("create", "application", "Portal"), change("create", "permission", "read"), change("update", "organization", "acme")],
    prunable: [change("delete", "permission", "old"), change("delete", "application", "Legacy"), change("delete", "client", "Old"), change("delete", "webhook", "https://h.example")],
    warnings: [],
    problems: [],
  };

  it("writes what others refer to first: the organization, permissions before roles, applications before clients", () => {
    expect(orderedChanges({ slug: "acme", state: undefined, plan }, false).map((c) => `${c.action} ${c.kind}`)).toEqual([
      "update organization",
      "create permission",
      "create role",
      "create application",
      "create client",
    ]);
  });

  it("deletes only with prune, after every other change, dependents first (an application's clients before it)", () => {
    expect(
      orderedChanges({ slug: "acme", state: undefined, plan }, true)
        .slice(5)
        .map((c) => `${c.action} ${c.kind}`),
    ).toEqual(["delete webhook", "delete client", "delete application", "delete permission"]);
  });
});
