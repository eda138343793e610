/**
 * The names and help of `porta plan`, `porta apply` and `porta export` (decision 088), apart from
 * their code: that code brings the YAML parser and zod, which load only when one of them runs.
 */
export const CONFIG_COMMANDS = ["plan", "apply", "export"] as const;

export const CONFIG_HELP = `Configuration as code (docs/config-as-code.md):

  porta plan -f porta.yaml [--prune]      what apply would change, field by field (nothing is written)
  porta apply -f porta.yaml [--prune] [--secrets-out FILE]
                                          make those changes; an entity changed since it was read stops apply
  porta export --org SLUG[,SLUG…] [--format yaml|json] [--output FILE]
                                          an organization's configuration in the same format

Entities are named by natural keys (organization slug; application, client, role, permission, claim,
identity provider name; webhook URL). Without --prune nothing is deleted: plan lists what --prune would
delete. Secrets are { fromEnv: NAME } in the file and read from the environment; a missing variable
stops before anything is read or written. Secrets Porta issues (a new confidential client's, a new
webhook's) are written only to --secrets-out FILE (0600), never printed.`;

export type ConfigCommand = (typeof CONFIG_COMMANDS)[number];
