import { data, type HeadersFunction, type LoaderFunctionArgs } from "@remix-run/node";
import { useLoaderData } from "@remix-run/react";
import { LinkifiedText } from "~/components/linkified-text";
import { requireDevOutboxMessage } from "~/.server/mail/dev-outbox";

const NO_STORE = { "Cache-Control": "no-store" };

export const headers: HeadersFunction = () => NO_STORE;

/** GET /dev/outbox/:id: one message, its HTML part in a sandboxed frame and its text part. */
export async function loader({ context, params }: LoaderFunctionArgs) {
  return data({ message: await requireDevOutboxMessage(context, params.id) }, { headers: NO_STORE });
}

export default function DevOutboxMessage() {
  const { message } = useLoaderData<typeof loader>();
  return (
    <article aria-labelledby="message-subject">
      <h2 id="message-subject">{message.subject}</h2>
      <dl style={{ display: "grid", gridTemplateColumns: "auto 1fr", gap: "0.25rem 1rem" }}>
        <dt>To</dt>
        <dd style={{ margin: 0 }}>{message.to}</dd>
        <dt>Created</dt>
        <dd style={{ margin: 0 }}>
          <time dateTime={message.createdAt}>{message.createdAt}</time>
        </dd>
      </dl>
      <h3>HTML</h3>
      {/* No scripts and no same-origin access; links may open in a new tab. */}
      <iframe
        title={`HTML part of “${message.subject}”`}
        sandbox="allow-popups allow-popups-to-escape-sandbox"
        srcDoc={message.html}
        style={{ width: "100%", height: "36rem", border: "1px solid #e3e5ea", borderRadius: "6px", background: "#fff" }}
      />
      <h3>Text</h3>
      <pre style={{ whiteSpace: "pre-wrap", wordBreak: "break-word", background: "#fff", border: "1px solid #e3e5ea", borderRadius: "6px", padding: "1rem" }}>
        <LinkifiedText text={message.text} />
      </pre>
    </article>
  );
}
