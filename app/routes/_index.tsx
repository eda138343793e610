import { type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { useLoaderData } from "@remix-run/react";
import { isDevOutboxAvailable } from "~/.server/mail/dev-outbox";

export const meta: MetaFunction = () => [{ title: "Porta" }];

export async function loader({ context }: LoaderFunctionArgs) {
  return { devOutbox: isDevOutboxAvailable(context) };
}

export default function Index() {
  const { devOutbox } = useLoaderData<typeof loader>();
  return (
    <main className="page">
      <section className="card" aria-labelledby="title">
        <h1 id="title">Porta</h1>
        <p>This identity provider is running.</p>
        <h2>Operators</h2>
        <p>
          Open the <a href="/console">console</a> and sign in with the administrator&apos;s email and password that{" "}
          <code>npm start</code> printed the first time it ran (or <code>ADMIN_BOOTSTRAP_EMAIL</code> and{" "}
          <code>ADMIN_BOOTSTRAP_PASSWORD</code> when those are set). Its dashboard lists the steps to a first app.
        </p>
        <h2>Developers</h2>
        <p>
          In the console, create an organization, an application and a client: the client&apos;s page shows the
          settings and a snippet for your OpenID Connect library.
        </p>
        <p className="muted">
          Applications sign people in through their organization&apos;s address, for example{" "}
          <code>/&#123;organization&#125;/.well-known/openid-configuration</code>.
        </p>
        {devOutbox ? (
          <p>
            SMTP is not configured: sent mail is in the <a href="/dev/outbox">dev outbox</a>.
          </p>
        ) : null}
      </section>
    </main>
  );
}
