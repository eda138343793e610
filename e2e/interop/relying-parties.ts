import { readFileSync } from "node:fs";
import type { Server } from "node:http";
import { ExpressAuth, getSession, type ExpressAuthConfig } from "@auth/express";
import express, { type Express } from "express";
import session from "express-session";
import { auth as openidConnect, type ConfigParams } from "express-openid-connect";
import passport from "passport";
import { Strategy as OpenIDConnectStrategy, type Profile, type VerifyCallback } from "passport-openidconnect";
import { INTEROP_PORTS } from "../interop-seed";
import type { Seed } from "../seed";

/**
 * Four off-the-shelf relying parties, each configured as its own README shows plus only the
 * settings docs/integrations.md gives for it. Each app answers `/` with "signed in as <email>" or
 * "signed out", so the spec sees what the library concluded, not what Porta sent.
 */
export interface RelyingParty {
  url: string;
  close(): Promise<void>;
}

type Interop = NonNullable<Seed["interop"]>;

function listen(app: Express, port: number): Promise<RelyingParty> {
  return new Promise((resolve, reject) => {
    const server: Server = app.listen(port, "127.0.0.1", () =>
      resolve({ url: `http://localhost:${port}`, close: () => new Promise((done) => server.close(() => done())) }),
    );
    server.on("error", reject);
  });
}

const page = (body: string) => `<!doctype html><html lang="en"><title>Relying party</title><main>${body}</main></html>`;

/** express-openid-connect: its README's `auth()` plus ES256 and the code flow (its defaults are RS256 and id_token). */
export function expressOpenidConnect(interop: Interop): Promise<RelyingParty> {
  const port = INTEROP_PORTS.expressOpenidConnect;
  const app = express();
  const config: ConfigParams = {
    issuerBaseURL: interop.issuer,
    baseURL: `http://localhost:${port}`,
    clientID: interop.clients.expressOpenidConnect.clientId,
    clientSecret: interop.clients.expressOpenidConnect.clientSecret,
    secret: "a long random string for the interop session cookie",
    authRequired: false,
    // Its /logout ends only its own session unless told to end Porta's too (docs/integrations.md).
    idpLogout: true,
    idTokenSigningAlg: "ES256",
    // Not first party: a refresh token needs prompt=consent (docs/integrations.md).
    authorizationParams: { response_type: "code", scope: "openid profile email offline_access", prompt: "consent" },
  };
  app.use(openidConnect(config));
  app.get("/", (req, res) => {
    res.send(page(req.oidc.isAuthenticated() ? `signed in as ${req.oidc.user?.email}` : "signed out"));
  });
  app.get("/refresh", async (req, res) => {
    const before = req.oidc.accessToken;
    if (!before) return void res.status(401).send(page("no access token"));
    const after = await before.refresh();
    res.send(page(after.access_token && after.access_token !== before.access_token ? "refreshed" : "not refreshed"));
  });
  return listen(app, port);
}

/** Auth.js (@auth/express): the generic OIDC provider of its docs; PKCE, state and ES256 come from discovery. */
export function authjs(interop: Interop): Promise<RelyingParty> {
  const port = INTEROP_PORTS.authjs;
  const app = express();
  app.set("trust proxy", true);
  const config: ExpressAuthConfig = {
    trustHost: true,
    secret: "a long random string for the interop auth.js session",
    providers: [
      {
        id: "porta",
        name: "Porta",
        type: "oidc",
        issuer: interop.issuer,
        clientId: interop.clients.authjs.clientId,
        clientSecret: interop.clients.authjs.clientSecret,
      },
    ],
  };
  app.use("/auth/*", ExpressAuth(config));
  app.get("/", async (req, res) => {
    const current = await getSession(req, config);
    res.send(page(current?.user ? `signed in as ${current.user.email}` : "signed out"));
  });
  return listen(app, port);
}

