import { filter as matcherOf, parse } from "scim2-parse-filter";
import { invalidPath, invalidSyntax, invalidValue, noTarget } from "./errors";

/**
 * PATCH (RFC 7644 §3.5.2) applied to a resource's document: the current representation as a
 * plain JSON object, changed operation by operation, which the resource's module then reads back
 * as it reads a PUT. Accepts the shapes the big provisioning clients send: Entra ID's capitalised
 * `"op": "Replace"` and its `emails[type eq "work"].value` paths, Okta's path-less
 * `{"op": "replace", "value": {"active": false}}`, a path-less value whose keys are paths
 * (`"name.givenName"`), and a `remove` of a multi-valued attribute with the values to remove.
 * Attributes in other schemas (the enterprise extension) are not kept by Porta and are ignored.
 */
export const PATCH_OP_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:PatchOp";
/** Operations in one request; provisioning clients send a handful. */
export const MAX_PATCH_OPERATIONS = 100;

export type Json =
  | null
  | boolean
  | number
  | string
  | Json[]
  | { [key: string]: Json };
export type Doc = { [key: string]: Json };
export type PatchOp = "add" | "replace" | "remove";
export interface Operation {
  op: PatchOp;
  path?: string;
  value?: Json;
}

const isObject = (value: unknown): value is Doc =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** The body's operations, checked for shape; `op` is case-insensitive (Entra ID sends "Replace"). */
export function operationsOf(body: unknown): Operation[] {
  if (!isObject(body))
    throw invalidSyntax("The body must be a PatchOp object.");
  const schemas = body.schemas;
  if (!Array.isArray(schemas) || !schemas.includes(PATCH_OP_SCHEMA))
    throw invalidSyntax(`The body's schemas must name ${PATCH_OP_SCHEMA}.`);
  const ops = body.Operations ?? body.operations;
  if (!Array.isArray(ops) || ops.length === 0)
    throw invalidSyntax("Operations must be a non-empty array.");
  if (ops.length > MAX_PATCH_OPERATIONS)
    throw invalidSyntax(
      `A PATCH may carry at most ${MAX_PATCH_OPERATIONS} operations.`
    );
  return ops.map((raw, index) => {
    if (!isObject(raw))
      throw invalidSyntax(`Operations[${index}] must be an object.`);
    const op = typeof raw.op === "string" ? raw.op.toLowerCase() : "";
    if (op !== "add" && op !== "replace" && op !== "remove")
      throw invalidSyntax(
        `Operations[${index}].op must be add, replace or remove.`
      );
    if (raw.path !== undefined && typeof raw.path !== "string")
      throw invalidPath(`Operations[${index}].path must be a string.`);
    if (op === "remove" && raw.path === undefined)
      throw noTarget(`Operations[${index}]: remove needs a path.`);
    if (op !== "remove" && raw.value === undefined)
      throw invalidValue(`Operations[${index}]: ${op} needs a value.`);
    return {
      op,
      ...(raw.path !== undefined ? { path: raw.path } : {}),
      ...(raw.value !== undefined ? { value: raw.value } : {}),
    };
  });
}

interface Path {
  attribute: string;
  /** The value filter of `attr[filter]`, as text. */
  filter?: string;
  sub?: string;
}

const PATH = /^([A-Za-z][\w$-]*)(?:\[(.+)\])?(?:\.([A-Za-z][\w$-]*))?$/;

/**
 * The path below the resource's own schema URN, or null for an attribute of another schema
 * (ignored). A path that is not attrPath, attrPath.sub or attrPath[filter](.sub) is invalidPath.
 */
export function parsePath(text: string, coreUrn: string): Path | null {
  let rest = text.trim();
  if (rest.toLowerCase().startsWith("urn:")) {
    if (!rest.toLowerCase().startsWith(`${coreUrn.toLowerCase()}:`))
      return null;
    rest = rest.slice(coreUrn.length + 1);
  }
  const match = PATH.exec(rest);
  if (!match) throw invalidPath(`${text} is not a valid attribute path.`);
  return {
    attribute: match[1]!,
    ...(match[2] ? { filter: match[2] } : {}),
    ...(match[3] ? { sub: match[3] } : {}),
  };
}

/** The document's own spelling of an attribute name (names are case-insensitive). */
function keyIn(doc: Doc, name: string): string {
  return (
    Object.keys(doc).find((key) => key.toLowerCase() === name.toLowerCase()) ??
    name
  );
}

function matcher(text: string): (element: Json) => boolean {
  let test: (r: unknown) => boolean;
  try {
    test = matcherOf(parse(text));
  } catch {
    throw invalidPath(`[${text}] is not a valid value filter.`);
  }
  return (element) => isObject(element) && test(element);
}

/** A new element for `add`/`replace` through a filter nothing matched: `type eq "work"` makes `{ type: "work" }`. */
function elementFromFilter(text: string): Doc | null {
  const match = /^\s*([A-Za-z]\w*)\s+eq\s+"([^"\\]*)"\s*$/i.exec(text);
  return match ? { [match[1]!]: match[2]! } : null;
}

