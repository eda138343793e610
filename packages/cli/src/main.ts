import { PortaAdmin, PortaConnectionError, PortaError, cliCredentials, staticToken } from "@porta/admin-client";
import { flagString, kebab, parseArgs, type ParsedArgs } from "./args";
import { areaHelp, areaOf, callArguments, helpOf, namespaces, operationOf, runOperation, specs, summaryOf, unknownArea, usageOf } from "./commands";
import { UsageError, credentialsFile, profileOf, serverOf, storedProfile } from "./config";
import { claimsOf, login, loginWithDevice, logout } from "./login";
import { CONFIG_COMMANDS, CONFIG_HELP } from "./config-as-code/help";
import { IMPORT_USERS_HELP, runImportUsers } from "./import-users";
import { createOutput, type Output } from "./output";

const HELP = `porta: manage Porta from the command line

  porta login [--server URL] [--headless] [--profile NAME]   sign in (browser, or paste the callback URL)
  porta login --device [--server URL]                      sign in on another device with a code (no browser here)
  porta whoami                                             who the stored credentials belong to
  porta logout                                             revoke the refresh token and forget it
  porta <area> <operation> [ids…] [--field value…]         any Admin API operation, e.g.
      porta orgs list                porta orgs create --name Acme --slug acme
      porta users list --org ID      porta users invite --org ID --email a@b.c
      porta clients get ID           porta keys rotate --org ID   porta audit list --limit 20
      porta keys list --org ID       porta keys rotate-all (every organization)
  porta plan -f porta.yaml [--prune]                       what apply would change in organizations, clients, roles…
  porta apply -f porta.yaml [--prune]                      make those changes (configuration as code)
  porta export --org SLUG --format yaml                    an organization's configuration as such a file
  porta import-users --org ORG --format F FILE [--preview] users from Keycloak, Auth0, CSV or JSON, with progress
  porta operations                                         every area and operation
  porta <area> --help                                      an area's operations
  porta <area> <operation> --help                          an operation's fields, their types, which are required

An organization is named by its id or its slug wherever one is asked (--org acme).
Global flags: --json (machine-readable output and errors), --server URL, --profile NAME, --all (every page of a list),
--if-match ETAG (writes), --data JSON (body), --timeout MS. Credentials: $PORTA_CONFIG_DIR or ~/.config/porta.`;

function client(args: ParsedArgs, server: string): PortaAdmin {
  const auth = process.env.PORTA_TOKEN ? staticToken(process.env.PORTA_TOKEN) : cliCredentials({ file: credentialsFile(), profile: profileOf(args) });
  return new PortaAdmin({ baseUrl: server, auth, userAgent: "porta-cli/1.11.0" });
}

async function whoami(args: ParsedArgs, output: Output) {
  const stored = await storedProfile(args);
  if (!stored && !process.env.PORTA_TOKEN) throw new UsageError(`Not logged in (profile "${profileOf(args)}"). Run \`porta login\`.`);
  const server = await serverOf(args);
  const auth = process.env.PORTA_TOKEN ? staticToken(process.env.PORTA_TOKEN) : cliCredentials({ file: credentialsFile(), profile: profileOf(args) });
  const sub = claimsOf(await auth.getToken()).sub;
  if (typeof sub !== "string") throw new UsageError("The access token names no user.");
  const admin = new PortaAdmin({ baseUrl: server, auth });
  const user = (await admin.usersById.get(sub)).data;
  const roles = await admin.userRoles.list(sub);
  const refreshed = await storedProfile(args);
  output.result({
    id: user.id,
    email: user.email,
    organizationId: user.organizationId,
    roles: roles.data.map((role) => role.name),
    server,
    profile: profileOf(args),
    ...(refreshed ? { accessTokenExpiresAt: new Date(refreshed.expiresAt).toISOString() } : {}),
  });
}

/** What went wrong, as the Admin API's error body plus what the CLI knows (status, request id, URL). */
function errorBody(error: unknown): { error: Record<string, unknown> } {
  if (error instanceof UsageError) return { error: { code: "usage", message: error.message } };
  if (error instanceof PortaError) {
    return {
      error: {
        ...(error.status ? { status: error.status } : {}),
        code: error.code,
        message: error.message,
        ...(error.details ? { details: error.details } : {}),
        ...(error.requestId ? { requestId: error.requestId } : {}),
        ...(error instanceof PortaConnectionError ? { url: error.url, reason: error.reason, ...(error.systemCode ? { systemCode: error.systemCode } : {}) } : {}),
      },
    };
  }
  return { error: { code: "error", message: error instanceof Error ? error.message : String(error) } };
}

