import { afterAll, beforeAll, expect, it } from "vitest";
import { startTestPorta, type TestPorta } from "../support/porta";
import { createTenant, eventually, jobRows, type Tenant } from "../email/helpers";

/**
 * A worker checks a job's payload against the schema its feature defined before the handler sees
 * it. A payload that does not match (written by another version, or by hand) is never retried:
 * one error line names the queue, the job and the fields at fault (never their values), and the
 * job ends at once, in the dead-letter queue where its queue keeps one.
 */

let porta: TestPorta;
let tenant: Tenant;

beforeAll(async () => {
  porta = await startTestPorta({ queue: { pollingIntervalSeconds: 1 } });
  tenant = await createTenant(porta);
}, 120_000);
afterAll(async () => {
  await porta?.stop();
});

const schemaErrors = () => porta.logs.lines.filter((line) => line.msg === "job payload does not match its schema; the job is not retried");

it("ends a mail job whose payload does not match its schema in the dead-letter queue, untried, with one error line", async () => {
  porta.logs.expectError("job payload does not match its schema");
  // An address that is not a string, and no language: as if queued by a version with another shape.
  const malformed = { organizationId: tenant.org.id, email: { address: "leak@example.test" }, interactionUid: null, ip: null } as unknown as Parameters<typeof porta.services.jobs.enqueue<"password-reset">>[1];
  const id = await porta.services.jobs.enqueue("password-reset", malformed);
  expect(id).not.toBeNull();

  const dead = await eventually(() => porta.services.jobs.count("password-reset", "dead"), (count) => count === 1, 20_000);
  expect(dead).toBe(1);
  const [row] = (await jobRows(porta, "password-reset")).filter((job) => job.id === id);
  expect(row).toMatchObject({ state: "failed", retry_count: 0 });
  // The handler never ran: it would have made the reset token, keyed by the job.
  expect(await porta.services.db.prisma.passwordResetToken.count({ where: { jobId: id! } })).toBe(0);

  const lines = schemaErrors().filter((line) => line.jobId === id);
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatchObject({ level: 50, queue: "password-reset" });
  expect(lines[0]!.issues).toEqual(
    expect.arrayContaining([
      { path: "email", code: "invalid_type" },
      { path: "language", code: "invalid_type" },
    ]),
  );
  expect(JSON.stringify(lines[0])).not.toContain("leak@");
}, 60_000);

it("ends a webhook job whose payload does not match at its first attempt, though its schedule has retries", async () => {
  porta.logs.expectError("job payload does not match its schema");
  expect(porta.services.jobs.retryScheduleOf("webhook").length).toBeGreaterThan(0);
  const malformed = { delivery: "not an id" } as unknown as Parameters<typeof porta.services.jobs.enqueue<"webhook">>[1];
  const id = await porta.services.jobs.enqueue("webhook", malformed);

  const rows = await eventually(
    () => jobRows(porta, "webhook"),
    (all) => all.some((job) => job.id === id && job.state === "failed"),
    20_000,
  );
  expect(rows.find((job) => job.id === id)).toMatchObject({ state: "failed", retry_count: 0 });
  expect(schemaErrors().filter((line) => line.jobId === id)).toEqual([expect.objectContaining({ queue: "webhook", issues: [{ path: "deliveryId", code: "invalid_type" }] })]);
}, 60_000);
