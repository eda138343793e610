import { createServer } from "node:net";
import { ConfigError } from "./env";

/**
 * Checked before the database opens (which can take a while embedded), so that a port taken by
 * another process is reported in a second, not after the whole start. The listener is closed
 * again at once; a race with another process in between is reported by the real listen.
 */
export function assertPortFree(port: number, host = "0.0.0.0", variable: "PORT" | "METRICS_PORT" = "PORT"): Promise<void> {
  if (port === 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", (error: NodeJS.ErrnoException) => {
      if (error.code === "EADDRINUSE") reject(new ConfigError(variable, `${port} is already in use by another process; stop it or choose another ${variable}`));
      else if (error.code === "EACCES") reject(new ConfigError(variable, `${port} needs privileges this process does not have; choose a ${variable} above 1023`));
      else reject(new ConfigError(variable, `cannot listen on ${port}: ${error.code ?? error.message}`));
    });
    probe.listen({ port, host, exclusive: true }, () => probe.close(() => resolve()));
  });
}
