import { describe, expect, it } from "vitest";
import { decideRetry, MAIL_RETRY_SCHEDULE_SECONDS } from "./schedule";

const now = new Date("2026-11-24T10:00:00Z");
const minutes = (n: number) => new Date(now.getTime() + n * 60_000);

describe("mail retry schedule", () => {
  it("retries within minutes first, then hours apart, for about a day in all", () => {
    const waits = MAIL_RETRY_SCHEDULE_SECONDS;
    expect(waits[0]).toBeLessThanOrEqual(60);
    for (let i = 1; i < waits.length; i++) expect(waits[i]).toBeGreaterThanOrEqual(waits[i - 1]!);
    expect(waits.slice(0, 5).every((s) => s <= 15 * 60)).toBe(true);
    expect(waits.at(-1)).toBeGreaterThanOrEqual(4 * 3600);
    const total = waits.reduce((sum, s) => sum + s, 0);
    expect(total).toBeGreaterThanOrEqual(20 * 3600);
    expect(total).toBeLessThanOrEqual(28 * 3600);
  });

  it("the n-th failure waits the n-th interval", () => {
    expect(decideRetry([60, 300], 1, null, now)).toEqual({ action: "retry", at: minutes(1) });
    expect(decideRetry([60, 300], 2, null, now)).toEqual({ action: "retry", at: minutes(5) });
  });

  it("gives up (dead letter) after the last interval", () => {
    expect(decideRetry([60, 300], 3, null, now)).toEqual({ action: "give_up" });
    expect(decideRetry(MAIL_RETRY_SCHEDULE_SECONDS, MAIL_RETRY_SCHEDULE_SECONDS.length + 1, null, now)).toEqual({ action: "give_up" });
  });

  it("never schedules a retry at or after the expiry of the link the mail carries", () => {
    expect(decideRetry([60, 300], 2, minutes(4), now)).toEqual({ action: "expire" });
    expect(decideRetry([60, 300], 2, minutes(5), now)).toEqual({ action: "expire" });
    expect(decideRetry([60, 300], 2, minutes(6), now)).toEqual({ action: "retry", at: minutes(5) });
    // A 15-minute magic link sent at the first attempt: the retries stop inside its lifetime.
    let t = now;
    const deadline = minutes(15);
    const attempts: Date[] = [t];
    for (let failed = 1; ; failed++) {
      const next = decideRetry(MAIL_RETRY_SCHEDULE_SECONDS, failed, deadline, t);
      if (next.action !== "retry") {
        expect(next.action).toBe("expire");
        break;
      }
      t = next.at;
      attempts.push(t);
    }
    expect(attempts.every((a) => a < deadline)).toBe(true);
    expect(attempts.length).toBe(4);
  });
});
