import { SLUG_PATTERN_ANY_CASE } from "~/schemas/slug";

/**
 * `/{slug}/ssf/...` and the transmitter's configuration metadata (decision 093). A module of its
 * own so that the edge guard can know these paths without loading the service: like the
 * protocol's endpoints they take bearer tokens from any origin and answer in OAuth's error form.
 */
const SSF_PATH = /^\/([^/]+)\/(?:ssf(?:\/.*)?|\.well-known\/ssf-configuration)$|^\/\.well-known\/ssf-configuration\/([^/]+)$/;

export function isSsfPath(path: string): boolean {
  const match = SSF_PATH.exec(path);
  return Boolean(match && SLUG_PATTERN_ANY_CASE.test((match[1] ?? match[2])!));
}
