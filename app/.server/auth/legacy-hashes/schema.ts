/** The stored shape is shared with the export/import package (app/schemas), which carries it. */
export * from "~/schemas/legacy-password";
