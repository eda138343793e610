import js from "@eslint/js";
import globals from "globals";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["build/**", "dist/**", ".scratch/**", "node_modules/**", "app/generated/**", ".data/**", "packages/*/dist/**", "test-results/**", "playwright-report/**"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node, ...globals.browser } },
    rules: {
      "@typescript-eslint/no-explicit-any": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/consistent-type-imports": ["error", { fixStyle: "inline-type-imports" }],
      "no-console": "error",
    },
  },
  {
    files: ["scripts/**", "bench/**", "test/**", "e2e/**", "**/*.test.ts"],
    rules: { "no-console": "off" },
  },
  // The layers of docs/architecture.md. Each file falls in exactly one of these blocks (a later
  // block would replace an earlier one's list for the same file).
  {
    files: ["app/routes/**"],
    rules: {
      "no-restricted-imports": ["error", { patterns: [
        { group: ["./*", "../routes/*", "~/routes/*"], message: "Routes never import other routes: move what they share to app/.server, app/components or app/schemas." },
        { group: ["~/.server/db/*", "~/.server/cache/*", "~/generated/*"], message: "Routes call a service in app/.server; they never reach the database or the cache themselves." },
      ] }],
    },
  },
  {
    files: ["app/.server/db/**", "app/.server/cache/**", "app/.server/crypto/**", "app/.server/logging/**", "app/.server/config/**"],
    ignores: ["**/*.test.ts"],
    rules: {
      "no-restricted-imports": ["error", { patterns: [
        { group: ["**/admin/*", "**/auth/*", "**/console/*", "**/interaction/*", "**/sign-in/*", "**/oidc/*", "**/http/*", "**/services", "**/context", "**/mail/*", "**/jobs/*", "**/branding/*", "**/directory/*"], message: "The storage and infrastructure layer never imports the services above it." },
        { group: ["**/routes/*", "~/routes/*", "**/components/*", "~/components/*"], message: "Server code never imports routes or components." },
      ] }],
    },
  },
  {
    files: ["app/.server/**"],
    ignores: [
      "app/.server/db/**",
      "app/.server/cache/**",
      "app/.server/crypto/**",
      "app/.server/logging/**",
      "app/.server/config/**",
      "app/.server/outbound/**",
      // The Admin API's own layer (its HTTP helpers and operation table) and the console, its in-process client.
      "app/.server/admin/http/**",
      "app/.server/admin/operations/**",
      "app/.server/console/**",
      "app/.server/jobs/**",
    ],
    rules: {
      "no-restricted-imports": ["error", { patterns: [
        { group: ["**/routes/*", "~/routes/*", "**/components/*", "~/components/*"], message: "Server code never imports routes or components." },
        { group: ["**/http/route", "**/http/serve", "**/http/router", "**/http/require-admin"], message: "Services never depend on the Admin API's HTTP layer; they throw errors from app/.server/errors.ts and take a context." },
        { group: ["**/services", "~/.server/services"], message: "Only doors and the composition root see the Services bag; take a Context naming what you touch (app/.server/context.ts)." },
      ] }],
    },
  },
  {
    // The doors (what a request enters through: the HTTP app, registration's router, the sign-in's
    // gate, the account page's) and the composition root see the Services bag and build the
    // contexts the services take (docs/architecture.md, "The service context"); so do the tests
    // beside the code. This block replaces the list above for these files, without the bag's rule;
    // the blocks below (the jobs, the outbound guard, the Admin API, the console) replace it in turn.
    files: [
      "app/.server/http/app.ts",
      "app/.server/registration/routes.ts",
      "app/.server/scim/routes.ts",
      "app/.server/ssf/routes.ts",
      "app/.server/sign-in/door.ts",
      "app/.server/account/page.ts",
      "app/.server/services.ts",
      "app/.server/start.ts",
      "app/.server/main.ts",
      "app/.server/context.ts",
      "app/.server/job-table.ts",
      "app/.server/**/*.test.ts",
    ],
    rules: {
      "no-restricted-imports": ["error", { patterns: [
        { group: ["**/routes/*", "~/routes/*", "**/components/*", "~/components/*"], message: "Server code never imports routes or components." },
        { group: ["**/http/route", "**/http/serve", "**/http/router", "**/http/require-admin"], message: "Services never depend on the Admin API's HTTP layer; they throw errors from app/.server/errors.ts and take a context." },
      ] }],
    },
  },
  {
    // A sign-in method (docs/architecture.md, "Sign-in") is one file behind the method contract:
    // it never imports another method nor the flow that sequences them. This block comes after the
    // one for app/.server/** and replaces its list for these files, so it repeats that list.
    files: ["app/.server/sign-in/methods/**"],
    ignores: ["**/*.test.ts"],
    rules: {
      "no-restricted-imports": ["error", { patterns: [
        { group: ["./*", "../methods/*", "../flow", "~/.server/sign-in/methods/*", "~/.server/sign-in/flow", "**/sign-in/flow", "**/sign-in/methods/*"], message: "A sign-in method never imports another method nor the flow: what methods share lives beside them in app/.server/sign-in (method.ts, code-factor.ts, plan.ts, pending.ts)." },
        { group: ["**/routes/*", "~/routes/*", "**/components/*", "~/components/*"], message: "Server code never imports routes or components." },
        { group: ["**/http/route", "**/http/serve", "**/http/router", "**/http/require-admin"], message: "Services never depend on the Admin API's HTTP layer; they throw errors from app/.server/errors.ts and take a context." },
        { group: ["**/services", "~/.server/services"], message: "Only doors and the composition root see the Services bag; take a Context naming what you touch (app/.server/context.ts)." },
      ] }],
    },
  },
  {
    // The outbound HTTP guard is shared by every feature that fetches what someone else chose.
    files: ["app/.server/outbound/**"],
    rules: {
      "no-restricted-imports": ["error", { patterns: [
        { group: ["../*", "~/.server/*", "~/*"], message: "The outbound guard imports nothing of Porta's: features use it, never the other way round." },
      ] }],
    },
  },
  {
    // The job queue learns its jobs from the job table it is started with (decision 072).
    files: ["app/.server/jobs/**"],
    rules: {
      "no-restricted-imports": ["error", { patterns: [
        { group: ["../*", "!../db", "!../db/*", "~/.server/*", "!~/.server/db", "!~/.server/db/*"], message: "The job queue knows no feature: a feature defines its jobs beside its code and the job table (app/.server/job-table.ts) lists them." },
        { group: ["**/routes/*", "~/routes/*", "**/components/*", "~/components/*"], message: "Server code never imports routes or components." },
      ] }],
    },
  },
  {
    // The Admin API's HTTP layer and the console are doors: they see the Services bag.
    files: ["app/.server/admin/http/**", "app/.server/console/**"],
    rules: {
      "no-restricted-imports": ["error", { patterns: [
        { group: ["**/routes/*", "~/routes/*", "**/components/*", "~/components/*"], message: "Server code never imports routes or components." },
      ] }],
    },
  },
  {
    // The operation table's handlers take the context `runOperation` builds.
    files: ["app/.server/admin/operations/**"],
    ignores: ["**/*.test.ts"],
    rules: {
      "no-restricted-imports": ["error", { patterns: [
        { group: ["**/routes/*", "~/routes/*", "**/components/*", "~/components/*"], message: "Server code never imports routes or components." },
        { group: ["**/services", "~/.server/services"], message: "Only doors and the composition root see the Services bag; take a Context naming what you touch (app/.server/context.ts)." },
      ] }],
    },
  },
  {
    files: ["app/components/**", "app/schemas/**", "app/i18n/**"],
    rules: {
      "no-restricted-imports": ["error", { patterns: [
        { group: ["**/.server/*", "~/.server/*", "**/routes/*", "~/routes/*"], message: "Shared code (components, schemas, i18n) never imports server code or routes." },
      ] }],
    },
  },
);
