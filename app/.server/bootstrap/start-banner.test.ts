import { describe, expect, it } from "vitest";
import { startBanner } from "./start-banner";

describe("the start banner", () => {
  it("names the console and says the printed administrator signs in there", () => {
    const banner = startBanner("http://localhost:3000", "printed");
    expect(banner).toContain("Porta is running at http://localhost:3000  (health: http://localhost:3000/health)");
    expect(banner).toContain("Console: http://localhost:3000/console  (sign in as the administrator printed above)");
  });

  it("on a later start, says where the administrator's credentials came from", () => {
    expect(startBanner("https://id.example.com", "earlier")).toContain("Console: https://id.example.com/console  (sign in as the administrator printed at the first start)");
    expect(startBanner("https://id.example.com", "environment")).toContain("ADMIN_BOOTSTRAP_PASSWORD");
  });
});
