/**
 * When a mail that could not be delivered is tried again, the way a mail transfer agent retries:
 * soon at first (a restarting or briefly unreachable SMTP server), then at growing intervals, for
 * about a day in all. A job never outlives the link or code it carries: the retry that would
 * start after that expiry is not made (decision 025).
 */

/** Seconds to wait after the 1st, 2nd, ... failed attempt; 11 retries over about 24 hours. */
export const MAIL_RETRY_SCHEDULE_SECONDS: readonly number[] = [
  60, 2 * 60, 5 * 60, 10 * 60, 15 * 60, 30 * 60, 60 * 60, 2 * 3600, 4 * 3600, 8 * 3600, 8 * 3600,
];

/**
 * A logout token that could not be delivered (decision 048): the receiver restarting or briefly
 * down; after about an hour and a half the session it ends is long forgotten by the person.
 */
export const BACKCHANNEL_RETRY_SCHEDULE_SECONDS: readonly number[] = [10, 30, 2 * 60, 10 * 60, 30 * 60, 60 * 60];

export type RetryDecision =
  | { action: "retry"; at: Date }
  /** The next attempt would come after the link's expiry: the job ends as expired. */
  | { action: "expire" }
  /** Every scheduled retry was used: the job goes to the dead-letter queue. */
  | { action: "give_up" };

/**
 * What follows the `failedAttempts`-th failure (1 after the first attempt failed), given the
 * schedule and the expiry of the link the job carries (null: it carries none yet).
 */
export function decideRetry(schedule: readonly number[], failedAttempts: number, deadline: Date | null, now: Date = new Date()): RetryDecision {
  const wait = schedule[failedAttempts - 1];
  if (wait === undefined) return { action: "give_up" };
  const at = new Date(now.getTime() + wait * 1000);
  if (deadline && at.getTime() >= deadline.getTime()) return { action: "expire" };
  return { action: "retry", at };
}

/**
 * Webhook retries (decision 047), the schedule the Standard Webhooks reference implementation
 * (Svix) documents: at once, then 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h, about 28 hours in
 * all; the delivery is dead after the last. The first attempt is the job itself.
 */
export const WEBHOOK_RETRY_SCHEDULE_SECONDS: readonly number[] = [5, 5 * 60, 30 * 60, 2 * 3600, 5 * 3600, 10 * 3600, 10 * 3600];
