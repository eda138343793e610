import { appendFileSync, writeFileSync } from "node:fs";
import type { PortaAdmin } from "@porta/admin-client";
import { flagString, type ParsedArgs } from "../args";
import { UsageError } from "../config";
import type { Output } from "../output";
import { applyPlans, ApplyStoppedError, type IssuedSecret, type OrganizationPlan } from "./apply";
import { exportOrganization, renderConfigYaml } from "./export";
import { loadConfig, type LoadedConfig } from "./load";
import { planOrganization } from "./plan";
import { renderPlan, summarize } from "./render";
import type { ConfigCommand } from "./help";
import { readOrganization } from "./state";

/** `porta plan`, `porta apply` and `porta export`: configuration as code over the Admin API (decision 088). */
async function planAll(client: PortaAdmin, loaded: LoadedConfig): Promise<OrganizationPlan[]> {
  const plans: OrganizationPlan[] = [];
  for (const org of loaded.config.organizations) {
    const state = await readOrganization(client, org.slug);
    plans.push({ slug: org.slug, state, plan: planOrganization(org, state, loaded.secrets) });
  }
  return plans;
}

const planJson = (plans: OrganizationPlan[], prune: boolean) => ({
  organizations: plans.map(({ slug, plan }) => ({ slug, changes: [...plan.changes, ...(prune ? plan.prunable : [])], prunable: prune ? [] : plan.prunable, warnings: plan.warnings, problems: plan.problems })),
  summary: summarize(plans, prune),
});

function fileOf(args: ParsedArgs, command: string): string {
  const file = flagString(args, "file");
  if (!file) throw new UsageError(`Which file? \`porta ${command} -f porta.yaml\``);
  return file;
}

/** Runs a configuration command; `connect` is called only once the file is known to be good. */
export async function runConfigCommand(command: ConfigCommand, args: ParsedArgs, output: Output, connect: () => Promise<PortaAdmin>): Promise<number> {
  const json = args.flags.get("json") === true;
  const prune = args.flags.get("prune") === true;

  if (command === "export") {
    const orgs = flagString(args, "org")
      ?.split(",")
      .map((s) => s.trim())
      .filter(Boolean);
    if (!orgs || orgs.length === 0) throw new UsageError("Which organization? `porta export --org SLUG --format yaml`");
    const format = flagString(args, "format") ?? "yaml";
    if (format !== "yaml" && format !== "json") throw new UsageError(`--format is yaml or json (got "${format}").`);
    const client = await connect();
    const exported = [];
    for (const slug of orgs) {
      const state = await readOrganization(client, slug);
      if (!state) throw new UsageError(`No organization has the slug "${slug}".`);
      exported.push(exportOrganization(state));
      const { samlConnections, registeredClients } = state.unmanaged;
      if (samlConnections.length > 0) output.info(`${slug}: SAML connections are not part of the file and were left out: ${samlConnections.join(", ")}.`);
      if (registeredClients.length > 0) output.info(`${slug}: self-registered clients manage themselves and were left out: ${registeredClients.join(", ")}.`);
    }
    const schema = flagString(args, "schema");
    const text = format === "yaml" ? renderConfigYaml(exported, schema) : `${JSON.stringify({ version: 1, organizations: exported }, null, 2)}\n`;
    const target = flagString(args, "output");
    if (target) {
      writeFileSync(target, text);
      output.info(`Wrote ${exported.length} organization(s) to ${target}. Secrets are environment variable references: set them before \`porta apply\`.`);
    } else {
      process.stdout.write(text);
    }
    return 0;
  }

  const loaded = loadConfig(fileOf(args, command));
  const client = await connect();
  const plans = await planAll(client, loaded);
  const problems = plans.flatMap((p) => p.plan.problems);

  if (command === "plan") {
    if (json) output.result(planJson(plans, prune));
    else output.result(renderPlan(plans, prune));
    return problems.length > 0 ? 1 : 0;
  }

  if (!json) output.result(renderPlan(plans, prune));
  if (problems.length > 0) throw new UsageError("The plan names things that do not exist (see the errors above); nothing was changed.");
  const secretsOut = flagString(args, "secrets-out");
  const issued: IssuedSecret[] = [];
  try {
    const made = await applyPlans(client, plans, {
      prune,
      secrets: loaded.secrets,
      onApplied: (change) => {
        if (!json) output.info(`${change.action}d ${change.kind} "${change.key}" (${change.organization})`);
      },
      onSecret: (secret) => {
        issued.push(secret);
        // Written at once, so that a later failure does not lose a secret Porta shows only once.
        if (secretsOut) appendFileSync(secretsOut, `${JSON.stringify(secret)}\n`, { mode: 0o600 });
      },
    });
    if (!secretsOut)
      for (const s of issued)
        output.info(`${s.kind} "${s.key}" (${s.organization}) got a secret that is not shown: pass --secrets-out FILE to keep such secrets, or issue a new one (${s.kind === "client" ? `porta clients generate-secret ${s.id}` : `porta webhooks rotate-secret ${s.organization} ${s.id}`}).`);
    if (json) output.result({ ...planJson(plans, prune), applied: made });
    else output.info(made === 0 ? "No changes: the server already matches the file." : `Apply complete: ${made} change(s).`);
    return 0;
  } catch (error) {
    if (error instanceof ApplyStoppedError) {
      if (json) output.result({ error: { code: error.failure.code, status: error.failure.status, message: error.message, entity: { kind: error.change.kind, key: error.change.key, organization: error.change.organization } } });
      else {
        output.info(`Error: ${error.message}`);
        for (const d of error.failure.details ?? []) output.info(`  ${d.field}: ${d.message}`);
      }
      return 1;
    }
    throw error;
  }
}
