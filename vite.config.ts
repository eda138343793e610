import { fileURLToPath } from "node:url";
import { vitePlugin as remix } from "@remix-run/dev";
import { defineConfig } from "vite";

declare module "@remix-run/node" {
  interface Future {
    v3_singleFetch: true;
  }
}

export default defineConfig({
  resolve: {
    // tsconfig `paths` alone do not reach the SSR build: without this alias it cannot resolve `~/`.
    alias: { "~": fileURLToPath(new URL("./app", import.meta.url)) },
  },
  server: { hmr: { port: 24678 } },
  plugins: [
    remix({
      ignoredRouteFiles: ["**/*.test.*", "**/__*.*"],
      future: {
        v3_fetcherPersist: true,
        v3_relativeSplatPath: true,
        v3_throwAbortReason: true,
        v3_singleFetch: true,
        // Off (decision 060): the whole route manifest ships once as a cached asset, instead of a
        // partial manifest worked out and inlined at every page render, which cost 12–20 % of a
        // sign-in page's CPU (Remix v2 matches every route's pattern anew for it).
        v3_lazyRouteDiscovery: false,
      },
    }),
  ],
});
