import { describe, expect, it } from "vitest";
import type { Db } from "../../context";
import { AppError } from "../../errors";
import { requireWithinOrganization } from "./organization-scope";

const ORG = "11111111-1111-4111-8111-111111111111";
const OTHER = "22222222-2222-4222-8222-222222222222";

/** A database that knows one user of each organization. */
const db = {
  user: {
    findUnique: ({ where }: { where: { id: string } }) => Promise.resolve(where.id === "mine" ? { organizationId: ORG } : where.id === "theirs" ? { organizationId: OTHER } : null),
  },
} as unknown as Db;

async function outcome(work: Promise<void>): Promise<number | "ok"> {
  try {
    await work;
    return "ok";
  } catch (error) {
    if (error instanceof AppError) return error.status;
    throw error;
  }
}

/** A caller bound to one organization reaches only its targets; anything else is "not found". */
describe("requireWithinOrganization", () => {
  it("admits the organization's own path id and refuses another's", async () => {
    const scopes = [{ in: "path", param: "orgId" }] as const;
    expect(await outcome(requireWithinOrganization(db, ORG, scopes, { params: { orgId: ORG }, query: {}, body: undefined }))).toBe("ok");
    expect(await outcome(requireWithinOrganization(db, ORG, scopes, { params: { orgId: OTHER }, query: {}, body: undefined }))).toBe(404);
  });

  it("fills a left-out query or body field with the organization, so a list never spans organizations", async () => {
    const query: Record<string, unknown> = { limit: 10 };
    await requireWithinOrganization(db, ORG, [{ in: "query", field: "organizationId" }], { params: {}, query, body: undefined });
    expect(query.organizationId).toBe(ORG);
    expect(await outcome(requireWithinOrganization(db, ORG, [{ in: "body", field: "organizationId" }], { params: {}, query: {}, body: { organizationId: OTHER } }))).toBe(404);
    expect(await outcome(requireWithinOrganization(db, ORG, [{ in: "body", field: "organizationId" }], { params: {}, query: {}, body: undefined }))).toBe(404);
  });

  it("looks up a named row's organization: another organization's row and a missing one are the same 404", async () => {
    const scopes = [{ in: "entity", param: "id", owner: "user" }] as const;
    expect(await outcome(requireWithinOrganization(db, ORG, scopes, { params: { id: "mine" }, query: {}, body: undefined }))).toBe("ok");
    expect(await outcome(requireWithinOrganization(db, ORG, scopes, { params: { id: "theirs" }, query: {}, body: undefined }))).toBe(404);
    expect(await outcome(requireWithinOrganization(db, ORG, scopes, { params: { id: "nobody" }, query: {}, body: undefined }))).toBe(404);
  });

  it("refuses an operation that declares no scope", async () => {
    expect(await outcome(requireWithinOrganization(db, ORG, [], { params: { orgId: ORG }, query: {}, body: undefined }))).toBe(404);
  });
});
