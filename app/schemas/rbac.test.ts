import { describe, expect, it } from "vitest";
import { RbacNameSchema, RoleNameSchema } from "./rbac";

describe("role and permission names", () => {
  it("lets a role's name hold single spaces between words, as directory groups do, and a permission's none", () => {
    for (const name of ["Sales Team", "Team-1 EU", "editor", "a.b:c_d"]) expect(RoleNameSchema.parse(name)).toBe(name);
    expect(RoleNameSchema.parse("  Sales Team  ")).toBe("Sales Team");
    for (const name of ["Sales  Team", "-sales", "Sales/Team", "Sales\tTeam", "Sales\u00a0Team", "", "x".repeat(101), "a\u0000b"]) {
      expect(RoleNameSchema.safeParse(name).success, JSON.stringify(name)).toBe(false);
    }
    // A permission is also a scope: a space would split it in two.
    expect(RbacNameSchema.safeParse("read all").success).toBe(false);
    expect(RbacNameSchema.parse("read:all")).toBe("read:all");
  });
});