/**
 * Reports a failure and returns the exit status (2 for usage errors, else 1). With --json the
 * error is one JSON object on stdout, where a script reads the result; otherwise text on stderr.
 */
function printError(error: unknown, output: Output, json: boolean) {
  const status = error instanceof UsageError ? 2 : 1;
  if (json) {
    output.result(errorBody(error));
    return status;
  }
  if (error instanceof UsageError) {
    output.info(error.message);
  } else if (error instanceof PortaConnectionError) {
    output.info(`Error: ${error.message}`);
  } else if (error instanceof PortaError) {
    output.info(`Error ${error.status || ""} ${error.code}: ${error.message}`.replace("  ", " "));
    for (const d of error.details ?? []) output.info(`  ${d.field}: ${d.message}`);
    if (error.requestId) output.info(`  request id: ${error.requestId}`);
  } else {
    output.info(`Error: ${error instanceof Error ? error.message : String(error)}`);
  }
  return status;
}

export async function main(argv: string[]): Promise<number> {
  const args = parseArgs(argv);
  const json = args.flags.get("json") === true;
  const output = createOutput(json);
  const wantsHelp = args.flags.get("help") === true;
  let [command, verb, ...rest] = args.positionals;
  try {
    // `porta help orgs create` is `porta orgs create --help`.
    const helpCommand = command === "help";
    if (helpCommand) [command, verb, ...rest] = [verb, rest[0], ...rest.slice(1)];
    const asksHelp = wantsHelp || helpCommand;
    if (!command) {
      output.info(HELP);
      // A bare `porta` is a usage error; asking for help is not.
      return asksHelp ? 0 : 2;
    }
    if (command === "login" || command === "logout" || command === "whoami" || command === "operations") {
      if (asksHelp) {
        output.info(HELP);
        return 0;
      }
    }
    if (command === "login") {
      const device = args.flags.get("device") === true;
      const credentials = device
        ? await loginWithDevice({ server: await serverOf(args), profile: profileOf(args), file: credentialsFile(), output })
        : await login({
            server: await serverOf(args),
            profile: profileOf(args),
            file: credentialsFile(),
            headless: args.flags.get("headless") === true,
            openBrowser: args.flags.get("no-browser") !== true && !process.env.PORTA_NO_BROWSER,
            output,
          });
      output.info(`Logged in${credentials.email ? ` as ${credentials.email}` : ""} to ${credentials.server} (profile "${profileOf(args)}").`);
      return 0;
    }
    if (command === "logout") {
      const stored = await storedProfile(args);
      if (!stored) throw new UsageError(`Not logged in (profile "${profileOf(args)}").`);
      const { revoked } = await logout(stored, { profile: profileOf(args), file: credentialsFile() });
      output.info(revoked ? "Logged out: the refresh token is revoked and the credentials are deleted." : "Logged out locally (the server did not confirm the revocation).");
      return 0;
    }
    if (command === "whoami") {
      await whoami(args, output);
      return 0;
    }
    const configCommand = CONFIG_COMMANDS.find((c) => c === command);
    if (configCommand) {
      if (asksHelp) {
        output.info(CONFIG_HELP);
        return 0;
      }
      // Loaded on demand: the YAML parser and zod would slow every other command's start.
      const { runConfigCommand } = await import("./config-as-code/command");
      return await runConfigCommand(configCommand, args, output, async () => client(args, await serverOf(args)));
    }
    if (command === "import-users") {
      if (asksHelp) {
        output.info(IMPORT_USERS_HELP);
        return 0;
      }
      return await runImportUsers(args, output, json, async () => client(args, await serverOf(args)));
    }
    if (command === "operations") {
      output.result(Object.keys(specs).map((id) => ({ operationId: id, method: specs[id]!.method, path: specs[id]!.path, usage: usageOf(id), summary: summaryOf(id) })));
      return 0;
    }
    const ns = areaOf(command);
    if (!ns) throw unknownArea(command);
    if (!verb) {
      if (asksHelp) {
        output.info(areaHelp(ns));
        return 0;
      }
      throw new UsageError(`Which operation of ${command}? \`porta ${command} --help\` lists them. Areas: ${namespaces().map(kebab).join(", ")}`);
    }
    const id = operationOf(command, verb);
    if (asksHelp) {
      output.info(helpOf(id));
      return 0;
    }
    // Flags and path values are checked before a server is needed.
    const parts = callArguments(id, args, rest, `porta ${command} ${verb}`);
    const server = await serverOf(args);
    output.result(await runOperation(client(args, server), id, args, parts));
    if (flagString(args, "if-match") === undefined && specs[id]!.etag && !json) {
      output.info("Pass the etag with --if-match to a later write to guard against lost updates.");
    }
    return 0;
  } catch (error) {
    return printError(error, output, json);
  }
}
