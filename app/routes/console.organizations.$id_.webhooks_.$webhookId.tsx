import { data, redirect, type ActionFunctionArgs, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { Link, useActionData, useLoaderData, useLocation } from "@remix-run/react";
import { useTranslation } from "react-i18next";
import { consoleHeaders, NO_STORE, requireConsole, requireConsoleForm } from "~/.server/console/page";
import { ListTable, Moment } from "~/components/console/list-table";
import { ConfirmAction, CursorPager, Notice } from "~/components/console/ui";

export const headers = consoleHeaders;
export const meta: MetaFunction = () => [{ title: "Webhook deliveries · Porta console" }];

/** One endpoint's delivery log (decision 047): each delivery's attempts, and a replay of one that ended. */
export async function loader(args: LoaderFunctionArgs) {
  const console = await requireConsole(args);
  const orgId = args.params.id!;
  const id = args.params.webhookId!;
  const search = new URL(args.request.url).searchParams;
  const deliveryId = search.get("delivery");
  const [org, endpoint, deliveries, delivery] = await Promise.all([
    console.admin("organizations.get", { params: { id: orgId } }),
    console.admin("webhooks.get", { params: { orgId, id } }),
    console.admin("webhooks.listDeliveries", { params: { orgId, id }, query: { limit: "20", cursor: search.get("cursor") ?? undefined } }),
    deliveryId ? console.admin("webhooks.getDelivery", { params: { orgId, id, deliveryId } }) : Promise.resolve(null),
  ]);
  if (!org.ok) throw data({ message: org.error.code }, { status: org.status === 422 ? 404 : org.status });
  if (!endpoint.ok) throw data({ message: endpoint.error.code }, { status: endpoint.status === 422 ? 404 : endpoint.status });
  return data(
    {
      org: org.body,
      endpoint: endpoint.body,
      page: deliveries.ok ? deliveries.body : null,
      delivery: delivery?.ok ? delivery.body : null,
      replayed: search.get("replayed"),
    },
    { headers: NO_STORE },
  );
}

export async function action(args: ActionFunctionArgs) {
  const { console, form } = await requireConsoleForm(args);
  const orgId = args.params.id!;
  const id = args.params.webhookId!;
  if (form.get("intent") !== "replay") return data({ message: "unknown action" }, { status: 400, headers: NO_STORE });
  const deliveryId = String(form.get("deliveryId") ?? "");
  const result = await console.admin("webhooks.replayDelivery", { params: { orgId, id, deliveryId } });
  if (!result.ok) return data({ message: result.error.message }, { status: result.status, headers: NO_STORE });
  return redirect(`/console/organizations/${orgId}/webhooks/${id}?delivery=${deliveryId}&replayed=1`);
}

export default function WebhookDeliveries() {
  const { org, endpoint, page, delivery, replayed } = useLoaderData<typeof loader>();
  const failed = useActionData<typeof action>();
  const { search } = useLocation();
  const { t } = useTranslation("console");
  return (
    <>
      <p className="breadcrumb">
        <Link to={`/console/organizations/${org.id}`}>{org.name}</Link> / <Link to={`/console/organizations/${org.id}/webhooks`}>{t("webhooks.title")}</Link>
      </p>
      <h1>{t("webhooks.deliveriesOf", { url: endpoint.url })}</h1>
      <p className="muted">
        {endpoint.eventTypes.join(", ")} ·{" "}
        {endpoint.enabled ? t("webhooks.on") : endpoint.disabledReason ? t("webhooks.offFailures", { count: endpoint.consecutiveFailures }) : t("webhooks.off")}
      </p>
      {replayed ? <Notice kind="info">{t("webhooks.replayed")}</Notice> : null}
      {failed ? <Notice kind="error">{failed.message}</Notice> : null}
      {delivery ? (
        <section className="panel" aria-labelledby="delivery-title">
          <h2 id="delivery-title">{t("webhooks.delivery", { event: delivery.eventType })}</h2>
          <p>
            <code>{delivery.id}</code> · {t(`webhooks.status.${delivery.status}`)}
          </p>
          <ListTable
            rows={delivery.attemptLog}
            rowKey={(a) => String(a.attempt)}
            empty={t("webhooks.noAttempts")}
            columns={[
              { header: t("webhooks.attempt"), cell: (a) => a.attempt },
              { header: t("webhooks.when"), cell: (a) => <Moment iso={a.startedAt} /> },
              { header: t("webhooks.statusCode"), cell: (a) => a.statusCode ?? "" },
              { header: t("webhooks.duration"), cell: (a) => t("webhooks.ms", { ms: a.durationMs }) },
              { header: t("webhooks.error"), cell: (a) => a.error ?? "" },
              { header: t("webhooks.response"), cell: (a) => (a.responseBody ? <code>{a.responseBody.slice(0, 200)}</code> : "") },
            ]}
          />
          <details>
            <summary>{t("webhooks.payload")}</summary>
            <pre>{delivery.payload}</pre>
          </details>
          {delivery.status === "delivered" || delivery.status === "dead" ? (
            <ConfirmAction intent="replay" label={t("webhooks.replay")} question={t("webhooks.confirmReplay")} fields={{ deliveryId: delivery.id }} />
          ) : null}
        </section>
      ) : null}
      {page ? (
        <>
          <ListTable
            rows={page.data}
            rowKey={(d) => d.id}
            empty={t("webhooks.noDeliveries")}
            columns={[
              { header: t("webhooks.event"), cell: (d) => <Link to={`?delivery=${d.id}`}>{d.eventType}</Link> },
              { header: t("common.status"), cell: (d) => t(`webhooks.status.${d.status}`) },
              { header: t("webhooks.attempts"), cell: (d) => d.attempts },
              { header: t("webhooks.statusCode"), cell: (d) => d.lastStatusCode ?? d.lastError ?? "" },
              { header: t("common.created"), cell: (d) => <Moment iso={d.createdAt} /> },
            ]}
          />
          <CursorPager search={search} cursor={page.cursor} />
        </>
      ) : null}
    </>
  );
}
