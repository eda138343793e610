import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

/**
 * A small reader of prisma/schema.prisma, enough for the schema-agreement test to derive what
 * the SQL must contain (column types, nullability, defaults, keys, indexes, foreign keys). It
 * throws on any attribute it does not understand, so that a new construct in the schema makes
 * the test fail loudly rather than go unchecked.
 */

export const SCHEMA_PATH = fileURLToPath(new URL("../../prisma/schema.prisma", import.meta.url));

const SCALAR_TYPES = new Set(["String", "Int", "BigInt", "Float", "Decimal", "Boolean", "DateTime", "Json", "Bytes"]);

export interface ScalarField {
  name: string;
  type: string;
  list: boolean;
  optional: boolean;
  id: boolean;
  unique: boolean;
  /** The text inside @default(...), if any. */
  default: string | undefined;
  updatedAt: boolean;
  /** The native type from @db.X, with its arguments, such as "Uuid" or "Timestamptz(3)". */
  nativeType: string | undefined;
}

export interface Relation {
  field: string;
  target: string;
  fields: string[];
  references: string[];
  onDelete: string | undefined;
  onUpdate: string | undefined;
  optional: boolean;
}

export interface ModelSpec {
  name: string;
  scalars: ScalarField[];
  relations: Relation[];
  id: string[];
  uniques: string[][];
  indexes: string[][];
}

/** The text of `@name(...)` in an attribute string, honouring nested brackets and quotes. */
function argumentOf(text: string, attribute: string): string | undefined {
  const start = text.indexOf(`${attribute}(`);
  if (start < 0) return undefined;
  let depth = 0;
  let quoted = false;
  for (let i = start + attribute.length; i < text.length; i++) {
    const c = text[i];
    if (c === '"' && text[i - 1] !== "\\") quoted = !quoted;
    if (quoted) continue;
    if (c === "(" || c === "[") depth++;
    if (c === ")" || c === "]") depth--;
    if (depth === 0) return text.slice(start + attribute.length + 1, i);
  }
  throw new Error(`unbalanced ${attribute}( in: ${text}`);
}

function nameList(text: string): string[] {
  const inner = /^\s*\[([^\]]*)\]/.exec(text);
  if (!inner) throw new Error(`expected a [list] in: ${text}`);
  // A field may carry index arguments, as in `name(ops: raw("gin_trgm_ops"))`: the column is its name.
  return inner[1]!
    .split(",")
    .map((s) => s.trim().replace(/\(.*$/, ""))
    .filter(Boolean);
}

function namedArgument(text: string, name: string): string | undefined {
  const match = new RegExp(`\\b${name}:\\s*(\\[[^\\]]*\\]|\\w+)`).exec(text);
  return match?.[1];
}

