import { data, type HeadersFunction, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { Link, Outlet, useLoaderData, useParams } from "@remix-run/react";
import { requireDevOutboxList } from "~/.server/mail/dev-outbox";

const NO_STORE = { "Cache-Control": "no-store" };

export const meta: MetaFunction = () => [{ title: "Dev outbox · Porta" }, { name: "robots", content: "noindex" }];

export const headers: HeadersFunction = () => NO_STORE;

/** GET /dev/outbox: mail Porta would have sent, while SMTP_HOST is unset (loopback requests only). */
export async function loader({ context }: LoaderFunctionArgs) {
  return data(await requireDevOutboxList(context), { headers: NO_STORE });
}

export default function DevOutbox() {
  const { messages } = useLoaderData<typeof loader>();
  const { id: selected } = useParams();
  return (
    <main style={{ maxWidth: "72rem", margin: "0 auto", padding: "1.5rem" }}>
      <h1>Dev outbox</h1>
      <p className="muted">
        SMTP_HOST is unset, so Porta writes every message to <code>$DATA_DIR/outbox</code> instead of sending it. The newest 200 are
        kept. This page answers only requests from this machine.
      </p>
      <div style={{ display: "grid", gridTemplateColumns: "minmax(16rem, 1fr) 2fr", gap: "1.5rem", alignItems: "start" }}>
        <nav aria-label="Messages">
          {messages.length === 0 ? (
            <p>No messages yet.</p>
          ) : (
            <ul style={{ listStyle: "none", margin: 0, padding: 0 }}>
              {messages.map((m) => (
                <li key={m.id} style={{ borderBottom: "1px solid #e3e5ea", padding: "0.5rem 0" }}>
                  <Link to={`/dev/outbox/${m.id}`} aria-current={m.id === selected ? "page" : undefined}>
                    {m.subject || "(no subject)"}
                  </Link>
                  <br />
                  <small className="muted">
                    {m.to} · <time dateTime={m.createdAt}>{m.createdAt.replace("T", " ").slice(0, 19)}</time>
                  </small>
                </li>
              ))}
            </ul>
          )}
        </nav>
        <div>
          <Outlet />
        </div>
      </div>
    </main>
  );
}
