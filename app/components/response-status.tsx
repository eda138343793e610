import { createContext, useContext } from "react";

/**
 * The status the server answers a page with. The error boundary reads it to tell "try again
 * shortly" (503: a store did not answer) from a failure that retrying will not fix; in the
 * browser there is none.
 */
export const ResponseStatusContext = createContext<number | undefined>(undefined);
export const useResponseStatus = () => useContext(ResponseStatusContext);