export function readPrismaSchema(source = readFileSync(SCHEMA_PATH, "utf8")): ModelSpec[] {
  const withoutComments = source.replace(/\/\/.*$/gm, "");
  if (/^\s*(enum|type|view)\s+\w+\s*\{/m.test(withoutComments)) throw new Error("schema reader: enums, types and views are not supported yet");
  const models: ModelSpec[] = [];
  for (const match of withoutComments.matchAll(/^model\s+(\w+)\s*\{([\s\S]*?)^\}/gm)) {
    const model: ModelSpec = { name: match[1]!, scalars: [], relations: [], id: [], uniques: [], indexes: [] };
    for (const rawLine of match[2]!.split("\n")) {
      const line = rawLine.trim();
      if (!line) continue;
      if (line.startsWith("@@")) {
        const kind = /^@@(\w+)/.exec(line)![1];
        const args = argumentOf(line, `@@${kind}`) ?? "";
        if (kind === "id") model.id = nameList(args);
        else if (kind === "unique") model.uniques.push(nameList(args));
        else if (kind === "index") model.indexes.push(nameList(args));
        else throw new Error(`schema reader: @@${kind} is not supported yet (model ${model.name})`);
        continue;
      }
      const field = /^(\w+)\s+(\w+)(\[\])?(\?)?\s*(.*)$/.exec(line);
      if (!field) throw new Error(`schema reader: cannot read "${line}" in model ${model.name}`);
      const [, name, type, list, optional, attributes] = field as unknown as [string, string, string, string | undefined, string | undefined, string];
      const known = attributes.replace(/@(id|unique|updatedAt)\b(?!\()/g, "").replace(/@(default|relation|db\.\w+)(\([^@]*\))?/g, "");
      if (known.trim() !== "") throw new Error(`schema reader: unknown attribute "${known.trim()}" on ${model.name}.${name}`);
      if (SCALAR_TYPES.has(type)) {
        const db = /@db\.(\w+)(\([^)]*\))?/.exec(attributes);
        const scalar: ScalarField = {
          name,
          type,
          list: Boolean(list),
          optional: Boolean(optional),
          id: /@id\b/.test(attributes),
          unique: /@unique\b/.test(attributes),
          default: argumentOf(attributes, "@default"),
          updatedAt: /@updatedAt\b/.test(attributes),
          nativeType: db ? `${db[1]}${db[2] ?? ""}` : undefined,
        };
        model.scalars.push(scalar);
        if (scalar.id) model.id = [name];
      } else {
        const args = argumentOf(attributes, "@relation");
        const fields = args && namedArgument(args, "fields");
        if (fields) {
          model.relations.push({
            field: name,
            target: type,
            fields: nameList(fields),
            references: nameList(namedArgument(args, "references") ?? "[]"),
            onDelete: namedArgument(args, "onDelete"),
            onUpdate: namedArgument(args, "onUpdate"),
            optional: Boolean(optional),
          });
        }
      }
    }
    models.push(model);
  }
  return models;
}

/** The PostgreSQL column type Prisma gives a scalar field: udt_name as information_schema reports it. */
export function expectedColumnType(field: ScalarField): { udtName: string; precision?: number } {
  const native = field.nativeType;
  let udtName: string;
  let precision: number | undefined;
  switch (field.type) {
    case "String":
      udtName = native === "Uuid" ? "uuid" : native === "Citext" ? "citext" : native === undefined || native === "Text" ? "text" : "?";
      break;
    case "Int":
      udtName = "int4";
      break;
    case "BigInt":
      udtName = "int8";
      break;
    case "Float":
      udtName = "float8";
      break;
    case "Boolean":
      udtName = "bool";
      break;
    case "Json":
      udtName = native === "Json" ? "json" : "jsonb";
      break;
    case "Bytes":
      udtName = "bytea";
      break;
    case "DateTime": {
      const tz = /^Timestamptz(?:\((\d+)\))?$/.exec(native ?? "");
      udtName = tz ? "timestamptz" : "timestamp";
      precision = Number((tz ?? /^Timestamp(?:\((\d+)\))?$/.exec(native ?? ""))?.[1] ?? 3);
      break;
    }
    default:
      throw new Error(`schema reader: no column type for ${field.type}${native ? ` @db.${native}` : ""}`);
  }
  if (udtName === "?") throw new Error(`schema reader: no column type for String @db.${native}`);
  return { udtName: field.list ? `_${udtName}` : udtName, ...(precision === undefined ? {} : { precision }) };
}

/** Whether PostgreSQL holds a default for the column (uuid()/cuid() defaults are made by the client). */
export function expectsDatabaseDefault(field: ScalarField): boolean {
  if (field.default === undefined) return false;
  return !/^(uuid|cuid|nanoid|ulid)\(/.test(field.default.trim());
}

/** Prisma's referential action names as pg_constraint spells them. */
export const REFERENTIAL_ACTION: Record<string, string> = { Cascade: "c", SetNull: "n", Restrict: "r", NoAction: "a", SetDefault: "d" };

/** Allowed literals of single-column CHECK constraints, from pg_get_constraintdef, by "Table.column". */
export type CheckLiterals = Map<string, string[]>;

export function literalsOf(constraintDefinition: string): string[] {
  return [...constraintDefinition.matchAll(/'((?:[^']|'')*)'/g)].map((m) => m[1]!.replace(/''/g, "'"));
}

const FIXED_DATE = new Date("2031-03-04T05:06:07.089Z");

/** The @default literal of a field as a JS value, when it is a plain literal. */
function defaultLiteral(field: ScalarField): unknown {
  if (field.default === undefined) return undefined;
  try {
    return JSON.parse(field.default) as unknown;
  } catch {
    return undefined;
  }
}

/**
 * A value for every scalar column of a model, none of them the default, that satisfies the
 * table's single-column CHECK constraints; foreign keys point at the rows already made.
 */
export function generatedRow(
  model: ModelSpec,
  checks: CheckLiterals,
  rows: Map<string, Record<string, unknown>>,
  unique: string,
): Record<string, unknown> {
  const row: Record<string, unknown> = {};
  for (const field of model.scalars) {
    const relation = model.relations.find((r) => r.fields.includes(field.name));
    if (relation) {
      const target = rows.get(relation.target);
      if (!target) throw new Error(`${model.name}.${field.name}: no ${relation.target} row made yet`);
      row[field.name] = target[relation.references[relation.fields.indexOf(field.name)]!];
      continue;
    }
    const allowed = checks.get(`${model.name}.${field.name}`);
    const fallback = defaultLiteral(field);
    if (field.list) {
      row[field.name] = allowed?.length ? [...allowed].reverse() : [`${field.name}-b ✓`, `${field.name}-a ünï`];
      continue;
    }
    switch (field.type) {
      case "String":
        if (allowed?.length) row[field.name] = allowed.find((v) => v !== fallback) ?? allowed[0];
        else if (field.nativeType === "Uuid") row[field.name] = randomUUID();
        else if (field.nativeType === "Citext") row[field.name] = `Mixed.Case.${unique}@Example.IO`;
        else row[field.name] = `${model.name}.${field.name} ${unique} ✓ ünï`;
        break;
      case "Int":
        row[field.name] = fallback === 7 ? 8 : 7;
        break;
      case "BigInt":
        // Beyond 2^53: a BigInt that went through a JS number would come back different.
        row[field.name] = 9_007_199_254_740_993n;
        break;
      case "Float":
        row[field.name] = 1.5;
        break;
      case "Boolean":
        row[field.name] = fallback !== true;
        break;
      case "DateTime":
        row[field.name] = FIXED_DATE;
        break;
      case "Json":
        row[field.name] = { field: field.name, nested: [1, "two", null, { ok: true }], unicode: "🔐" };
        break;
      case "Bytes":
        // Every byte value once: a driver that went through a text encoding would change some.
        row[field.name] = Uint8Array.from({ length: 256 }, (_, i) => i);
        break;
      default:
        throw new Error(`generatedRow: no value for ${model.name}.${field.name} of type ${field.type}`);
    }
  }
  return row;
}

/** Models ordered so that every relation's target comes before the model that points at it. */
export function inDependencyOrder(models: ModelSpec[]): ModelSpec[] {
  const ordered: ModelSpec[] = [];
  const visiting = new Set<string>();
  const visit = (model: ModelSpec) => {
    if (ordered.includes(model)) return;
    if (visiting.has(model.name)) throw new Error(`relation cycle through ${model.name}`);
    visiting.add(model.name);
    for (const relation of model.relations) {
      if (relation.target !== model.name) visit(models.find((m) => m.name === relation.target)!);
    }
    visiting.delete(model.name);
    ordered.push(model);
  };
  for (const model of models) visit(model);
  return ordered;
}
