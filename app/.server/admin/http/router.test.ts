import { describe, expect, it } from "vitest";
import { createRouter } from "./router";
import type { Operation } from "./route";

const op = (method: Operation["method"], path: string) => ({ method, path, operationId: `${method} ${path}` }) as Operation;

describe("the Admin API router", () => {
  const router = createRouter([
    op("GET", "/organizations"),
    op("POST", "/organizations"),
    op("GET", "/organizations/{id}"),
    op("PUT", "/organizations/{id}"),
    op("GET", "/organizations/validate-slug"),
    op("POST", "/organizations/{orgId}/users/invite"),
    op("GET", "/organizations/{orgId}/users/{userId}"),
  ]);

  it("finds the operation by method and path, with decoded parameters", () => {
    expect(router.match("GET", ["organizations", "a b"])).toMatchObject({ kind: "found", op: { operationId: "GET /organizations/{id}" }, params: { id: "a b" } });
    expect(router.match("post", ["organizations"])).toMatchObject({ kind: "found", op: { operationId: "POST /organizations" } });
  });

  it("prefers a literal segment to a parameter, position by position", () => {
    expect(router.match("GET", ["organizations", "validate-slug"])).toMatchObject({ op: { path: "/organizations/validate-slug" } });
    expect(router.match("POST", ["organizations", "o1", "users", "invite"])).toMatchObject({ op: { path: "/organizations/{orgId}/users/invite" }, params: { orgId: "o1" } });
    expect(router.match("GET", ["organizations", "o1", "users", "u1"])).toMatchObject({ params: { orgId: "o1", userId: "u1" } });
  });

  it("answers method_not_allowed with the methods the path has, and not_found otherwise", () => {
    expect(router.match("DELETE", ["organizations"])).toEqual({ kind: "method_not_allowed", allow: ["GET", "POST"] });
    expect(router.match("GET", ["nothing"])).toEqual({ kind: "not_found" });
    expect(router.match("GET", ["organizations", ""])).toEqual({ kind: "not_found" });
    expect(router.match("GET", ["organizations", "x", "y"])).toEqual({ kind: "not_found" });
  });

  it("refuses a table where two operations serve the same method and path", () => {
    expect(() => createRouter([op("GET", "/a/{x}"), op("GET", "/a/{x}")])).toThrow(/two operations serve GET/);
  });
});
