import type { Change, Plan } from "./plan";

/**
 * A plan as people read it: one block per organization, `+` create, `~` update, `-` delete,
 * each changed field as `from → to`; what --prune would delete and what the Admin API cannot
 * do are named after the changes.
 */
const KIND_LABEL: Record<Change["kind"], string> = {
  organization: "organization",
  branding: "branding",
  permission: "permission",
  role: "role",
  application: "application",
  claim: "claim",
  client: "client",
  identityProvider: "identity provider",
  webhook: "webhook",
};
const SIGN = { create: "+", update: "~", delete: "-" } as const;

// null as the file writes it: for some fields (a client's loginMethods) it means "follow the organization's".
const show = (value: unknown) => (value === undefined ? "(none)" : JSON.stringify(value));

function renderChange(change: Change): string[] {
  const head = `  ${SIGN[change.action]} ${change.action} ${KIND_LABEL[change.kind]} "${change.key}"`;
  const lines = [head];
  for (const f of change.fields) lines.push(change.action === "create" ? `      ${f.field}: ${show(f.to)}` : `      ${f.field}: ${show(f.from)} → ${show(f.to)}`);
  return lines;
}

export interface PlanSummary {
  create: number;
  update: number;
  delete: number;
}

export function summarize(plans: Array<{ plan: Plan }>, prune: boolean): PlanSummary {
  const all = plans.flatMap(({ plan }) => [...plan.changes, ...(prune ? plan.prunable : [])]);
  return { create: all.filter((c) => c.action === "create").length, update: all.filter((c) => c.action === "update").length, delete: all.filter((c) => c.action === "delete").length };
}

export function renderPlan(plans: Array<{ slug: string; plan: Plan }>, prune: boolean): string {
  const lines: string[] = [];
  for (const { slug, plan } of plans) {
    const deletes = prune ? plan.prunable : [];
    lines.push(`organization "${slug}":`);
    if (plan.changes.length === 0 && deletes.length === 0) lines.push("  no changes");
    for (const change of [...plan.changes, ...deletes]) lines.push(...renderChange(change));
    if (!prune && plan.prunable.length > 0) {
      lines.push("  not in the file (--prune would delete them):");
      for (const c of plan.prunable) lines.push(`    - ${KIND_LABEL[c.kind]} "${c.key}"`);
    }
    for (const w of plan.warnings) lines.push(`  note: ${w}`);
    for (const p of plan.problems) lines.push(`  error: ${p}`);
  }
  const s = summarize(plans, prune);
  lines.push("", `Plan: ${s.create} to create, ${s.update} to update, ${s.delete} to delete.`);
  return lines.join("\n");
}
