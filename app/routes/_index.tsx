import type { MetaFunction } from "@remix-run/node";

export const meta: MetaFunction = () => [{ title: "Porta" }];

export default function Index() {
  return (
    <main className="page">
      <section className="card" aria-labelledby="title">
        <h1 id="title">Porta</h1>
        <p>This identity provider is running.</p>
        <p className="muted">
          Applications sign people in through their organization&apos;s address, for example{" "}
          <code>/&#123;organization&#125;/.well-known/openid-configuration</code>.
        </p>
      </section>
    </main>
  );
}
