import { useState } from "react";
import { useTranslation } from "react-i18next";
import type { Client } from "~/schemas/client";
import { connectSnippet, LIBRARIES, type LibraryId } from "./connect-snippets";
import { CopyButton } from "./ui";

/** An organization's protocol addresses, in the order `organizationEndpoints` gives them. */
export type Endpoints = Array<{ name: string; url: string }>;

const urlOf = (endpoints: Endpoints, name: string) => endpoints.find((e) => e.name === name)?.url ?? "";

function CopyableValue({ id, label, value }: { id: string; label: string; value: string }) {
  const { t } = useTranslation("console");
  return (
    <div className="copyable">
      <dt id={`${id}-label`}>{label}</dt>
      <dd>
        <code>{value}</code> <CopyButton value={value} label={t("integration.copyNamed", { name: label })} />
      </dd>
    </div>
  );
}

/** The organization page's "connect an app" panel: issuer, discovery and every endpoint, each to copy. */
export function EndpointsPanel({ endpoints }: { endpoints: Endpoints }) {
  const { t } = useTranslation("console");
  return (
    <section className="panel" aria-labelledby="integration-title">
      <h2 id="integration-title">{t("integration.title")}</h2>
      <p className="muted">{t("integration.text")}</p>
      <dl className="copyables">
        {endpoints.map(({ name, url }) => (
          <CopyableValue key={name} id={`endpoint-${name}`} label={t(`integration.endpoints.${name}`)} value={url} />
        ))}
      </dl>
    </section>
  );
}

export type ClientKind = "machine" | "confidential" | "public";

export function clientKindOf(client: Pick<Client, "clientType" | "grantTypes">): ClientKind {
  if (client.clientType === "public") return "public";
  return client.grantTypes.includes("client_credentials") && !client.grantTypes.includes("authorization_code") ? "machine" : "confidential";
}

/**
 * A first request for the client's kind with its own values filled in; the secret, the state
 * and the PKCE values stay placeholders, since the console never has them.
 */
export function quickStart(client: Pick<Client, "id" | "clientType" | "grantTypes" | "redirectUris" | "scope">, endpoints: Endpoints): string {
  const kind = clientKindOf(client);
  const token = urlOf(endpoints, "token");
  if (kind === "machine") {
    return [`# A token for the client itself`, `curl -u '${client.id}:CLIENT_SECRET' -d grant_type=client_credentials ${token}`].join("\n");
  }
  const redirectUri = client.redirectUris[0] ?? "https://your-app.example/callback";
  const scope = ["openid", ...["profile", "email"].filter((s) => client.scope.split(" ").includes(s))].join(" ");
  const authorize = new URL(urlOf(endpoints, "authorization"));
  for (const [key, value] of Object.entries({ response_type: "code", client_id: client.id, redirect_uri: redirectUri, scope })) authorize.searchParams.set(key, value);
  const authorizeUrl = `${authorize.href}&state=STATE&code_challenge=CODE_CHALLENGE&code_challenge_method=S256`;
  const credentials = kind === "confidential" ? `-u '${client.id}:CLIENT_SECRET'` : `-d client_id=${client.id}`;
  return [
    "# 1. Send the browser to (CODE_CHALLENGE = BASE64URL(SHA256(CODE_VERIFIER))):",
    authorizeUrl,
    `# 2. ${redirectUri} receives ?code=…&state=…; exchange the code:`,
    `curl ${credentials} -d grant_type=authorization_code -d code=CODE \\`,
    `  --data-urlencode redirect_uri=${redirectUri} -d code_verifier=CODE_VERIFIER ${token}`,
  ].join("\n");
}

/**
 * ID tokens are ES256 only and the code flow is the only response type (the product's rules): a library that
 * defaults to RS256 or to an ID token from the authorization endpoint fails with an error of its
 * own that names neither, so the page says it, with express-openid-connect's two lines.
 */
function LibraryHint() {
  const { t } = useTranslation("console");
  return (
    <p className="hint" id="client-library-hint">
      {t("integration.libraryHint")} <code>{"idTokenSigningAlg: 'ES256'"}</code> {t("integration.libraryHintAnd")} <code>{"authorizationParams: { response_type: 'code' }"}</code>. {t("integration.libraryHintMore")}{" "}
      <code>docs/integrations.md</code>.
    </p>
  );
}

/** "Connect your app": the chosen library's lines with this client's values. */
function ConnectYourApp({ client, issuer }: { client: Client; issuer: string }) {
  const { t } = useTranslation("console");
  const [library, setLibrary] = useState<LibraryId>("openid-client");
  const snippet = connectSnippet(library, { issuer, client });
  return (
    <>
      <h3 id="connect-title">{t("integration.connectTitle")}</h3>
      <p className="muted">{t("integration.connectText")}</p>
      <label htmlFor="connect-library">{t("integration.library")}</label>{" "}
      <select id="connect-library" value={library} onChange={(event) => setLibrary(event.target.value as LibraryId)}>
        {LIBRARIES.map((l) => (
          <option key={l.id} value={l.id}>
            {l.name}
          </option>
        ))}
      </select>
      <pre className="quick-start connect-snippet" aria-labelledby="connect-title">
        <code>{snippet}</code>
      </pre>
      <CopyButton value={snippet} label={t("integration.copyNamed", { name: t("integration.connectTitle") })} />
    </>
  );
}

/** The client page's "use this client" panel: its id, redirect URIs, the issuer and a quick start. */
export function ClientIntegrationPanel({ client, endpoints }: { client: Client; endpoints: Endpoints }) {
  const { t } = useTranslation("console");
  const kind = clientKindOf(client);
  const commands = quickStart(client, endpoints);
  return (
    <section className="panel" aria-labelledby="client-integration-title">
      <h2 id="client-integration-title">{t("integration.clientTitle")}</h2>
      <p className="muted">{t(`integration.kind.${kind}`)}</p>
      <dl className="copyables">
        <CopyableValue id="client-id" label={t("integration.clientId")} value={client.id} />
        <div className="copyable">
          <dt>{t("clientDetail.typeLabel")}</dt>
          <dd>
            {t(`clients.types.${client.clientType}`)} · {t(`integration.applicationType.${client.applicationType}`)}
          </dd>
        </div>
        <CopyableValue id="client-issuer" label={t("integration.endpoints.issuer")} value={urlOf(endpoints, "issuer")} />
        <CopyableValue id="client-discovery" label={t("integration.endpoints.discovery")} value={urlOf(endpoints, "discovery")} />
        {kind !== "machine" ? (
          <div className="copyable">
            <dt>{t("integration.redirectUris")}</dt>
            <dd>
              {client.redirectUris.length > 0 ? (
                <ul className="plain-list">
                  {client.redirectUris.map((uri) => (
                    <li key={uri}>
                      <code>{uri}</code>
                    </li>
                  ))}
                </ul>
              ) : (
                t("integration.noRedirectUris")
              )}
            </dd>
          </div>
        ) : null}
      </dl>
      <h3>{t("integration.quickStart")}</h3>
      {/* Wrapped, not scrolled: a scrolling region would need its own keyboard focus. */}
      <pre className="quick-start">
        <code>{commands}</code>
      </pre>
      <CopyButton value={commands} label={t("integration.copyNamed", { name: t("integration.quickStart") })} />
      {kind !== "public" ? <p className="hint">CLIENT_SECRET: {t("integration.secretPlaceholder")}</p> : null}
      {kind !== "machine" ? <LibraryHint /> : null}
      {kind !== "machine" ? <ConnectYourApp client={client} issuer={urlOf(endpoints, "issuer")} /> : null}
    </section>
  );
}
