/**
 * The slug rule, defined once: lower-case letters, digits and inner dashes, at most 63
 * characters (one DNS label). Organization slugs add a minimum and reserved names
 * (organization.ts); the protocol mount matches it without regard to case, since slugs fold.
 */
export const SLUG_PATTERN = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
export const SLUG_PATTERN_ANY_CASE = new RegExp(SLUG_PATTERN.source, "i");