const sameValue = (a: Json, b: Json) =>
  isObject(a) &&
  isObject(b) &&
  a.value !== undefined &&
  JSON.stringify(a.value) === JSON.stringify(b.value);

const isPrimary = (element: Doc) => Object.entries(element).some(([key, flag]) => key.toLowerCase() === "primary" && (flag === true || (typeof flag === "string" && flag.toLowerCase() === "true")));

function merge(
  target: Json | undefined,
  value: Json,
  op: "add" | "replace"
): Json {
  if (Array.isArray(target) && op === "add") {
    const added = Array.isArray(value) ? value : [value];
    // RFC 7644 §3.5.2.1: a value added as primary takes that place from the one that had it.
    const newPrimary = added.some((item) => isObject(item) && isPrimary(item));
    const kept = target
      .filter((old) => !added.some((item) => sameValue(old, item)))
      .map((old) => (newPrimary && isObject(old) && isPrimary(old) ? { ...old, primary: false } : old));
    return [...kept, ...added];
  }
  if (isObject(target) && isObject(value)) {
    const merged: Doc = { ...target };
    for (const [key, item] of Object.entries(value))
      merged[keyIn(merged, key)] = item;
    return merged;
  }
  return value;
}

function applyAt(doc: Doc, path: Path, op: PatchOp, value: Json | undefined) {
  const key = keyIn(doc, path.attribute);
  if (path.filter === undefined) {
    if (path.sub === undefined) {
      if (op === "remove") {
        // Entra ID removes members or emails by naming them in the value of a path without a filter.
        if (Array.isArray(doc[key]) && value !== undefined) {
          const removed = Array.isArray(value) ? value : [value];
          doc[key] = (doc[key] as Json[]).filter(
            (old) => !removed.some((item) => sameValue(old, item))
          );
        } else delete doc[key];
      } else doc[key] = merge(doc[key], value!, op);
      return;
    }
    const parent = doc[key];
    if (Array.isArray(parent))
      throw invalidPath(
        `${path.attribute}.${path.sub} needs a value filter: ${path.attribute} is multi-valued.`
      );
    const complex: Doc = isObject(parent) ? { ...parent } : {};
    const subKey = keyIn(complex, path.sub);
    if (op === "remove") delete complex[subKey];
    else complex[subKey] = merge(complex[subKey], value!, op);
    doc[key] = complex;
    return;
  }
  const list = doc[key] ?? [];
  if (!Array.isArray(list))
    throw invalidPath(
      `${path.attribute} is not multi-valued; it takes no value filter.`
    );
  const matches = matcher(path.filter);
  const hits = list.filter(matches);
  if (op === "remove") {
    doc[key] =
      path.sub === undefined
        ? list.filter((el) => !matches(el))
        : list.map((el) =>
            matches(el) && isObject(el) ? withoutKey(el, path.sub!) : el
          );
    return;
  }
  if (hits.length === 0) {
    const created = elementFromFilter(path.filter);
    if (!created)
      throw noTarget(`No value of ${path.attribute} matches [${path.filter}].`);
    const element =
      path.sub === undefined
        ? merge(created, value!, "replace")
        : { ...created, [path.sub]: value! };
    doc[key] = [...list, element];
    return;
  }
  doc[key] = list.map((el) => {
    if (!matches(el)) return el;
    if (path.sub === undefined)
      return op === "add" ? merge(el, value!, "replace") : value!;
    const complex = { ...(el as Doc) };
    complex[keyIn(complex, path.sub)] = value!;
    return complex;
  });
}

function withoutKey(doc: Doc, name: string): Doc {
  const copy = { ...doc };
  delete copy[keyIn(copy, name)];
  return copy;
}

/** Applies the operations in order to a copy of `doc`; `coreUrn` is the resource's schema (its attributes may be prefixed with it). */
export function applyPatch(
  doc: Doc,
  operations: Operation[],
  coreUrn: string
): Doc {
  const result: Doc = structuredClone(doc);
  for (const operation of operations) {
    if (operation.path !== undefined) {
      const path = parsePath(operation.path, coreUrn);
      if (path) applyAt(result, path, operation.op, operation.value);
      continue;
    }
    // No path: the value is a partial resource, each key an attribute (or a path, as Entra ID sends "name.givenName").
    if (!isObject(operation.value))
      throw invalidValue(
        `${operation.op} without a path needs an object value.`
      );
    for (const [name, item] of Object.entries(operation.value)) {
      if (name.toLowerCase() === coreUrn.toLowerCase() && isObject(item)) {
        for (const [inner, innerItem] of Object.entries(item))
          applyNamed(result, inner, operation.op, innerItem, coreUrn);
      } else applyNamed(result, name, operation.op, item, coreUrn);
    }
  }
  return result;
}

function applyNamed(
  doc: Doc,
  name: string,
  op: PatchOp,
  value: Json,
  coreUrn: string
) {
  if (name.toLowerCase() === "schemas") return;
  const path = parsePath(name, coreUrn);
  if (path) applyAt(doc, path, op, value);
}
