import { parse, type Filter } from "scim2-parse-filter";
import type { Prisma } from "~/generated/prisma/client";
import { isUuid } from "~/schemas/uuid";
import { invalidFilter } from "./errors";

/**
 * The `filter` query parameter of a list (RFC 7644 §3.4.2.2), parsed by scim2-parse-filter and
 * translated into a Prisma `where` over the attributes Porta keeps: nothing else reaches the
 * database, and what cannot be translated is a 400 `invalidFilter`, never a broader answer.
 * Values are bound by Prisma as parameters; LIKE's wildcards in a value are escaped (Prisma
 * passes them on), so `co "%"` looks for a percent sign.
 */

/** Longer filters than any provisioning client sends are refused before they are parsed. */
export const MAX_FILTER_LENGTH = 1_000;
/** Parentheses and brackets nested deeper than this are refused before parsing (the parser recurses). */
export const MAX_FILTER_NESTING = 8;
/** And/or terms in one filter. */
const MAX_FILTER_TERMS = 50;

const USER_URN = "urn:ietf:params:scim:schemas:core:2.0:user:";
const GROUP_URN = "urn:ietf:params:scim:schemas:core:2.0:group:";

/** How deep brackets and parentheses nest outside quoted strings. */
function nestingOf(text: string): number {
  let depth = 0;
  let deepest = 0;
  let quoted = false;
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i];
    if (quoted) {
      if (c === "\\") i += 1;
      else if (c === '"') quoted = false;
    } else if (c === '"') quoted = true;
    else if (c === "(" || c === "[") deepest = Math.max(deepest, ++depth);
    else if (c === ")" || c === "]") depth -= 1;
  }
  return deepest;
}

/** Parses a filter within the limits above; anything the grammar refuses is `invalidFilter`. */
export function parseScimFilter(text: string): Filter {
  if (text.length > MAX_FILTER_LENGTH)
    throw invalidFilter(
      `The filter is longer than ${MAX_FILTER_LENGTH} characters.`
    );
  if (nestingOf(text) > MAX_FILTER_NESTING)
    throw invalidFilter(
      `The filter nests more than ${MAX_FILTER_NESTING} levels deep.`
    );
  let filter: Filter;
  try {
    filter = parse(text);
  } catch {
    throw invalidFilter("The filter is not valid SCIM filter syntax.");
  }
  if (termsOf(filter) > MAX_FILTER_TERMS)
    throw invalidFilter(`The filter has more than ${MAX_FILTER_TERMS} terms.`);
  return filter;
}

function termsOf(filter: Filter): number {
  switch (filter.op) {
    case "and":
    case "or":
      return filter.filters.reduce((sum, f) => sum + termsOf(f), 0);
    case "not":
      return termsOf(filter.filter);
    case "[]":
      return termsOf(filter.valFilter);
    default:
      return 1;
  }
}

/** Attribute names are case-insensitive (RFC 7643 §2.1); the core schema's URN prefix may stand before them. */
function attributeName(path: string, urn: string): string {
  const lower = path.toLowerCase();
  return lower.startsWith(urn) ? lower.slice(urn.length) : lower;
}

type Compare = Extract<Filter, { compValue: unknown }>;
type Op = Compare["op"] | "pr";

/** A value matched by LIKE as written: PostgreSQL's default escape character before its wildcards and itself. */
export const likeLiteral = (value: string) => value.replace(/[\\%_]/g, "\\$&");

/** What a comparison on one stored text column becomes. */
function textCondition(
  op: Op,
  value: unknown,
  attribute: string,
  caseExact: boolean
): Prisma.StringNullableFilter | null | undefined {
  if (op === "pr") return undefined;
  if (typeof value !== "string")
    throw invalidFilter(`${attribute} is compared with a string.`);
  const mode = caseExact ? {} : { mode: "insensitive" as const };
  switch (op) {
    case "eq":
      return { equals: value, ...mode };
    case "ne":
      return { not: value, ...mode };
    case "co":
      return { contains: likeLiteral(value), ...mode };
    case "sw":
      return { startsWith: likeLiteral(value), ...mode };
    case "ew":
      return { endsWith: likeLiteral(value), ...mode };
    default:
      throw invalidFilter(
        `The operator ${op} is not supported on ${attribute}.`
      );
  }
}