/** oidc-client-ts in the browser: a static single-page app with the library's own browser bundle. */
export function oidcClientTs(interop: Interop): Promise<RelyingParty> {
  const port = INTEROP_PORTS.oidcClientTs;
  // The package exports no path to its browser bundle; a page would load it from a CDN or its own copy.
  const bundle = readFileSync(new URL("../../node_modules/oidc-client-ts/dist/browser/oidc-client-ts.min.js", import.meta.url), "utf8");
  const settings = {
    authority: interop.issuer,
    client_id: interop.clients.oidcClientTs.clientId,
    redirect_uri: `http://localhost:${port}/callback.html`,
    post_logout_redirect_uri: `http://localhost:${port}/`,
    scope: "openid profile email offline_access",
    // Not first party: a refresh token needs prompt=consent (docs/integrations.md).
    extraQueryParams: { prompt: "consent" },
  };
  const script = (body: string) =>
    `<!doctype html><html lang="en"><title>SPA</title><script src="/oidc-client-ts.js"></script><main id="status">loading</main>` +
    `<button onclick="signIn()">Sign in</button><button onclick="refresh()">Refresh</button><button onclick="signOut()">Sign out</button>` +
    `<script>const users = new oidc.UserManager(${JSON.stringify(settings)}); const show = (t) => (document.getElementById("status").textContent = t);\n${body}</script></html>`;
  const app = express();
  app.get("/oidc-client-ts.js", (_req, res) => res.type("js").send(bundle));
  app.get("/", (_req, res) =>
    res.send(
      script(`
        users.getUser().then((u) => show(u ? "signed in as " + u.profile.email : "signed out"), (e) => show("error: " + e.message));
        window.signIn = () => users.signinRedirect();
        window.refresh = () => users.getUser().then((before) => users.signinSilent().then((after) => show(after.access_token !== before.access_token && after.refresh_token ? "refreshed" : "not refreshed"))).catch((e) => show("error: " + e.message));
        window.signOut = () => users.signoutRedirect();`),
    ),
  );
  app.get("/callback.html", (_req, res) =>
    res.send(script(`users.signinRedirectCallback().then(() => location.assign("/"), (e) => show("error: " + e.message));`)),
  );
  return listen(app, port);
}

/** passport-openidconnect: cannot send PKCE, so its client's PKCE setting is `not_required`; nothing else. */
export async function passportOpenidConnect(interop: Interop): Promise<RelyingParty> {
  const port = INTEROP_PORTS.passport;
  // Its options take the endpoints themselves: a developer copies them from the discovery document.
  const discovery = (await (await fetch(`${interop.issuer}/.well-known/openid-configuration`)).json()) as Record<string, string>;
  const strategy = new OpenIDConnectStrategy(
    {
      issuer: interop.issuer,
      authorizationURL: discovery.authorization_endpoint!,
      tokenURL: discovery.token_endpoint!,
      userInfoURL: discovery.userinfo_endpoint!,
      clientID: interop.clients.passport.clientId,
      clientSecret: interop.clients.passport.clientSecret,
      callbackURL: `http://localhost:${port}/callback`,
      scope: ["profile", "email"],
    },
    (_issuer: string, profile: Profile, done: VerifyCallback) => done(null, { email: profile.emails?.[0]?.value ?? "" }),
  );
  passport.use("porta", strategy);
  passport.serializeUser((user, done) => done(null, JSON.stringify(user)));
  passport.deserializeUser((user: string, done) => done(null, JSON.parse(user) as Express.User));
  const app = express();
  app.use(session({ secret: "a long random string for the interop passport session", resave: false, saveUninitialized: false }));
  app.use(passport.authenticate("session"));
  app.get("/login", passport.authenticate("porta"));
  app.get("/callback", passport.authenticate("porta", { successRedirect: "/", failureRedirect: "/failed" }));
  app.get("/failed", (req, res) => res.status(401).send(page(`failed: ${JSON.stringify((req.session as unknown as { messages?: string[] }).messages ?? [])}`)));
  app.get("/", (req, res) => res.send(page(req.user ? `signed in as ${(req.user as { email: string }).email}` : "signed out")));
  app.get("/logout", (req, res, next) => req.logout((error) => (error ? next(error) : res.redirect("/"))));
  return listen(app, port);
}
