import { describe, expect, it } from "vitest";
import { routeLabel } from "./route-label";

describe("routeLabel", () => {
  it("names an organization's endpoints and pages by template, never by slug or id", () => {
    expect(routeLabel("/acme/auth/token")).toBe("/{slug}/auth/token");
    expect(routeLabel("/acme/auth/authorize?client_id=x")).toBe("/{slug}/auth/authorize");
    expect(routeLabel("/acme/.well-known/openid-configuration")).toBe("/{slug}/.well-known/openid-configuration");
    expect(routeLabel("/acme/.well-known/jwks")).toBe("/{slug}/.well-known/jwks");
    expect(routeLabel("/acme/token/introspection")).toBe("/{slug}/token/introspection");
    expect(routeLabel("/acme/account")).toBe("/{slug}/account");
    expect(routeLabel("/acme/account/two-factor")).toBe("/{slug}/account/*");
    expect(routeLabel("/acme")).toBe("/{slug}");
    expect(routeLabel("/acme/.well-known/oauth-authorization-server")).toBe("/{slug}/.well-known/oauth-authorization-server");
    expect(routeLabel("/.well-known/oauth-authorization-server/acme")).toBe("/.well-known/oauth-authorization-server/{slug}");
    expect(routeLabel("/.well-known/oauth-authorization-server/acme?x=1")).toBe("/.well-known/oauth-authorization-server/{slug}");
    expect(routeLabel("/.well-known/oauth-authorization-server/acme/more")).toBe("other");
  });

  it("folds the rest into a few fixed values", () => {
    expect(routeLabel("/interaction/abc123/login")).toBe("/interaction/*");
    expect(routeLabel("/api/admin/organizations/0b6f/users")).toBe("/api/admin/*");
    expect(routeLabel("/console/users/42")).toBe("/console/*");
    expect(routeLabel("/health/ready")).toBe("/health/ready");
    expect(routeLabel("/assets/entry-abc.js")).toBe("/assets/*");
    expect(routeLabel("/acme/whatever/%00/..")).toBe("other");
    expect(routeLabel("/")).toBe("/");
    expect(routeLabel(undefined)).toBe("/");
  });
});
