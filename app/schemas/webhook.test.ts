import { expect, it } from "vitest";
import { isWebhookEventFilter, webhookFilterMatches, WebhookEndpointCreateSchema } from "./webhook";

/** An endpoint's filter takes names from the one audit catalogue, exact or by family. */
it("matches exact event types and families, nothing else", () => {
  expect(webhookFilterMatches(["user.*"], "user.created")).toBe(true);
  expect(webhookFilterMatches(["user.*"], "user.2fa.reset")).toBe(true);
  expect(webhookFilterMatches(["user.*"], "users.created")).toBe(false);
  expect(webhookFilterMatches(["auth.login.success"], "auth.login.success")).toBe(true);
  expect(webhookFilterMatches(["auth.login.success"], "auth.login.failure")).toBe(false);
  expect(webhookFilterMatches(["client.*", "user.created"], "organization.updated")).toBe(false);
});

it("accepts only catalogue names and families as filters", () => {
  expect(isWebhookEventFilter("user.created")).toBe(true);
  expect(isWebhookEventFilter("webhook.*")).toBe(true);
  expect(isWebhookEventFilter("user.exploded")).toBe(false);
  expect(isWebhookEventFilter("*")).toBe(false);
  expect(isWebhookEventFilter("nothing.*")).toBe(false);
  expect(WebhookEndpointCreateSchema.safeParse({ url: "https://h.example/x", eventTypes: ["user.*", "user.*"] }).success).toBe(false);
});