/** `pr` is "has a value"; a comparison on a nullable column also excludes rows without one. */
function textWhere<W>(
  column: string,
  op: Op,
  value: unknown,
  attribute: string,
  caseExact: boolean
): W {
  const condition = textCondition(op, value, attribute, caseExact);
  if (condition === undefined) return { [column]: { not: null } } as W;
  if (op === "ne")
    return { AND: [{ [column]: { not: null } }, { [column]: condition }] } as W;
  return { [column]: condition } as W;
}

function booleanOf(value: unknown, attribute: string): boolean {
  // Entra ID sends booleans as strings in places; the filter grammar's own are true/false.
  if (typeof value === "boolean") return value;
  if (typeof value === "string" && /^(true|false)$/i.test(value))
    return value.toLowerCase() === "true";
  throw invalidFilter(`${attribute} is compared with true or false.`);
}

function dateWhere<W>(
  column: string,
  op: Op,
  value: unknown,
  attribute: string
): W {
  if (op === "pr") return {} as W;
  if (typeof value !== "string" || Number.isNaN(Date.parse(value)))
    throw invalidFilter(`${attribute} is compared with a date and time.`);
  const at = new Date(value);
  const ops: Partial<Record<Op, string>> = {
    eq: "equals",
    gt: "gt",
    ge: "gte",
    lt: "lt",
    le: "lte",
  };
  const prismaOp = ops[op];
  if (!prismaOp)
    throw invalidFilter(`The operator ${op} is not supported on ${attribute}.`);
  return { [column]: { [prismaOp]: at } } as W;
}

function idWhere<W>(op: Op, value: unknown): W {
  if (op === "pr") return {} as W;
  if (op !== "eq" && op !== "ne")
    throw invalidFilter(`The operator ${op} is not supported on id.`);
  if (typeof value !== "string")
    throw invalidFilter("id is compared with a string.");
  // An id that is no UUID names nobody (and never reaches the uuid column).
  if (!isUuid(value)) return (op === "eq" ? { id: { in: [] } } : {}) as W;
  return (op === "eq" ? { id: value } : { id: { not: value } }) as W;
}

const NOTHING = { id: { in: [] as string[] } };

interface Translator<W> {
  urn: string;
  /** A comparison or `pr` on one attribute. */
  attribute(name: string, op: Op, value: unknown): W;
  /** `attr[filter]` (RFC 7644 §3.4.2.2 valuePath). */
  valuePath(name: string, filter: Filter): W;
}

function translate<W>(filter: Filter, t: Translator<W>): W {
  switch (filter.op) {
    case "and":
      return { AND: filter.filters.map((f) => translate(f, t)) } as W;
    case "or":
      return { OR: filter.filters.map((f) => translate(f, t)) } as W;
    case "not":
      return { NOT: translate(filter.filter, t) } as W;
    case "[]":
      return t.valuePath(
        attributeName(filter.attrPath, t.urn),
        filter.valFilter
      );
    case "pr":
      return t.attribute(
        attributeName(filter.attrPath, t.urn),
        "pr",
        undefined
      );
    default:
      return t.attribute(
        attributeName(filter.attrPath, t.urn),
        filter.op,
        filter.compValue
      );
  }
}

const unknownAttribute = (name: string, resource: string) =>
  invalidFilter(`${name} is not an attribute a ${resource} filter may use.`);

/**
 * A user's one email address is its `work` address and the primary one; a sub-filter of
 * `emails[...]` on value, type or primary is answered from that.
 */
