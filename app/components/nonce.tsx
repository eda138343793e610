import { createContext, useContext } from "react";

/** The per-response CSP nonce; only the server renders it, the browser needs none. */
export const NonceContext = createContext<string | undefined>(undefined);
export const useNonce = () => useContext(NonceContext);
