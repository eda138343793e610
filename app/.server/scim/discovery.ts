import { MAX_FILTER_LENGTH } from "./filter";
import { GROUP_SCHEMA } from "./groups";
import { MAX_PATCH_OPERATIONS } from "./patch";
import { MAX_COUNT } from "./resource";
import { USER_SCHEMA } from "./users";

/**
 * The endpoint's self-description (RFC 7644 §4): what Porta supports, the two resource types and
 * the attributes Porta keeps of each. Static but for the locations, which name the endpoint.
 */
const SPC_SCHEMA =
  "urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig";
const RESOURCE_TYPE_SCHEMA =
  "urn:ietf:params:scim:schemas:core:2.0:ResourceType";
const SCHEMA_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:Schema";

/** The largest request body the endpoint reads. */
export const MAX_SCIM_BODY_BYTES = 256 * 1024;

export function serviceProviderConfig(endpoint: string) {
  return {
    schemas: [SPC_SCHEMA],
    documentationUri: "https://www.rfc-editor.org/rfc/rfc7644",
    patch: { supported: true },
    bulk: { supported: false, maxOperations: 0, maxPayloadSize: 0 },
    filter: { supported: true, maxResults: MAX_COUNT },
    changePassword: { supported: false },
    sort: { supported: false },
    etag: { supported: true },
    authenticationSchemes: [
      {
        type: "oauthbearertoken",
        name: "Bearer token",
        description:
          "A SCIM token of the organization, issued in Porta's Admin API or console.",
        primary: true,
      },
    ],
    meta: {
      resourceType: "ServiceProviderConfig",
      location: `${endpoint}/ServiceProviderConfig`,
    },
    "urn:porta:scim:limits": {
      maxFilterLength: MAX_FILTER_LENGTH,
      maxPatchOperations: MAX_PATCH_OPERATIONS,
      maxPayloadSize: MAX_SCIM_BODY_BYTES,
    },
  };
}

export function resourceTypes(endpoint: string) {
  const type = (id: "User" | "Group", schema: string) => ({
    schemas: [RESOURCE_TYPE_SCHEMA],
    id,
    name: id,
    endpoint: `/${id}s`,
    description:
      id === "User"
        ? "A user of the organization"
        : "A role of the organization",
    schema,
    meta: {
      resourceType: "ResourceType",
      location: `${endpoint}/ResourceTypes/${id}`,
    },
  });
  return [type("User", USER_SCHEMA), type("Group", GROUP_SCHEMA)];
}

const attribute = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  type: "string",
  multiValued: false,
  required: false,
  caseExact: false,
  mutability: "readWrite",
  returned: "default",
  uniqueness: "none",
  ...extra,
});

export function schemas(endpoint: string) {
  const meta = (id: string) => ({
    resourceType: "Schema",
    location: `${endpoint}/Schemas/${id}`,
  });
  return [
    {
      schemas: [SCHEMA_SCHEMA],
      id: USER_SCHEMA,
      name: "User",
      description:
        "A user of the organization; userName is the email address they sign in with",
      attributes: [
        attribute("userName", {
          required: true,
          uniqueness: "server",
          description: "The user's email address, lower-cased",
        }),
        attribute("externalId", { caseExact: true }),
        attribute("name", {
          type: "complex",
          subAttributes: [attribute("givenName"), attribute("familyName")],
        }),
        attribute("displayName", {
          mutability: "readOnly",
          description: "The given and family names, or the email address",
        }),
        attribute("emails", {
          type: "complex",
          multiValued: true,
          description:
            "The one address, of type work and primary; the same as userName",
          subAttributes: [
            attribute("value"),
            attribute("type", { canonicalValues: ["work"] }),
            attribute("primary", { type: "boolean" }),
          ],
        }),
        attribute("active", {
          type: "boolean",
          description:
            "false: the user cannot sign in and their sessions have ended",
        }),
      ],
      meta: meta(USER_SCHEMA),
    },
    {
      schemas: [SCHEMA_SCHEMA],
      id: GROUP_SCHEMA,
      name: "Group",
      description: "A role of the organization; its members hold it",
      attributes: [
        attribute("displayName", {
          required: true,
          uniqueness: "server",
          description: "The role's name: letters, digits and _ . : -",
        }),
        attribute("externalId", { caseExact: true }),
        attribute("members", {
          type: "complex",
          multiValued: true,
          subAttributes: [
            attribute("value", { mutability: "immutable" }),
            attribute("display", { mutability: "readOnly" }),
            attribute("$ref", {
              type: "reference",
              referenceTypes: ["User"],
              mutability: "readOnly",
            }),
          ],
        }),
      ],
      meta: meta(GROUP_SCHEMA),
    },
  ];
}