function emailSubFilter(filter: Filter): Prisma.UserWhereInput {
  return translate<Prisma.UserWhereInput>(filter, {
    urn: "",
    attribute(name, op, value) {
      if (name === "value")
        return textWhere("email", op, value, "emails.value", false);
      if (name === "type") {
        if (op === "pr") return {};
        if (op !== "eq" || typeof value !== "string")
          throw invalidFilter("emails.type is compared with eq and a string.");
        return value.toLowerCase() === "work" ? {} : NOTHING;
      }
      if (name === "primary") {
        if (op === "pr") return {};
        if (op !== "eq")
          throw invalidFilter("emails.primary is compared with eq.");
        return booleanOf(value, "emails.primary") ? {} : NOTHING;
      }
      throw unknownAttribute(`emails.${name}`, "User");
    },
    valuePath: (name) => {
      throw unknownAttribute(`emails.${name}`, "User");
    },
  });
}

/** A User filter as a `where` on the organization's users (the caller adds the organization). */
export function userWhere(filter: Filter): Prisma.UserWhereInput {
  return translate<Prisma.UserWhereInput>(filter, {
    urn: USER_URN,
    attribute(name, op, value) {
      switch (name) {
        case "id":
          return idWhere(op, value);
        case "username":
        case "emails":
        case "emails.value":
          return textWhere("email", op, value, name, false);
        case "externalid":
          return textWhere("scimExternalId", op, value, "externalId", true);
        case "name.givenname":
          return textWhere("givenName", op, value, "name.givenName", false);
        case "name.familyname":
          return textWhere("familyName", op, value, "name.familyName", false);
        case "active":
          if (op === "pr") return {};
          if (op !== "eq" && op !== "ne")
            throw invalidFilter(
              `The operator ${op} is not supported on active.`
            );
          return {
            status:
              booleanOf(value, "active") === (op === "eq")
                ? "active"
                : "inactive",
          };
        case "meta.created":
          return dateWhere("createdAt", op, value, "meta.created");
        case "meta.lastmodified":
          return dateWhere("updatedAt", op, value, "meta.lastModified");
        default:
          throw unknownAttribute(name, "User");
      }
    },
    valuePath(name, sub) {
      if (name !== "emails") throw unknownAttribute(name, "User");
      return emailSubFilter(sub);
    },
  });
}

function memberWhere(op: Op, value: unknown): Prisma.RoleWhereInput {
  if (op === "pr") return { users: { some: {} } };
  if (op !== "eq")
    throw invalidFilter(`The operator ${op} is not supported on members.`);
  if (typeof value !== "string")
    throw invalidFilter("members is compared with a user id.");
  return isUuid(value) ? { users: { some: { userId: value } } } : NOTHING;
}

/** A Group filter as a `where` on the organization's roles (the caller adds the organization). */
export function groupWhere(filter: Filter): Prisma.RoleWhereInput {
  return translate<Prisma.RoleWhereInput>(filter, {
    urn: GROUP_URN,
    attribute(name, op, value) {
      switch (name) {
        case "id":
          return idWhere(op, value);
        case "displayname":
          return textWhere("name", op, value, "displayName", false);
        case "externalid":
          return textWhere("scimExternalId", op, value, "externalId", true);
        case "members":
        case "members.value":
          return memberWhere(op, value);
        case "meta.created":
          return dateWhere("createdAt", op, value, "meta.created");
        case "meta.lastmodified":
          return dateWhere("updatedAt", op, value, "meta.lastModified");
        default:
          throw unknownAttribute(name, "Group");
      }
    },
    valuePath(name, sub) {
      if (name !== "members") throw unknownAttribute(name, "Group");
      return translate<Prisma.RoleWhereInput>(sub, {
        urn: "",
        attribute(inner, op, value) {
          if (inner !== "value")
            throw unknownAttribute(`members.${inner}`, "Group");
          return memberWhere(op, value);
        },
        valuePath: (inner) => {
          throw unknownAttribute(`members.${inner}`, "Group");
        },
      });
    },
  });
}
