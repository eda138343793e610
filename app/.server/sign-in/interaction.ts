import type { Request as ExpressRequest, Response as ExpressResponse } from "express";
import type { Organization } from "~/generated/prisma/client";
import { effectiveLoginMethods, type LoginMethod } from "~/schemas/login-methods";
import { getClientRecord, type ClientRecord } from "../directory/clients";
import { getOrganizationById } from "../directory/organizations";
import { ACCOUNT_CLIENT_ID, accountClientRecord } from "../oidc/storage/account-client";
import { ORGANIZATION_CONSOLE_CLIENT_ID, organizationConsoleClientRecord } from "../oidc/storage/organization-console-client";
import { getMetadataDocumentClient } from "../oidc/storage/document-clients";
import { lookupInteractionOrganization } from "../oidc/storage/adapter";
import { organizationIssuer } from "../oidc/edge/endpoints";
import type { Interaction } from "../oidc/provider/interaction-results";
import type { TenantProvider } from "../oidc/provider/registry";
import type { Context } from "../context";

/** Everything a login page needs about the interaction it serves. */
export interface InteractionContext {
  uid: string;
  tenant: TenantProvider;
  organization: Organization;
  client: ClientRecord;
  interaction: Interaction;
  methods: LoginMethod[];
}

export class InteractionExpiredError extends Error {
  constructor() {
    super("the sign-in request expired or is unknown");
    this.name = "InteractionExpiredError";
  }
}

/**
 * Finds the organization and provider of /interaction/:uid and loads the interaction with the
 * provider's own check of the interaction cookie. Any mismatch (unknown uid, expired, another
 * browser's uid, suspended organization) is the same InteractionExpiredError.
 */
export async function loadInteraction(ctx: Context<"store" | "cache" | "oidc" | "config" | "clientDocuments">, req: ExpressRequest, res: ExpressResponse, uid: string): Promise<InteractionContext> {
  const organizationId = await lookupInteractionOrganization(ctx.store, uid);
  if (!organizationId) throw new InteractionExpiredError();
  const organization = await getOrganizationById(ctx.db, ctx.cache, organizationId);
  if (!organization) throw new InteractionExpiredError();
  const tenant = await ctx.oidc.get(organization.slug);
  if (!tenant) throw new InteractionExpiredError();
  let interaction: Interaction;
  try {
    interaction = await tenant.provider.interactionDetails(req, res);
  } catch {
    throw new InteractionExpiredError();
  }
  if (interaction.uid !== uid) throw new InteractionExpiredError();
  const clientId = String(interaction.params.client_id);
  const issuer = organizationIssuer(ctx.config.baseUrl, organization.slug);
  const client =
    clientId === ACCOUNT_CLIENT_ID
      ? accountClientRecord(organization, issuer)
      : clientId === ORGANIZATION_CONSOLE_CLIENT_ID
        ? organizationConsoleClientRecord(organization, issuer)
        : ((await getMetadataDocumentClient(organization, clientId, ctx.clientDocuments)) ?? (await getClientRecord(ctx.db, ctx.cache, clientId)));
  if (!client || client.organizationId !== organization.id) throw new InteractionExpiredError();
  return { uid, tenant, organization, client, interaction, methods: effectiveLoginMethods(client, organization) };
}
