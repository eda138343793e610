import { data, redirect, type ActionFunctionArgs, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { Form, useActionData } from "@remix-run/react";
import { useEffect, useState, type FormEvent } from "react";
import { useTranslation } from "react-i18next";
import { consoleHeaders, NO_STORE, requireConsole, requireConsoleForm } from "~/.server/console/page";
import { detailErrors, ORGANIZATION_FIELDS, organizationFields, text, zodFieldErrors } from "~/components/console/forms";
import { OrganizationFields } from "~/components/console/organization-fields";
import { Csrf, Notice, TextField } from "~/components/console/ui";
import { NEW_ORGANIZATION_DEFAULTS, OrganizationCreateSchema } from "~/schemas/organization";

export const headers = consoleHeaders;
export const meta: MetaFunction = () => [{ title: "New organization · Porta console" }];

export async function loader(args: LoaderFunctionArgs) {
  await requireConsole(args);
  return data({}, { headers: NO_STORE });
}

function createInput(form: FormData) {
  return { ...organizationFields(form), slug: text(form, "slug") };
}

export async function action(args: ActionFunctionArgs) {
  const { console, form } = await requireConsoleForm(args);
  const input = createInput(form);
  const parsed = OrganizationCreateSchema.safeParse(input);
  if (!parsed.success) return data({ values: input, errors: zodFieldErrors(parsed.error) }, { status: 422, headers: NO_STORE });
  const result = await console.admin("organizations.create", { body: parsed.data });
  if (result.ok) return redirect(`/console/organizations/${result.body.id}?created=1`);
  const errors = result.error.details ? detailErrors(result.error.details, ORGANIZATION_FIELDS) : { form: result.error.message };
  return data({ values: input, errors }, { status: result.status, headers: NO_STORE });
}

type SlugCheck = { state: "idle" } | { state: "checking" } | { state: "done"; valid: boolean; available: boolean; message?: string };

/** Asks the server (the Admin API's validateSlug) while the person types, a moment after the last key. */
function useSlugCheck(slug: string): SlugCheck {
  const [check, setCheck] = useState<SlugCheck>({ state: "idle" });
  useEffect(() => {
    if (slug.trim() === "") {
      setCheck({ state: "idle" });
      return;
    }
    const controller = new AbortController();
    setCheck({ state: "checking" });
    const timer = setTimeout(() => {
      fetch(`/console/organizations/validate-slug?slug=${encodeURIComponent(slug)}`, { signal: controller.signal })
        .then((res) => res.json() as Promise<{ valid: boolean; available: boolean; message?: string }>)
        .then((body) => setCheck({ state: "done", ...body }))
        .catch(() => undefined);
    }, 300);
    return () => {
      clearTimeout(timer);
      controller.abort();
    };
  }, [slug]);
  return check;
}

export default function NewOrganization() {
  const actionData = useActionData<typeof action>();
  const { t } = useTranslation("console");
  const [slug, setSlug] = useState(actionData?.values.slug ?? "");
  const [clientErrors, setClientErrors] = useState<Record<string, string> | null>(null);
  const check = useSlugCheck(slug);
  const errors = clientErrors ?? actionData?.errors ?? {};
  const values = actionData?.values;

  // The same schema as the server: nothing invalid leaves the browser.
  function onSubmit(event: FormEvent<HTMLFormElement>) {
    const parsed = OrganizationCreateSchema.safeParse(createInput(new FormData(event.currentTarget)));
    if (parsed.success) return setClientErrors(null);
    event.preventDefault();
    setClientErrors(zodFieldErrors(parsed.error));
  }

  const slugStatus =
    check.state === "checking"
      ? t("common.loading")
      : check.state === "done"
        ? check.valid && check.available
          ? t("orgs.slugAvailable")
          : check.valid
            ? t("orgs.slugTaken")
            : check.message
        : undefined;

  return (
    <>
      <h1>{t("orgs.new")}</h1>
      {errors.form ? <Notice kind="error">{errors.form}</Notice> : null}
      <Form method="post" reloadDocument noValidate onSubmit={onSubmit} className="panel form">
        <Csrf />
        <TextField name="name" label={t("common.name")} defaultValue={values?.name} error={errors.name} required />
        <TextField name="slug" label={t("orgs.slug")} defaultValue={values?.slug} error={errors.slug} hint={t("orgs.slugHint")} required onChange={setSlug} status={slugStatus} />
        <OrganizationFields
          values={{
            defaultLoginMethods: values?.defaultLoginMethods ?? NEW_ORGANIZATION_DEFAULTS.defaultLoginMethods,
            twoFactorPolicy: values?.twoFactorPolicy ?? NEW_ORGANIZATION_DEFAULTS.twoFactorPolicy,
            defaultLocale: values?.defaultLocale ?? NEW_ORGANIZATION_DEFAULTS.defaultLocale,
            oauth21: values?.oauth21 ?? NEW_ORGANIZATION_DEFAULTS.oauth21,
            botChallenge: values?.botChallenge ?? NEW_ORGANIZATION_DEFAULTS.botChallenge,
            botChallengeCost: values?.botChallengeCost ?? NEW_ORGANIZATION_DEFAULTS.botChallengeCost,
          }}
          errors={errors}
        />
        <button type="submit" className="button button-inline">{t("orgs.create")}</button>
      </Form>
    </>
  );
}
