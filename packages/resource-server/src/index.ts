export type { AuthInfo } from "./auth-info.js";
export { BearerError, IssuerUnavailableError, type BearerErrorCode } from "./errors.js";
export { createVerifier, ACCESS_TOKEN_ALGORITHMS, type Verifier, type VerifierOptions } from "./verify.js";
export { requireBearerAuth, bearerChallenge, bearerTokenOf, type BearerAuthOptions, type AuthenticatedRequest } from "./middleware.js";
export {
  protectedResourceMetadata,
  protectedResourceMetadataHandler,
  protectedResourceMetadataPath,
  protectedResourceMetadataUrl,
  PROTECTED_RESOURCE_WELL_KNOWN,
  type NextFunction,
  type ProtectedResourceMetadata,
  type ProtectedResourceMetadataOptions,
} from "./metadata.js";
