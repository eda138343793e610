export { PortaAdmin, type PortaAdminOptions } from "./client.js";
export type { AuthProvider } from "./auth/provider.js";
export { staticToken } from "./auth/provider.js";
export { clientCredentials, type ClientCredentialsOptions } from "./auth/client-credentials.js";
export { cliCredentials, type CliCredentialsOptions } from "./auth/cli-credentials.js";
export { readCredentialsFile, writeCredentialsFile, updateProfile, type CredentialsFile, type StoredCredentials } from "./auth/credentials-file.js";
export { requestToken, tokenEndpointOf, type TokenResponse } from "./auth/token-endpoint.js";
export type { CallOptions } from "./core/options.js";
export type { RawRequest, RawResponse, TransportOptions } from "./core/request.js";
export type { FieldSpec, Namespace, Namespaces, OperationFunction, OperationHelp, OperationId, OperationResult, OperationSpec, WithEtag } from "./core/operation.js";
export {
  PortaError,
  PortaAuthenticationError,
  PortaForbiddenError,
  PortaNotFoundError,
  PortaValidationError,
  PortaConflictError,
  PortaRateLimitError,
  PortaServerError,
  PortaTimeoutError,
  PortaConnectionError,
  connectionErrorOf,
  errorFromResponse,
  type ConnectionFailure,
  type FieldDetail,
} from "./core/errors.js";
export { operationHelp, operations, type Operations } from "./generated/operations.js";
