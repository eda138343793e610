import type { z } from "zod";
import * as apiResources from "../operations/api-resources";
import * as applications from "../operations/applications";
import * as audit from "../operations/audit";
import * as auditSinks from "../operations/audit-sinks";
import * as branding from "../operations/branding";
import * as bulk from "../operations/bulk";
import * as claims from "../operations/claims";
import * as clients from "../operations/clients";
import * as config from "../operations/config";
import * as domains from "../operations/domains";
import * as identityProviders from "../operations/identity-providers";
import * as keys from "../operations/keys";
import * as mail from "../operations/mail";
import * as metadata from "../operations/metadata";
import * as organizations from "../operations/organizations";
import * as passkeys from "../operations/passkeys";
import * as rbac from "../operations/rbac";
import * as registration from "../operations/registration";
import * as scimTokens from "../operations/scim-tokens";
import * as sessions from "../operations/sessions";
import * as setupLinks from "../operations/setup-links";
import * as ssfStreams from "../operations/ssf-streams";
import * as stats from "../operations/stats";
import * as transfer from "../operations/transfer";
import * as twoFactor from "../operations/two-factor";
import * as userImports from "../operations/user-imports";
import * as users from "../operations/users";
import * as webhooks from "../operations/webhooks";
import type { Operation } from "./route";

/**
 * The Admin API's one table of operations. Each module in ../operations exports arrays of
 * operations; a new module is added here once. The router, the OpenAPI document, the console
 * gateway (typed by operation id) and the generated client all read this table.
 */
export const MODULES = { apiResources, applications, audit, auditSinks, branding, bulk, claims, clients, config, domains, identityProviders, keys, mail, metadata, organizations, passkeys, rbac, registration, scimTokens, sessions, setupLinks, ssfStreams, stats, transfer, twoFactor, userImports, users, webhooks };

type Module = (typeof MODULES)[keyof typeof MODULES];
// Distributes over the modules (keyof a union would keep only the keys they share).
export type OperationsOf<M> = M extends unknown ? { [K in keyof M]: M[K] extends ReadonlyArray<infer O> ? O : never }[keyof M] : never;

/** Every operation, each with its literal id and its schemas' types. */
export type AdminOperation = OperationsOf<Module>;
export type OperationId = AdminOperation["operationId"];
/** Operations by id (an operation declared for several ids, such as `clients.${verb}`, is found under each). */
type OperationsById = { [O in AdminOperation as O["operationId"]]: O };
export type OperationById<Id extends OperationId> = OperationsById[Id];

type SchemaOf<Id extends OperationId, K extends "params" | "query" | "body" | "response"> = NonNullable<OperationById<Id>[K]>;
/** What a caller sends: path parameters, query and body as their schemas accept them. */
export type OperationInput<Id extends OperationId> = {
  params?: z.input<SchemaOf<Id, "params">>;
  query?: z.input<SchemaOf<Id, "query">>;
  body?: z.input<SchemaOf<Id, "body">>;
};
/** What the operation answers on success: its declared response schema's output. */
export type OperationOutput<Id extends OperationId> = z.output<SchemaOf<Id, "response">>;

function isOperationList(value: unknown): value is Operation[] {
  return Array.isArray(value) && value.every((v) => typeof v === "object" && v !== null && "operationId" in v && "handler" in v);
}

/** The operations a set of modules declares (every exported array of operations). */
export function operationsOf(modules: Record<string, object>): Operation[] {
  return Object.values(modules).flatMap((mod) => Object.values(mod).filter(isOperationList).flat());
}

let table: Operation[] | undefined;

export function adminOperations(): Operation[] {
  table ??= operationsOf(MODULES);
  return table;
}
