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
