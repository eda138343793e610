import { createHash } from "node:crypto";
import type { PackageContent } from "~/schemas/transfer";

/**
 * An import "as a copy" clones an organization on the same deployment (a staging tenant from
 * production, a template for a new customer). Client ids are global and each secret belongs to
 * one client, so the copy's clients get ids of their own and no secrets: an operator makes one per
 * client afterwards. The new id is derived from the target slug and the original id, so applying
 * the same copy again finds the same clients and changes nothing.
 */
export function copiedClientId(targetSlug: string, originalId: string): string {
  const bytes = createHash("sha256").update(`porta-copy\u0000${targetSlug}\u0000${originalId}`).digest().subarray(0, 16);
  // An RFC 9562 version 8 (custom) UUID: the bits are ours, the shape is every other client id's.
  bytes[6] = (bytes[6]! & 0x0f) | 0x80;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

export function asCopy(content: PackageContent, targetSlug: string): PackageContent {
  return {
    ...content,
    clients: content.clients.map((client) => ({ ...client, id: copiedClientId(targetSlug, client.id), secrets: [] })),
    // The copy's clients keep their API resource grants under their new ids.
    ...(content.apiResources
      ? { apiResources: content.apiResources.map((resource) => ({ ...resource, grants: resource.grants.map((grant) => ({ ...grant, client: copiedClientId(targetSlug, grant.client) })) })) }
      : {}),
  };
}
